// Tests of dyncheck/sim/random/dirichlet.hpp. Golden draws are a snapshot (change detector).

#include "dyncheck/sim/random/dirichlet.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "dyncheck/sim/random/gamma_log.hpp"
#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();

TEST(SimDirichlet, FirstDrawsAreGolden) {
  const std::vector<double> alpha = {0.5, 1.0, 2.5};
  std::vector<double> out(3);
  Rng rng(2024);
  dirichlet(rng, alpha, out);
  EXPECT_EQ(
      out, (std::vector<double>{0x1.f453bd6a980d3p-5, 0x1.3fca81effadcep-2, 0x1.40d583315910cp-1}));
  dirichlet(rng, alpha, out);
  EXPECT_EQ(
      out, (std::vector<double>{0x1.3206a951bb36ap-3, 0x1.43a2daf7cda86p-3, 0x1.62959eed9dc83p-1}));
}

// dirichlet is documented as normalized exp(gamma_log(alpha_i)) on the same engine outputs.
// exp(L_i - M) carries relative error <= (|L_i - M| + 2) eps, the sum and division K + 1 more.
TEST(SimDirichlet, EqualsNormalizedGammaLogOnTheSameStream) {
  const std::vector<double> alpha = {0.01, 0.3, 1.0, 7.5, 120.0};
  std::vector<double> out(alpha.size());
  for (const std::uint64_t seed : {1, 2, 3, 4, 5}) {
    Rng rng(seed);
    dirichlet(rng, alpha, out);
    Rng reference(seed);
    std::vector<double> logs;
    for (const double a : alpha) logs.push_back(gamma_log(reference, a));
    EXPECT_EQ(rng, reference);
    const double m = *std::max_element(logs.begin(), logs.end());
    double sum = 0.0;
    for (const double l : logs) sum += std::exp(l - m);
    for (std::size_t i = 0; i < alpha.size(); ++i) {
      const double expected = std::exp(logs[i] - m) / sum;
      const double tolerance =
          expected * (std::abs(logs[i] - m) + 2 + 2 * static_cast<double>(alpha.size())) * eps;
      EXPECT_LE(std::abs(out[i] - expected), tolerance) << "seed " << seed << " i " << i;
    }
  }
}

TEST(SimDirichlet, InvalidArgumentsThrow) {
  Rng rng(1);
  std::vector<double> out2(2);
  std::vector<double> out3(3);
  EXPECT_THROW(dirichlet(rng, std::vector<double>{1.0, 1.0}, out3), std::invalid_argument);
  std::vector<double> empty;
  EXPECT_THROW(dirichlet(rng, std::vector<double>{}, empty), std::invalid_argument);
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW(dirichlet(rng, std::vector<double>{1.0, bad}, out2), std::invalid_argument);
  }
}

TEST(SimDirichlet, TinyAlphaGivesAFiniteSimplexPoint) {
  std::vector<double> out(4);
  Rng rng(6);
  for (const double a : {1e-3, 1e-30, 1e-300}) {
    const std::vector<double> alpha(4, a);
    for (int r = 0; r < 50; ++r) {
      dirichlet(rng, alpha, out);
      double sum = 0.0;
      for (const double x : out) {
        ASSERT_TRUE(x >= 0.0 && x <= 1.0) << x;
        sum += x;
      }
      EXPECT_LE(std::abs(sum - 1.0), 4 * eps);
    }
  }
}

// Below 2e-307 every ln G_i is -inf and dirichlet returns the vertex of the exponential race,
// which is e_i with probability alpha_i / sum(alpha). Subnormal alphas 1e-320 and 3e-320
// (their double values, ratio about 3): Bernstein on the indicator of vertex 1.
TEST(SimDirichlet, SubnormalAlphasGiveVerticesWithProbabilityProportionalToAlpha) {
  const std::vector<double> alpha = {1e-320, 3e-320};
  const double p1 = alpha[1] / (alpha[0] + alpha[1]);
  constexpr int draws = 20000;
  std::vector<double> out(2);
  Rng rng(9);
  int hits = 0;
  for (int r = 0; r < draws; ++r) {
    dirichlet(rng, alpha, out);
    ASSERT_TRUE((out[0] == 1.0 && out[1] == 0.0) || (out[0] == 0.0 && out[1] == 1.0));
    hits += out[1] == 1.0 ? 1 : 0;
  }
  EXPECT_LE(std::abs(hits / double{draws} - p1),
            test::bernstein_half_width(p1 * (1 - p1), 1.0, draws, test::kFalseFailurePerCase));
}

// K in [2, 6], alpha_i log-uniform on [0.01, 100]. X_i in [0, 1] has mean mu = a_i/a0 and
// variance s2 = a_i (a0 - a_i) / (a0^2 (a0 + 1)): Bernstein on the mean (range max(mu, 1-mu)).
// Y = (X_i - mu)^2 lies in [0, 1] with mean s2 and Var Y <= E Y^2 <= E Y = s2: Bernstein on
// its mean with variance s2 and range 1. delta split over the 2K assertions.
RC_GTEST_PROP(SimDirichlet, ComponentMeansAndVariancesAreWithinBernsteinBounds,
              (std::uint64_t seed)) {
  const int k = *rc::gen::inRange(2, 7);
  std::vector<double> alpha(static_cast<std::size_t>(k));
  for (double& a : alpha) a = test::log_scale(*rc::gen::inRange(0, 1001), 1000, 0.01, 100.0);
  const double a0 = std::accumulate(alpha.begin(), alpha.end(), 0.0);
  constexpr int draws = 5000;
  const double delta = test::kFalseFailurePerCase / (2.0 * k);
  std::vector<double> mu(alpha.size());
  std::vector<double> s2(alpha.size());
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    mu[i] = alpha[i] / a0;
    s2[i] = alpha[i] * (a0 - alpha[i]) / (a0 * a0 * (a0 + 1));
  }
  std::vector<double> sums(alpha.size(), 0.0);
  std::vector<double> sq_sums(alpha.size(), 0.0);
  std::vector<double> out(alpha.size());
  Rng rng(seed);
  for (int r = 0; r < draws; ++r) {
    dirichlet(rng, alpha, out);
    double total = 0.0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      RC_ASSERT(out[i] >= 0.0 && out[i] <= 1.0);
      total += out[i];
      sums[i] += out[i];
      sq_sums[i] += (out[i] - mu[i]) * (out[i] - mu[i]);
    }
    RC_ASSERT(std::abs(total - 1.0) <= 2 * k * eps);
  }
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    RC_ASSERT(std::abs(sums[i] / draws - mu[i]) <=
              test::bernstein_half_width(s2[i], std::max(mu[i], 1 - mu[i]), draws, delta));
    RC_ASSERT(std::abs(sq_sums[i] / draws - s2[i]) <=
              test::bernstein_half_width(s2[i], 1.0, draws, delta));
  }
}

}  // namespace
}  // namespace dyncheck::sim
