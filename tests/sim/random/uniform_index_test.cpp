// Tests of dyncheck/sim/random/uniform_index.hpp.

#include "dyncheck/sim/random/uniform_index.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

TEST(SimUniformIndex, FirstDrawsAreGolden) {
  Rng small(2024);
  for (const std::uint64_t expected : {5, 2, 2, 4, 7, 8, 9, 6}) {
    EXPECT_EQ(uniform_index(small, 10), expected);
  }
  Rng large(2024);
  constexpr std::uint64_t n = std::uint64_t{3} << 62U;
  for (const std::uint64_t expected : {7255540822122308124ULL, 4080035951101399098ULL,
                                       3369545670818484319ULL, 11182861295392689483ULL}) {
    EXPECT_EQ(uniform_index(large, n), expected);
  }
}

TEST(SimUniformIndex, ZeroRangeThrowsAndRangeOneIsConstant) {
  Rng rng(1);
  EXPECT_THROW(uniform_index(rng, 0), std::invalid_argument);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(uniform_index(rng, 1), 0U);
}

RC_GTEST_PROP(SimUniformIndex, WideMultiplyMatchesThePortableReference,
              (std::uint64_t a, std::uint64_t b)) {
  const auto fast = detail::multiply_64x64(a, b);
  const auto portable = detail::multiply_64x64_portable(a, b);
  RC_ASSERT(fast.high == portable.high);
  RC_ASSERT(fast.low == portable.low);
}

// Frequencies of each value in {0..n-1}: indicator means with variance (1/n)(1 - 1/n) and
// |1[X = j] - 1/n| <= 1; Bernstein, with delta split over the n values.
RC_GTEST_PROP(SimUniformIndex, FrequenciesAreWithinBernsteinBounds, (std::uint64_t seed)) {
  const auto n = static_cast<std::uint64_t>(*rc::gen::inRange(1, 61));
  constexpr int draws = 20000;
  const double delta = test::kFalseFailurePerCase / static_cast<double>(n);
  Rng rng(seed);
  std::vector<int> counts(n, 0);
  for (int i = 0; i < draws; ++i) {
    const std::uint64_t x = uniform_index(rng, n);
    RC_ASSERT(x < n);
    ++counts[x];
  }
  const double p = 1.0 / static_cast<double>(n);
  const double half_width = test::bernstein_half_width(p * (1 - p), 1.0, draws, delta);
  for (const int c : counts) RC_ASSERT(std::abs(c / double{draws} - p) <= half_width);
}

// The rejection step matters when n is close to 2^64. For n = 3 * 2^62, the plain
// multiply-shift (no rejection) maps 4 words onto 3 values as 2:1:1 in every block of three
// consecutive values, so P(X mod 3 == r) would be 1/2, 1/4, 1/4 for some order of r; exact
// sampling gives 1/3 each (n is a multiple of 3). Bernstein on the three indicators, delta/3
// each; the bound (about 0.01) is far below the 1/6 a missing rejection would cause.
RC_GTEST_PROP(SimUniformIndex, ResiduesOfAHugeRangeAreUniform, (std::uint64_t seed)) {
  constexpr std::uint64_t n = std::uint64_t{3} << 62U;
  constexpr int draws = 20000;
  Rng rng(seed);
  std::vector<int> counts(3, 0);
  for (int i = 0; i < draws; ++i) ++counts[uniform_index(rng, n) % 3];
  const double half_width =
      test::bernstein_half_width(2.0 / 9, 1.0, draws, test::kFalseFailurePerCase / 3);
  for (const int c : counts) RC_ASSERT(std::abs(c / double{draws} - 1.0 / 3) <= half_width);
}

}  // namespace
}  // namespace dyncheck::sim
