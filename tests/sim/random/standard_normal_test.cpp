// Tests of dyncheck/sim/random/standard_normal.hpp; golden pairs from reference_values.py.

#include "dyncheck/sim/random/standard_normal.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

TEST(SimStandardNormal, PolarPairsAreGolden) {
  Rng rng(2024);
  const double expected[3][2] = {{0x1.c78f7d71d5515p-3, -0x1.de08c64c523b8p+0},
                                 {-0x1.8282e1f8e7c92p+0, -0x1.d84efde625467p-2},
                                 {0x1.367214e7fb1d6p-1, 0x1.81a1ba3ab4d36p-1}};
  for (const auto& pair : expected) {
    const detail::NormalPair drawn = detail::standard_normal_pair(rng);
    EXPECT_EQ(drawn.first, pair[0]);
    EXPECT_EQ(drawn.second, pair[1]);
  }
}

TEST(SimStandardNormal, FunctionReturnsTheFirstValueOfEachPair) {
  Rng a(2024);
  Rng b(2024);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(standard_normal(a), detail::standard_normal_pair(b).first);
    EXPECT_EQ(a, b);
  }
}

TEST(SimStandardNormal, SamplerReturnsBothValuesOfEachPairInOrder) {
  Rng a(99);
  Rng b(99);
  NormalSampler sampler;
  for (int i = 0; i < 10; ++i) {
    const detail::NormalPair pair = detail::standard_normal_pair(b);
    EXPECT_EQ(sampler(a), pair.first);
    EXPECT_EQ(sampler(a), pair.second);
  }
  EXPECT_EQ(a, b);
}

TEST(SimStandardNormal, SamplerResetDropsTheCachedValue) {
  Rng a(5);
  Rng b(5);
  NormalSampler sampler;
  sampler(a);
  sampler.reset();
  detail::standard_normal_pair(b);
  EXPECT_EQ(sampler(a), detail::standard_normal_pair(b).first);
}

// Mean: the mean of n iid N(0,1) is exactly N(0, 1/n), so |mean| <= z/sqrt(n) with the Mills
// bound z = sqrt(2 ln(3/delta)) at delta/3. Second moment: sum Z_i^2 ~ chi2_n = 2 Gamma(n/2),
// bounded by test::gamma_sum_interval at delta/3. Pair correlation: E[Z1 Z2] = 0 with
// Var(Z1 Z2) = 1 (independent), median of means at delta/3. Uses NormalSampler so both values
// of every pair are exercised.
RC_GTEST_PROP(SimStandardNormal, MomentsAreWithinDerivedBounds, (std::uint64_t seed)) {
  constexpr int n = 20000;  // even: n/2 whole pairs
  constexpr double delta = test::kFalseFailurePerCase / 3;
  Rng rng(seed);
  NormalSampler sampler;
  double sum = 0.0;
  double sum_sq = 0.0;
  std::vector<double> products;
  products.reserve(n / 2);
  for (int i = 0; i < n / 2; ++i) {
    const double z1 = sampler(rng);
    const double z2 = sampler(rng);
    sum += z1 + z2;
    sum_sq += z1 * z1 + z2 * z2;
    products.push_back(z1 * z2);
  }
  RC_ASSERT(std::abs(sum / n) <= test::gaussian_two_sided_quantile_bound(delta) / std::sqrt(n));
  const test::Interval half_chi2 = test::gamma_sum_interval(n / 2.0, delta);
  RC_ASSERT(half_chi2.contains(sum_sq / 2));
  const auto plan = test::median_of_means_plan(1.0, products.size(), delta);
  RC_ASSERT(std::abs(test::median_of_means(products, plan.blocks)) <= plan.half_width);
}

// Whole-distribution check: Kolmogorov distance to Phi within the DKW bound (Massart
// constant) at the per-case rate, for a few fixed seeds.
TEST(SimStandardNormal, EmpiricalCdfIsWithinTheDkwBand) {
  constexpr int n = 20000;
  const boost::math::normal_distribution<double> phi;
  for (const std::uint64_t seed : {1, 2, 3}) {
    Rng rng(seed);
    std::vector<double> sample(n);
    for (double& z : sample) z = standard_normal(rng);
    const double distance =
        test::kolmogorov_distance(sample, [&](double z) { return cdf(phi, z); });
    EXPECT_LE(distance, test::dkw_half_width(n, test::kFalseFailurePerCase)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace dyncheck::sim
