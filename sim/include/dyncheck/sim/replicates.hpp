#pragma once
// Parallel replicate runner: f(k, rng_k) for k = 0..R-1, results in index order.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/replicate_exchange.hpp"

namespace dyncheck::sim {

struct ReplicateOptions {
  std::uint64_t master_seed = 0;
  /// Usually the claim id, e.g. "calib.sgd_mean_matches_gradient_flow/eta=0.05".
  std::string stream_name;
  std::size_t replicates = 1;
  /// Worker threads; 0 = default_thread_count(). Never more than `replicates` are started.
  unsigned threads = 0;
  /// Optional; called once per finished replicate with (done, total). May be called from
  /// worker threads, but never concurrently (a mutex serializes the calls). An exception it
  /// throws counts as a failure of the replicate that just finished.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

/// The DYNCHECK_THREADS environment variable if it is a decimal integer in [1, 4096], else
/// std::thread::hardware_concurrency(), and at least 1.
unsigned default_thread_count();

namespace detail {

/// Increments this thread's run_replicates nesting depth for its lifetime.
class ReplicateDepthGuard {
 public:
  ReplicateDepthGuard() { ++replicate_depth(); }
  ~ReplicateDepthGuard() { --replicate_depth(); }
  ReplicateDepthGuard(const ReplicateDepthGuard&) = delete;
  ReplicateDepthGuard& operator=(const ReplicateDepthGuard&) = delete;
};

/// f(index(j), rng_index(j)) for j = 0..count-1 on this process's threads; results in j order.
/// `total` is the number the progress callback reports against.
template <class F, class IndexOf>
auto run_replicate_indices(const ReplicateOptions& options, std::size_t count, std::size_t total, IndexOf index_of,
                           F& f) -> std::vector<std::invoke_result_t<F&, std::size_t, Rng&>> {
  using Result = std::invoke_result_t<F&, std::size_t, Rng&>;
  const ReplicateDepthGuard depth;

  std::vector<std::optional<Result>> slots(count);
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failure{count};  // lowest failed position seen so far
  std::mutex progress_mutex;
  std::size_t done = 0;

  auto record_failure = [&](std::size_t j) {
    errors[j] = std::current_exception();
    std::size_t seen = first_failure.load();
    while (j < seen && !first_failure.compare_exchange_weak(seen, j)) {
    }
  };

  auto worker = [&] {
    for (;;) {
      const std::size_t j = next.fetch_add(1);
      if (j >= count) return;
      if (j > first_failure.load()) continue;
      try {
        const std::size_t k = index_of(j);
        Rng rng = derive_stream(options.master_seed, options.stream_name, k);
        slots[j].emplace(std::invoke(f, k, rng));
        if (options.progress) {
          const std::lock_guard lock(progress_mutex);
          options.progress(++done, total);
        }
      } catch (...) {
        record_failure(j);
      }
    }
  };

  const unsigned requested = options.threads != 0 ? options.threads : default_thread_count();
  const std::size_t workers = std::min<std::size_t>(requested, count);
  if (workers <= 1) {
    worker();
  } else {
    // jthread joins in its destructor, so a failure to start thread i still joins 0..i-1
    // before the std::system_error propagates.
    std::vector<std::jthread> pool;
    pool.reserve(workers - 1);
    for (std::size_t t = 0; t + 1 < workers; ++t) pool.emplace_back(worker);
    worker();
  }

  if (const std::size_t j = first_failure.load(); j < count) std::rethrow_exception(errors[j]);

  std::vector<Result> results;
  results.reserve(count);
  for (auto& slot : slots) results.push_back(std::move(*slot));
  return results;
}

/// The replicates split over the members of `exchange` (see replicate_exchange.hpp): member m
/// computes k = m, m + size, m + 2 size, ...; the shares are allgathered and put in index order.
template <class F>
auto run_replicates_exchanged(const ReplicateOptions& options, ReplicateExchange& exchange, F& f)
    -> std::vector<std::invoke_result_t<F&, std::size_t, Rng&>> {
  using Result = std::invoke_result_t<F&, std::size_t, Rng&>;
  const std::size_t total = options.replicates;
  const auto members = static_cast<std::size_t>(exchange.size());
  const auto member = static_cast<std::size_t>(exchange.rank());
  const auto share_size = [&](std::size_t m) { return m < total ? (total - m + members - 1) / members : 0; };

  std::string message(1, '\0');  // byte 0: 1 when this member's share failed
  try {
    const std::vector<Result> mine = run_replicate_indices(
        options, share_size(member), total, [&](std::size_t j) { return member + j * members; }, f);
    for (const Result& result : mine) ReplicateCodec<Result>::write(message, result);
  } catch (...) {
    message.assign(1, '\1');
  }
  const std::vector<std::string> shares = exchange.allgather(message);
  if (shares.size() != members) throw std::runtime_error("replicate exchange: wrong number of shares");
  for (const std::string& share : shares) {
    if (share.empty() || share[0] != '\0') {
      // Some member failed: recompute everything here, so that the exception (its type and the
      // lowest failing index) is the one a single process throws.
      return run_replicate_indices(options, total, total, [](std::size_t k) { return k; }, f);
    }
  }
  std::vector<std::optional<Result>> slots(total);
  for (std::size_t m = 0; m < members; ++m) {
    const char* in = shares[m].data() + 1;
    const char* end = shares[m].data() + shares[m].size();
    for (std::size_t j = 0; j < share_size(m); ++j) {
      Result value{};
      ReplicateCodec<Result>::read(in, end, value);
      slots[m + j * members].emplace(std::move(value));
    }
    if (in != end) throw std::runtime_error("replicate exchange: trailing bytes in a share");
  }
  std::vector<Result> results;
  results.reserve(total);
  for (auto& slot : slots) results.push_back(std::move(*slot));
  return results;
}

}  // namespace detail

/**
 * Runs `f(k, rng_k)` for \f$k = 0, \dots, R-1\f$ with `rng_k = derive_stream(master_seed,
 * stream_name, k)` and returns the results in index order. Each replicate's output depends
 * only on k and its stream, so the returned vector is identical for every thread count.
 *
 * Work distribution: an atomic next-index counter shared by `threads` workers (std::jthread);
 * with one thread, f runs on the calling thread. `f` is called concurrently from several
 * threads and must be safe to call so (it usually captures only const state).
 *
 * Errors: if some f(k) throws, the exception of the lowest failing index is rethrown after all
 * workers are joined. Once index j has failed, indices above j are skipped (they cannot change
 * the outcome); indices below j still run, so the rethrown exception does not depend on thread
 * timing.
 *
 * The result type must be move-constructible; it need not be default-constructible.
 *
 * Inside a process group (a ReplicateExchange installed on this thread, e.g. by an MPI sweep), a
 * call at nesting depth 0 whose result type has a ReplicateCodec computes only this member's
 * share and allgathers the rest; the returned vector is the same, bit for bit.
 */
template <class F>
auto run_replicates(const ReplicateOptions& options, F&& f)
    -> std::vector<std::invoke_result_t<F&, std::size_t, Rng&>> {
  // A void f fails in the return type above; use for_each_replicate for that.
  using Result = std::invoke_result_t<F&, std::size_t, Rng&>;
  if (ReplicateExchange* exchange = current_replicate_exchange();
      exchange != nullptr && exchange->size() > 1 && detail::replicate_depth() == 0) {
    if constexpr (ReplicateExchangeable<Result> && std::is_default_constructible_v<Result>) {
      return detail::run_replicates_exchanged(options, *exchange, f);
    } else {
      exchange->note_unsplit(typeid(Result));
    }
  }
  return detail::run_replicate_indices(options, options.replicates, options.replicates,
                                       [](std::size_t k) { return k; }, f);
}

/// run_replicates for an f that returns nothing (it records its results itself, e.g. into
/// slot k of a pre-sized container): same streams, threading and error semantics.
template <class F>
void for_each_replicate(const ReplicateOptions& options, F&& f) {
  run_replicates(options, [&f](std::size_t k, Rng& rng) {
    std::invoke(f, k, rng);
    return std::monostate{};
  });
}

}  // namespace dyncheck::sim
