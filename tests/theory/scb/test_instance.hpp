#pragma once
// Random SCB instances and initialisations for the theory tests, built in the scalar S from
// small integers (a splitmix64 stream), so that mp50 instances are stationary to 1e-49.

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/scb/instance.hpp>
#include <dyncheck/theory/scb/reduced_state.hpp>

#include <Eigen/LU>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace dyncheck::theory::scb::test {

struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  /// An integer in [-1000, 1000] / 1000, exact in every scalar type.
  template <class S>
  S symmetric_unit() {
    return S(below(2001) - 1000) / S(1000);
  }
};

/// P with entries (1 + U{0..999}) (optionally + `diagonal` on the diagonal) normalised by
/// column; mu the solution of (P - I) mu = 0, 1^T mu = 1 in S; Q-sparse q with integer weights.
template <class S>
Instance<S> random_instance(int N, int T, int Q, std::uint64_t seed, bool uniform_q = false, int diagonal = 0) {
  SplitMix rng{seed};
  Instance<S> inst{Matrix<S>(N, N), Vector<S>(N), Matrix<S>::Zero(T, N)};
  for (int j = 0; j < N; ++j) {
    for (int i = 0; i < N; ++i) inst.P(i, j) = S(1 + rng.below(1000) + (i == j ? diagonal : 0));
    inst.P.col(j) /= inst.P.col(j).sum();
  }
  Matrix<S> system = inst.P - Matrix<S>::Identity(N, N);
  system.row(N - 1).setOnes();
  Vector<S> rhs = Vector<S>::Zero(N);
  rhs[N - 1] = S(1);
  inst.mu = system.fullPivLu().solve(rhs);
  for (int k = 0; k < N; ++k) {
    std::vector<int> positions(static_cast<std::size_t>(T));
    std::iota(positions.begin(), positions.end(), 0);
    for (int i = 0; i < Q; ++i) std::swap(positions[static_cast<std::size_t>(i)], positions[static_cast<std::size_t>(i + rng.below(T - i))]);
    S total = S(0);
    for (int i = 0; i < Q; ++i) {
      const S w = uniform_q ? S(1) : S(1 + rng.below(100));
      inst.q(positions[static_cast<std::size_t>(i)], k) = w;
      total += w;
    }
    inst.q.col(k) /= total;
  }
  return inst;
}

/// V = mu 1^T + v_scale U[-1,1]^{NxN}; a_k = 1/T + (a_scale/T)(u - mean u) with u ~ U[-1,1]^T, so 1^T a_k = 1.
template <class S>
std::pair<Matrix<S>, Matrix<S>> random_start(const Instance<S>& inst, std::uint64_t seed, const S& v_scale,
                                             const S& a_scale) {
  SplitMix rng{seed};
  const auto N = inst.P.rows();
  const auto T = inst.q.rows();
  Matrix<S> V = inst.mu * Vector<S>::Ones(N).transpose();
  for (Eigen::Index i = 0; i < N; ++i)
    for (Eigen::Index j = 0; j < N; ++j) V(i, j) += v_scale * rng.symmetric_unit<S>();
  Matrix<S> A(T, N);
  for (Eigen::Index k = 0; k < N; ++k) {
    Vector<S> u(T);
    for (Eigen::Index t = 0; t < T; ++t) u[t] = rng.symmetric_unit<S>();
    u.array() -= u.mean();
    A.col(k) = (Vector<S>::Constant(T, S(1) / S(T)) + (a_scale / S(T)) * u);
  }
  return {V, A};
}

/// Moves a start onto the positive branch (specs/scb.md §4.3, sign branch): flips V - mu 1^T when
/// alpha < 0 and a_k - 1/T when beta_k < 0 (each flip keeps nu and omega_k). On the negative branch
/// beta -> -infinity, E|a|^2 grows without bound and any fixed eta eventually destabilises nu.
template <class S>
void positive_branch(const Instance<S>& inst, Matrix<S>& V, Matrix<S>& A) {
  const auto N = inst.P.rows();
  const auto T = inst.q.rows();
  const ReducedState<S> state = reduce(inst, V, A);
  const Matrix<S> base = inst.mu * Vector<S>::Ones(N).transpose();
  if (state.alpha < S(0)) V = base - (V - base);
  for (Eigen::Index k = 0; k < N; ++k) {
    if (state.beta[k] < S(0)) A.col(k) = (S(2) / S(T) - A.col(k).array()).matrix();
  }
}

}  // namespace dyncheck::theory::scb::test
