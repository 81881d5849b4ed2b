// Tests of dyncheck/sim/random/uniform01.hpp.

#include "dyncheck/sim/random/uniform01.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>

#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

TEST(SimUniform01, FirstDrawsAreGolden) {
  Rng rng(2024);
  EXPECT_EQ(uniform01(rng), 0x1.0c824a7f1fdb0p-1);
  EXPECT_EQ(uniform01(rng), 0x1.2dfbbb18abd9ap-2);
  EXPECT_EQ(uniform01(rng), 0x1.f2caff4e7ba34p-3);
}

TEST(SimUniform01, ExtremeWordsMapToTheEndsOfTheGrid) {
  // A state whose first output is 0 and one whose first output is all ones are hard to make,
  // so check the formula on the words themselves.
  EXPECT_EQ(static_cast<double>(std::uint64_t{0} >> 11U) * 0x1.0p-53, 0.0);
  EXPECT_EQ(static_cast<double>(~std::uint64_t{0} >> 11U) * 0x1.0p-53, 1.0 - 0x1.0p-53);
}

RC_GTEST_PROP(SimUniform01, DrawsAreMultiplesOfTwoToMinus53InTheHalfOpenUnitInterval,
              (std::uint64_t seed)) {
  Rng rng(seed);
  for (int i = 0; i < 64; ++i) {
    const double u = uniform01(rng);
    RC_ASSERT(u >= 0.0);
    RC_ASSERT(u < 1.0);
    RC_ASSERT(std::ldexp(u, 53) == std::floor(std::ldexp(u, 53)));
  }
}

// Mean and variance of U(0,1): E U = 1/2 (Var 1/12, |U - 1/2| <= 1/2) and
// E (U - 1/2)^2 = 1/12 (Y = (U-1/2)^2 in [0, 1/4], Var Y = 1/80 - 1/144 = 1/180, |Y - 1/12| <=
// 1/6). Bernstein, delta/2 each.
RC_GTEST_PROP(SimUniform01, MeanAndVarianceAreWithinBernsteinBounds, (std::uint64_t seed)) {
  constexpr int n = 20000;
  constexpr double delta = test::kFalseFailurePerCase / 2;
  Rng rng(seed);
  double sum = 0.0;
  double sum_sq = 0.0;
  for (int i = 0; i < n; ++i) {
    const double c = uniform01(rng) - 0.5;
    sum += c;
    sum_sq += c * c;
  }
  RC_ASSERT(std::abs(sum / n) <= test::bernstein_half_width(1.0 / 12, 0.5, n, delta));
  RC_ASSERT(std::abs(sum_sq / n - 1.0 / 12) <=
            test::bernstein_half_width(1.0 / 180, 1.0 / 6, n, delta));
}

}  // namespace
}  // namespace dyncheck::sim
