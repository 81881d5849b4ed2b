// Tests of dyncheck/sim/random/uniform_open01.hpp.

#include "dyncheck/sim/random/uniform_open01.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>

#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

TEST(SimUniformOpen01, FirstDrawsAreGolden) {
  Rng rng(2024);
  EXPECT_EQ(uniform_open01(rng), 0x1.0c824a7f1fdb1p-1);
  EXPECT_EQ(uniform_open01(rng), 0x1.2dfbbb18abd9ap-2);
  EXPECT_EQ(uniform_open01(rng), 0x1.f2caff4e7ba34p-3);
}

TEST(SimUniformOpen01, ExtremeWordsStayInsideTheOpenInterval) {
  auto map = [](std::uint64_t word) {
    return static_cast<double>(((word >> 12U) << 1U) | 1U) * 0x1.0p-53;
  };
  EXPECT_EQ(map(0), 0x1.0p-53);
  EXPECT_EQ(map(~std::uint64_t{0}), 1.0 - 0x1.0p-53);
  EXPECT_TRUE(std::isfinite(std::log(map(0))));
}

RC_GTEST_PROP(SimUniformOpen01, DrawsAreOddMultiplesOfTwoToMinus53InsideTheOpenInterval,
              (std::uint64_t seed)) {
  Rng rng(seed);
  for (int i = 0; i < 64; ++i) {
    const double u = uniform_open01(rng);
    RC_ASSERT(u > 0.0);
    RC_ASSERT(u < 1.0);
    const double scaled = std::ldexp(u, 53);
    RC_ASSERT(scaled == std::floor(scaled));
    RC_ASSERT(std::fmod(scaled, 2.0) == 1.0);
  }
}

// Same derivation as for uniform01 (the grid is symmetric about 1/2, so the moments are those
// of U(0,1) up to 2^-106, far below the bounds).
RC_GTEST_PROP(SimUniformOpen01, MeanAndVarianceAreWithinBernsteinBounds, (std::uint64_t seed)) {
  constexpr int n = 20000;
  constexpr double delta = test::kFalseFailurePerCase / 2;
  Rng rng(seed);
  double sum = 0.0;
  double sum_sq = 0.0;
  for (int i = 0; i < n; ++i) {
    const double c = uniform_open01(rng) - 0.5;
    sum += c;
    sum_sq += c * c;
  }
  RC_ASSERT(std::abs(sum / n) <= test::bernstein_half_width(1.0 / 12, 0.5, n, delta));
  RC_ASSERT(std::abs(sum_sq / n - 1.0 / 12) <=
            test::bernstein_half_width(1.0 / 180, 1.0 / 6, n, delta));
}

}  // namespace
}  // namespace dyncheck::sim
