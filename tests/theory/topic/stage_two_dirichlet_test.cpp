// theory/topic/stage_two_dirichlet.hpp: the Beta Gauss rule, the second-order series at T = 2 (where the inner
// expectation is deterministic) and the defaults' minimiser against an independent numpy implementation.

#include "dyncheck/theory/topic/stage_two_dirichlet.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dyncheck::theory::topic {
namespace {

// E x^k = (a)_k / (a + b)_k, exact for k <= 2K - 1; (0.1, 0.9) has a + b = 1, where the Jacobi recurrence's
// k = 1 coefficient needs its analytic cancellation (T alpha = 1 at the defaults).
TEST(TheoryTopicStageTwoDirichlet, BetaRuleIntegratesPolynomialsExactly) {
  const int K = 8;
  for (const auto& [a, b] : {std::pair{0.1, 0.9}, std::pair{0.5, 2.7}, std::pair{2.0, 3.0}, std::pair{0.05, 0.55}}) {
    const BetaRule rule = beta_gauss_rule(a, b, K);
    double exact = 1;
    for (int k = 0; k <= 2 * K - 1; ++k) {
      double sum = 0;
      for (std::size_t i = 0; i < rule.x.size(); ++i) sum += rule.w[i] * std::pow(rule.x[i], k);
      EXPECT_NEAR(sum, exact, 1e-12 * exact) << "a = " << a << ", b = " << b << ", k = " << k;
      exact *= (a + k) / (a + b + k);
    }
  }
}

// T = 2: phi = 1, so the log-sum-exp is log(e^(Delta E x/Z) + e^y) exactly; the series value differs from it by the
// dropped r(u) in [0, u^3/3] at each node.
TEST(TheoryTopicStageTwoDirichlet, SeriesAtTwoTopicsWithinItsRemainder) {
  DirichletCeSetting s;
  s.T = 2;
  s.v = 3;
  s.alpha = 0.3;
  s.p_c = 0.15;
  s.p_r = 0.2;
  s.Delta = 1.2;
  const int K = 48;
  const DirichletCrossEntropy series(s, K);
  const BetaRule rule = beta_gauss_rule(s.alpha, s.alpha, K);
  for (const double lnE : {-1.0, 0.0, 1.5, 3.0}) {
    const double E = std::exp(lnE);
    double exact = 0, slack = 0;
    for (std::size_t i = 0; i < rule.x.size(); ++i) {
      const double x = rule.x[i], Z = 1 + (E - 1) * x, y = s.Delta * (1 - x) / Z, a = std::exp(s.Delta * E * x / Z);
      const double weight = s.p_c * x + s.p_r / 2;
      const double lse = std::log(3.0) + std::log(a + std::exp(y));
      const double poly = -s.Delta * (s.p_c * E * x * x / Z + (s.p_r / 2) * (E * x * x + (1 - x) * (1 - x)) / Z);
      exact += rule.w[i] * (weight * lse + poly);
      const double u = (std::exp(y) - 1 - y) / (a + 1 + y);
      slack += rule.w[i] * weight * u * u * u / 3;
    }
    exact *= 2;
    slack *= 2;
    const double value = series.at(lnE).loss;
    EXPECT_LE(value, exact + 1e-13) << lnE;  // r(u) >= 0: the series is below the exact value
    EXPECT_GE(value, exact - slack - 1e-13) << lnE;
  }
}

// Defaults (T = v = 10, Dir(0.1), p_c = p_r = 0.1, Delta = 1): s* = log E* = 3.8675046 from an independent numpy/scipy
// implementation of the same reduction (scipy.special.roots_jacobi, 80 and 160 nodes agree to 2e-10, root by brentq on a
// central difference with h = 1e-4); plain Monte Carlo over 2e6 theta gave 3.8689 +- 7.2e-4 (session 15).
TEST(TheoryTopicStageTwoDirichlet, DefaultsMinimiserMatchesNumpy) {
  const DirichletCrossEntropy theory(DirichletCeSetting{}, 128);
  const double s = theory.minimiser(-4, 12, 1e-4, 60);
  EXPECT_NEAR(s, 3.8675046, 2e-6);
  EXPECT_NEAR(std::exp(s), 47.8229, 2e-4);
  EXPECT_LT(theory.at(s).dropped_slope_bound, 1e-6);
}

}  // namespace
}  // namespace dyncheck::theory::topic
