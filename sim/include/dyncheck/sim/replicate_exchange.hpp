#pragma once
// Splitting the replicates of one experiment across the members of a process group (issue #16:
// "replicates within a point, so that one expensive point does not leave the other ranks idle").
//
// A group of processes runs the same claim at the same point (the same code, so every member
// reaches the same run_replicates calls in the same order with the same arguments). While a
// ReplicateExchange is installed on the calling thread, run_replicates computes only the indices
// k with k mod size() == rank(), encodes their results (ReplicateCodec) and allgathers them, so
// every member ends with all R results in index order: the same values, bit for bit, as one
// process computing them all, since replicate k depends only on k and its own stream.
//
// What is not split, and stays exactly as without an exchange:
//  - nested calls (a run_replicates inside a replicate) and calls on other threads: the exchange
//    is thread-local and applies at nesting depth 0 only;
//  - result types without a codec (they are computed by every member, which is correct, only not
//    faster); a claim opts a result struct in with a member `auto exchange_fields()` returning
//    std::tie(...) of its fields;
//  - failures: if any member's share failed, every member recomputes the whole call on its own, so
//    the exception rethrown (its type and the lowest failing index) is the one a single process
//    would throw.
// The encoding copies the bytes of arithmetic values (no conversion), so the members must share
// the byte order and the floating-point format: an MPI job across x86-64 hosts does.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <Eigen/Core>

namespace dyncheck::sim {

/// One collective operation over a fixed group of processes.
class ReplicateExchange {
 public:
  virtual ~ReplicateExchange() = default;
  virtual int size() const = 0;
  virtual int rank() const = 0;
  /// Collective: every member passes its bytes; every member gets all members' bytes in rank order.
  virtual std::vector<std::string> allgather(const std::string& mine) = 0;

  /// Calls at depth 0 that every member computed whole because their result type has no codec
  /// (correct, only not faster), and those result types (demangled, each once, first-seen order):
  /// the sweep prints them, so that a claim worth splitting can be opted in.
  std::size_t unsplit_calls() const { return unsplit_calls_; }
  const std::vector<std::string>& unsplit_types() const { return unsplit_types_; }
  void note_unsplit(const std::type_info& result_type);

 private:
  std::size_t unsplit_calls_ = 0;
  std::vector<std::string> unsplit_types_;
};

/// The exchange installed on this thread, or nullptr.
ReplicateExchange* current_replicate_exchange();

/// Installs `exchange` on the calling thread for its lifetime (restores the previous one after).
class ScopedReplicateExchange {
 public:
  explicit ScopedReplicateExchange(ReplicateExchange* exchange);
  ~ScopedReplicateExchange();
  ScopedReplicateExchange(const ScopedReplicateExchange&) = delete;
  ScopedReplicateExchange& operator=(const ScopedReplicateExchange&) = delete;

 private:
  ReplicateExchange* previous_;
};

namespace detail {
/// Nesting depth of run_replicates on this thread (the exchange applies at depth 0 only).
int& replicate_depth();
}  // namespace detail

/// Byte encoding of a replicate's result. Specialised below for arithmetic types, dense Eigen
/// matrices, std::vector, std::array, std::pair and structs with `exchange_fields()`.
template <class T, class Enable = void>
struct ReplicateCodec;

template <class T>
concept ReplicateExchangeable = requires(std::string& out, const T& value, const char*& in, const char* end,
                                         T& target) {
  ReplicateCodec<T>::write(out, value);
  ReplicateCodec<T>::read(in, end, target);
};

namespace detail {
inline void write_bytes(std::string& out, const void* data, std::size_t bytes) {
  out.append(static_cast<const char*>(data), bytes);
}
inline void read_bytes(const char*& in, const char* end, void* data, std::size_t bytes) {
  if (static_cast<std::size_t>(end - in) < bytes) throw std::runtime_error("replicate exchange: truncated message");
  std::memcpy(data, in, bytes);
  in += bytes;
}
}  // namespace detail

template <class T>
struct ReplicateCodec<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  static void write(std::string& out, const T& value) { detail::write_bytes(out, &value, sizeof(T)); }
  static void read(const char*& in, const char* end, T& value) { detail::read_bytes(in, end, &value, sizeof(T)); }
};

template <class Scalar, int Rows, int Cols, int Options, int MaxRows, int MaxCols>
struct ReplicateCodec<Eigen::Matrix<Scalar, Rows, Cols, Options, MaxRows, MaxCols>,
                     std::enable_if_t<std::is_arithmetic_v<Scalar>>> {
  using Matrix = Eigen::Matrix<Scalar, Rows, Cols, Options, MaxRows, MaxCols>;
  static void write(std::string& out, const Matrix& m) {
    const std::int64_t shape[2] = {static_cast<std::int64_t>(m.rows()), static_cast<std::int64_t>(m.cols())};
    detail::write_bytes(out, shape, sizeof shape);
    detail::write_bytes(out, m.data(), sizeof(Scalar) * static_cast<std::size_t>(m.size()));
  }
  static void read(const char*& in, const char* end, Matrix& m) {
    std::int64_t shape[2] = {0, 0};
    detail::read_bytes(in, end, shape, sizeof shape);
    if (shape[0] < 0 || shape[1] < 0) throw std::runtime_error("replicate exchange: bad matrix shape");
    m.resize(static_cast<Eigen::Index>(shape[0]), static_cast<Eigen::Index>(shape[1]));
    detail::read_bytes(in, end, m.data(), sizeof(Scalar) * static_cast<std::size_t>(m.size()));
  }
};

template <class T>
struct ReplicateCodec<std::vector<T>, std::enable_if_t<ReplicateExchangeable<T>>> {
  static void write(std::string& out, const std::vector<T>& v) {
    const std::uint64_t n = v.size();
    detail::write_bytes(out, &n, sizeof n);
    for (const T& x : v) ReplicateCodec<T>::write(out, x);
  }
  static void read(const char*& in, const char* end, std::vector<T>& v) {
    std::uint64_t n = 0;
    detail::read_bytes(in, end, &n, sizeof n);
    if (n > static_cast<std::uint64_t>(end - in)) throw std::runtime_error("replicate exchange: bad vector length");
    v.assign(static_cast<std::size_t>(n), T{});
    for (T& x : v) ReplicateCodec<T>::read(in, end, x);
  }
};

template <class T, std::size_t N>
struct ReplicateCodec<std::array<T, N>, std::enable_if_t<ReplicateExchangeable<T>>> {
  static void write(std::string& out, const std::array<T, N>& a) {
    for (const T& x : a) ReplicateCodec<T>::write(out, x);
  }
  static void read(const char*& in, const char* end, std::array<T, N>& a) {
    for (T& x : a) ReplicateCodec<T>::read(in, end, x);
  }
};

template <class A, class B>
struct ReplicateCodec<std::pair<A, B>, std::enable_if_t<ReplicateExchangeable<A> && ReplicateExchangeable<B>>> {
  static void write(std::string& out, const std::pair<A, B>& p) {
    ReplicateCodec<A>::write(out, p.first);
    ReplicateCodec<B>::write(out, p.second);
  }
  static void read(const char*& in, const char* end, std::pair<A, B>& p) {
    ReplicateCodec<A>::read(in, end, p.first);
    ReplicateCodec<B>::read(in, end, p.second);
  }
};

namespace detail {
template <class Tuple, std::size_t... I>
constexpr bool all_exchangeable(std::index_sequence<I...>) {
  return (ReplicateExchangeable<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>> && ...);
}
template <class T>
concept HasExchangeFields = requires(T& t) { t.exchange_fields(); } &&
                            all_exchangeable<decltype(std::declval<T&>().exchange_fields())>(
                                std::make_index_sequence<
                                    std::tuple_size_v<decltype(std::declval<T&>().exchange_fields())>>{});
}  // namespace detail

/// A struct opts in with `auto exchange_fields() { return std::tie(a, b, c); }` (every field that
/// the claim reads; the struct must be default-constructible).
template <class T>
struct ReplicateCodec<T, std::enable_if_t<detail::HasExchangeFields<T> && std::is_default_constructible_v<T>>> {
  static void write(std::string& out, const T& value) {
    auto fields = const_cast<T&>(value).exchange_fields();  // the tie only reads here
    std::apply([&out](auto&... f) { (ReplicateCodec<std::remove_cvref_t<decltype(f)>>::write(out, f), ...); }, fields);
  }
  static void read(const char*& in, const char* end, T& value) {
    auto fields = value.exchange_fields();
    std::apply([&](auto&... f) { (ReplicateCodec<std::remove_cvref_t<decltype(f)>>::read(in, end, f), ...); },
               fields);
  }
};

}  // namespace dyncheck::sim
