// Tests of theory/topic/stage_two.hpp: the spec's reference values (specs/topic.md §6, §9 C5, C6)
// and the numeric minimiser against the closed-form laws.

#include "dyncheck/theory/topic/stage_two.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dyncheck::theory::topic {
namespace {

TEST(TheoryTopicStageTwo, LandscapeReferenceValues) {
  StageTwoSetting<double> s;
  s.c_s = 0.1;
  const auto theta = subset_theta<double>(10, 3);
  EXPECT_NEAR(stage_two_loss(s, theta, {1.0, 0, 0}), 0.966667, 1e-6);
  EXPECT_NEAR(stage_two_loss(s, theta, {11.0, 0, 0}), 0.961538, 1e-6);
}

TEST(TheoryTopicStageTwo, PriorFreeLawIsTheNumericMinimiser) {
  StageTwoSetting<mp50> s;
  s.T = 20;
  s.v = 5;
  s.p_c = mp50("0.2");
  s.p_r = mp50("0.05");
  s.c_s = mp50(1) / 5;
  const mp50 E = stage_two_minimiser<mp50>(s, {subset_theta<mp50>(20, 4)});
  EXPECT_LT(to_double(abs(E - 81)), 1e-25);
  EXPECT_EQ(to_double(prior_free_law<mp50>(20, s.p_c, s.p_r)), 81.0);
}

TEST(TheoryTopicStageTwo, SubsetLawForGeneralC) {
  for (const auto& [tau, pc, pr, c, expected] :
       std::vector<std::tuple<int, double, double, double, double>>{{5, 0.1, 0.1, 0.3, 2.428571}, {2, 0.3, 0.1, 0.5, 1.461538},
                                                                    {3, 0.1, 0.1, 1.0, 1.25}}) {
    EXPECT_NEAR(subset_law<double>(10, 10, tau, pc, pr, c), expected, 1e-6);
    StageTwoSetting<double> s;
    s.p_c = pc;
    s.p_r = pr;
    s.c_s = c;
    const double E = stage_two_minimiser<double>(s, {subset_theta<double>(10, tau)});
    EXPECT_NEAR(E, subset_law<double>(10, 10, tau, pc, pr, c), 1e-7 * E);
  }
}

TEST(TheoryTopicStageTwo, AllKeysStageTwoTableValue) {
  // (P), W^V at the (P) lambda -> 0 optimum, tau = 3: E* = 7.2515 at delta* = 0.352 (spec §6 table); here
  // only E at the table's delta, one coordinate of the 3-d minimiser.
  StageTwoSetting<double> s;
  s.keys = StageTwoKeys::all;
  const double a = 1 - 0.15 + 0.015, q = 0.15 * 0.8;
  const double kappa = 1 / ((1 - q) * (1 - q) + 100 * q * q);
  const double y = (kappa * (1 - q) - 1 / a) / 100;
  s.c_s = 1 / (a * 10) + y;
  s.c_d = y;
  s.c_M = q * kappa;
  const double E = stage_two_minimiser<double>(s, {subset_theta<double>(10, 3)}, 0.352, 0.0);
  EXPECT_NEAR(E, 7.2515, 0.01);
}

}  // namespace
}  // namespace dyncheck::theory::topic

namespace dyncheck::theory::topic {
namespace {

TEST(TheoryTopicStageTwo, LinearTimeSquaredLossEqualsThePerPairSum) {
  // The O(T) squared loss against the O(T^2) definition, written out here (all keys (P), a Dirichlet-like theta).
  StageTwoSetting<double> s;
  s.T = 4;
  s.v = 3;
  s.keys = StageTwoKeys::all;
  s.c_s = 0.3;
  s.c_d = -0.02;
  s.c_M = 0.07;
  const std::vector<double> theta{0.5, 0.3, 0.2, 0.0};
  const StageTwoAttention<double> att{2.5, 0.4, -0.3};
  const double a = 1 - s.p_m + s.p_m * s.p_c, r = s.p_m * s.p_r, q = s.p_m * (1 - s.p_c - s.p_r);
  std::vector<double> nu(4);
  for (int t = 0; t < 4; ++t) nu[t] = a * theta[t] + r / 4;
  double total = 0;
  auto loss = [&](const std::vector<double>& m, double A_M, int target) {
    const double kappa = s.c_d * (1 - A_M) + s.c_M * A_M, Delta = s.c_s - s.c_d;
    double sum = 0;
    for (const double mt : m) sum += (kappa + Delta * mt) * (kappa + Delta * mt);
    return 3 * sum - 2 * (kappa + Delta * m[target]) + 1;
  };
  for (int target = 0; target < 4; ++target) {
    double term = 0;
    for (int b = 0; b < 4; ++b) {
      double Z = q * std::exp(att.delta);
      for (int t = 0; t < 4; ++t) Z += nu[t] * (t == b ? att.E : 1.0);
      std::vector<double> m(4);
      for (int t = 0; t < 4; ++t) m[t] = nu[t] * (t == b ? att.E : 1.0) / Z;
      const double l = loss(m, q * std::exp(att.delta) / Z, target);
      term += s.p_r / 4 * l + (b == target ? s.p_c * l : 0.0);
    }
    double Zm = q * std::exp(att.delta_M);
    for (int t = 0; t < 4; ++t) Zm += nu[t];
    std::vector<double> m(4);
    for (int t = 0; t < 4; ++t) m[t] = nu[t] / Zm;
    term += (1 - s.p_c - s.p_r) * loss(m, q * std::exp(att.delta_M) / Zm, target);
    total += theta[target] * term;
  }
  EXPECT_NEAR(stage_two_loss(s, theta, att), total, 1e-14);
}

}  // namespace
}  // namespace dyncheck::theory::topic

namespace dyncheck::theory::topic {
namespace {

TEST(TheoryTopicStageTwo, FiniteNSubsetLossReferenceValuesAndLimit) {
  // Spec §6: N ~ U[100,150], tau = 3, c = 1/v: the finite-N minimiser is 11.6667 (N -> inf: 11).
  auto L = [](double E) { return finite_n_subset_loss<double>(10, 10, 3, 0.15, 0.1, 0.1, 0.1, E, 100, 150); };
  const double h = 1e-3;
  auto slope = [&](double E) { return L(E * (1 + h)) - L(E * (1 - h)); };
  EXPECT_LT(slope(11.5), 0.0);
  EXPECT_GT(slope(11.85), 0.0);
  EXPECT_NEAR(infinite_n_subset_loss<double>(10, 10, 3, 0.1, 0.1, 0.1, 11.0), 0.961538, 1e-6);
  // Very long documents approach the N -> infinity loss; the correction is O(1/N) (tau = 2 keeps the sum O(N^2)).
  const double far = finite_n_subset_loss<double>(10, 10, 2, 0.15, 0.1, 0.1, 0.1, 6.0, 4000, 4000);
  const double inf = infinite_n_subset_loss<double>(10, 10, 2, 0.1, 0.1, 0.1, 6.0);
  EXPECT_NEAR(far, inf, 5e-5);
  EXPECT_GT(far, inf);
}

TEST(TheoryTopicStageTwo, CrossEntropyFiniteNSumTendsToTheInfiniteNLoss) {
  // tau = 2: the exact finite-N CE sum at long documents approaches the N -> infinity CE loss (O(1/N) apart), and at
  // N = 2 (one key at most) it is a two-point computation by hand.
  const double c = 5, E = 3;
  const double infinite = infinite_n_subset_loss<double>(10, 10, 2, 0.1, 0.1, c, E, RandomToken::word, StageTwoLoss::cross_entropy);
  const double near = finite_n_subset_loss<double>(10, 10, 2, 0.15, 0.1, 0.1, c, E, 2000, 2000, RandomToken::word,
                                                   StageTwoLoss::cross_entropy);
  const double far = finite_n_subset_loss<double>(10, 10, 2, 0.15, 0.1, 0.1, c, E, 200, 200, RandomToken::word,
                                                  StageTwoLoss::cross_entropy);
  EXPECT_LT(std::abs(near - infinite), std::abs(far - infinite) / 5);
  EXPECT_LT(std::abs(near - infinite), 2e-3);
  // N = 2, tau = 1: U ~ Bin(1, 0.85); U = 0 gives log V; U = 1 puts all mass on the target's topic: every query
  // has m_1 = 1, loss -c + log(v (T - 1 + e^c)).
  const double two = finite_n_subset_loss<double>(10, 10, 1, 0.15, 0.1, 0.1, c, E, 2, 2, RandomToken::word,
                                                  StageTwoLoss::cross_entropy);
  const double by_hand = 0.15 * std::log(100.0) + 0.85 * (-c + std::log(10 * (9 + std::exp(c))));
  EXPECT_NEAR(two, by_hand, 1e-12);
}

}  // namespace
}  // namespace dyncheck::theory::topic
