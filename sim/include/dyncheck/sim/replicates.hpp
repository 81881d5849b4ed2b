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
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "dyncheck/sim/random/rng.hpp"

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
 */
template <class F>
auto run_replicates(const ReplicateOptions& options, F&& f)
    -> std::vector<std::invoke_result_t<F&, std::size_t, Rng&>> {
  // A void f fails in the return type above; use for_each_replicate for that.
  using Result = std::invoke_result_t<F&, std::size_t, Rng&>;

  const std::size_t total = options.replicates;
  std::vector<std::optional<Result>> slots(total);
  std::vector<std::exception_ptr> errors(total);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failure{total};  // lowest failed index seen so far
  std::mutex progress_mutex;
  std::size_t done = 0;

  auto record_failure = [&](std::size_t k) {
    errors[k] = std::current_exception();
    std::size_t seen = first_failure.load();
    while (k < seen && !first_failure.compare_exchange_weak(seen, k)) {
    }
  };

  auto worker = [&] {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= total) return;
      if (k > first_failure.load()) continue;
      try {
        Rng rng = derive_stream(options.master_seed, options.stream_name, k);
        slots[k].emplace(std::invoke(f, k, rng));
        if (options.progress) {
          const std::lock_guard lock(progress_mutex);
          options.progress(++done, total);
        }
      } catch (...) {
        record_failure(k);
      }
    }
  };

  const unsigned requested = options.threads != 0 ? options.threads : default_thread_count();
  const std::size_t workers = std::min<std::size_t>(requested, total);
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

  if (const std::size_t j = first_failure.load(); j < total) std::rethrow_exception(errors[j]);

  std::vector<Result> results;
  results.reserve(total);
  for (auto& slot : slots) results.push_back(std::move(*slot));
  return results;
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
