// Tests of dyncheck/sim/random/shuffle.hpp.

#include "dyncheck/sim/random/shuffle.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <span>
#include <vector>

#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

TEST(SimShuffle, IsFisherYatesOverUniformIndex) {
  std::vector<int> values(10);
  std::iota(values.begin(), values.end(), 0);
  Rng rng(2024);
  shuffle(rng, std::span<int>(values));
  // The same swaps written out: i = 9..1, j = uniform_index(i + 1).
  std::vector<int> expected(10);
  std::iota(expected.begin(), expected.end(), 0);
  Rng reference(2024);
  for (std::size_t i = 10; i > 1; --i) {
    std::swap(expected[i - 1], expected[uniform_index(reference, i)]);
  }
  EXPECT_EQ(values, expected);
  EXPECT_EQ(rng, reference);
}

RC_GTEST_PROP(SimShuffle, ProducesAPermutation, (std::uint64_t seed, std::vector<int> values)) {
  std::vector<int> shuffled = values;
  Rng rng(seed);
  shuffle(rng, std::span<int>(shuffled));
  std::sort(values.begin(), values.end());
  std::sort(shuffled.begin(), shuffled.end());
  RC_ASSERT(values == shuffled);
}

// All 3! orders equally likely: indicator of each order has variance (1/6)(5/6), range 1;
// Bernstein with delta split over the 6 orders.
RC_GTEST_PROP(SimShuffle, OrdersOfThreeAreUniform, (std::uint64_t seed)) {
  constexpr int draws = 12000;
  Rng rng(seed);
  std::map<std::array<int, 3>, int> counts;
  for (int i = 0; i < draws; ++i) {
    std::array<int, 3> values = {0, 1, 2};
    shuffle(rng, std::span<int>(values));
    ++counts[values];
  }
  RC_ASSERT(counts.size() == 6U);
  const double half_width =
      test::bernstein_half_width(5.0 / 36, 1.0, draws, test::kFalseFailurePerCase / 6);
  for (const auto& [order, count] : counts) {
    RC_ASSERT(std::abs(count / double{draws} - 1.0 / 6) <= half_width);
  }
}

}  // namespace
}  // namespace dyncheck::sim
