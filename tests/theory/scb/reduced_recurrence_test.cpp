#include "dyncheck/theory/scb/reduced_recurrence.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/population_loss.hpp"
#include "dyncheck/theory/scb/population_step.hpp"
#include "dyncheck/theory/scb/reduced_state.hpp"
#include "test_instance.hpp"

namespace dyncheck::theory::scb {
namespace {

template <class S>
double max_difference(const ReducedState<S>& a, const ReducedState<S>& b) {
  using std::abs;
  auto rel = [](const S& x, const S& y) { return to_double(abs(x - y) / (S(1) + abs(y))); };
  double worst = std::max(rel(a.alpha, b.alpha), rel(a.nu, b.nu));
  for (Eigen::Index k = 0; k < a.m.size(); ++k) {
    worst = std::max({worst, rel(a.m[k], b.m[k]), rel(a.beta[k], b.beta[k]), rel(a.omega[k], b.omega[k])});
  }
  return worst;
}

/// Full-matrix stage-1 population GD (population_step.hpp) against the reduced recurrence of
/// §4.2, over `steps` steps, both in S; returns the largest difference, relative to 1 + |value|.
/// Returns max difference * min(1, K_P / 0.01): alpha = <V, P>_Sigma / K_P carries a rounding error of
/// order eps / K_P, so near-uniform P (K_P < 0.01) is allowed proportionally more.
template <class S>
double full_vs_reduced(int N, int T, int Q, std::uint64_t seed, const S& eta, const S& eta_A_K_P, int steps,
                       const S& v_scale, const S& a_scale) {
  const Instance<S> inst = test::random_instance<S>(N, T, Q, seed);
  const Constants<S> c = constants(inst);
  const S eta_A = eta_A_K_P / c.K_P;
  // alpha = <dV, P>_Sigma / K_P and nu <= <dV, dV>_Sigma: a perturbation dV of size v_scale sqrt(K_P)
  // keeps eta_A K_VV = O(eta_A K_P v_scale^2), inside the stable range, whatever K_P is.
  using std::sqrt;
  auto [V, A] = test::random_start(inst, seed + 1, S(v_scale * sqrt(c.K_P)), a_scale);
  test::positive_branch(inst, V, A);  // §4.3: property tests start with u_0 + 1/T > 0
  ReducedState<S> reduced = reduce(inst, V, A);
  double worst = 0;
  for (int t = 0; t < steps; ++t) {
    stage1_population_step(inst, V, A, eta, eta_A);
    reduced = reduced_gd_step(inst, c, reduced, eta, eta_A);
    worst = std::max(worst, max_difference(reduce(inst, V, A), reduced));
  }
  return worst * std::min(1.0, to_double(c.K_P) / 0.01);
}

// §8 claim 2: N in [2,6], T in [5,60], Q, eta in [0.05,0.6], eta_A K_P in [0.05,0.8], random start
// with 1^T a = 1; 1e-12 in double over 300 steps.
RC_GTEST_PROP(ReducedRecurrence, EqualsFullMatrixGradientDescentInDouble, ()) {
  const int N = *rc::gen::inRange(2, 7);
  const int T = *rc::gen::inRange(5, 61);
  const int Q = *rc::gen::inRange(1, std::max(2, T / 4 + 1));
  const double eta = *rc::gen::inRange(5, 61) / 100.0;
  const double eta_A_K_P = *rc::gen::inRange(5, 81) / 100.0;
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_ASSERT(full_vs_reduced<double>(N, T, Q, seed, eta, eta_A_K_P, 300, 0.3, 0.5) < 1e-12);
}

RC_GTEST_PROP(ReducedRecurrence, EqualsFullMatrixGradientDescentInFiftyDigits, ()) {
  const int N = *rc::gen::inRange(2, 5);
  const int T = *rc::gen::inRange(5, 21);
  const int Q = *rc::gen::inRange(1, std::max(2, T / 4 + 1));
  const mp50 eta = mp50(*rc::gen::inRange(5, 61)) / 100;
  const mp50 eta_A_K_P = mp50(*rc::gen::inRange(5, 81)) / 100;
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_ASSERT(full_vs_reduced<mp50>(N, T, Q, seed, eta, eta_A_K_P, 50, mp50("0.3"), mp50("0.5")) < 1e-30);
}

// §4.2: L - L* from the reduced state equals the closed-form loss minus L_irr/2.
RC_GTEST_PROP(ExcessLoss, EqualsClosedFormLossMinusIrreducible, ()) {
  using S = mp50;
  const int N = *rc::gen::inRange(2, 6);
  const int T = *rc::gen::inRange(3, 30);
  const int Q = *rc::gen::inRange(1, T);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const Instance<S> inst = test::random_instance<S>(N, T, Q, seed);
  const Constants<S> c = constants(inst);
  const auto [V, A] = test::random_start(inst, seed + 7, S(1), S(3));
  const S direct = population_loss(inst, V, A) - c.L_irr / 2;
  const S reduced = excess_loss(inst, c, reduce(inst, V, A));
  RC_ASSERT(to_double(abs(direct - reduced)) < 1e-45);
}

TEST(ReducedState, CorrelationYIsMeanOverlapMinusUniform) {
  using S = mp50;
  const Instance<S> inst = test::random_instance<S>(4, 12, 3, 11);
  const Constants<S> c = constants(inst);
  const auto [V, A] = test::random_start(inst, 12, S(1), S(3));
  S overlap = S(0);
  for (Eigen::Index k = 0; k < 4; ++k) overlap += inst.mu[k] * A.col(k).dot(inst.q.col(k));
  EXPECT_LT(to_double(abs(correlation_y(inst, c, reduce(inst, V, A)) - (overlap - S(1) / S(12)))), 1e-45);
}

TEST(ReducedState, GroundTruthIsTheFixedPoint) {
  using S = mp50;
  const Instance<S> inst = test::random_instance<S>(3, 10, 2, 5);
  const Constants<S> c = constants(inst);
  const ReducedState<S> truth = reduce(inst, inst.P, inst.q);
  EXPECT_LT(to_double(abs(truth.alpha - 1)), 1e-45);
  EXPECT_LT(to_double(abs(truth.nu)), 1e-45);
  EXPECT_LT(to_double((truth.beta.array() - 1).abs().maxCoeff()), 1e-45);
  EXPECT_LT(to_double(excess_loss(inst, c, truth)), 1e-45);
  const ReducedState<S> next = reduced_gd_step(inst, c, truth, S("0.5"), S("0.5"));
  EXPECT_LT(to_double(abs(next.alpha - 1) + (next.beta.array() - 1).abs().maxCoeff()), 1e-45);
}

}  // namespace
}  // namespace dyncheck::theory::scb
