// Tests of dyncheck/sim/random/categorical.hpp; golden tables and draws from the Python
// re-implementation of the documented construction in reference_values.py.

#include "dyncheck/sim/random/categorical.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

// The distribution the alias table implies: column c is chosen with probability 1/K and then
// yields c with probability prob_c and alias_c otherwise.
std::vector<double> implied_distribution(const Categorical& categorical) {
  const auto prob = categorical.table_probabilities();
  const auto alias = categorical.table_aliases();
  const auto k = static_cast<double>(prob.size());
  std::vector<double> p(prob.size(), 0.0);
  for (std::size_t c = 0; c < prob.size(); ++c) {
    p[c] += prob[c] / k;
    p[alias[c]] += (1.0 - prob[c]) / k;
  }
  return p;
}

TEST(SimCategorical, TableAndDrawsAreGolden) {
  const std::vector<double> weights = {0.1, 0.2, 0.3, 0.4};
  const Categorical categorical(weights);
  const std::vector<double> prob = {0x1.999999999999ap-2, 0x1.999999999999ap-1, 1.0,
                                    0x1.999999999999cp-1};
  const std::vector<std::size_t> alias = {3, 3, 2, 2};
  EXPECT_EQ(std::vector<double>(categorical.table_probabilities().begin(),
                                categorical.table_probabilities().end()),
            prob);
  EXPECT_EQ(std::vector<std::size_t>(categorical.table_aliases().begin(),
                                     categorical.table_aliases().end()),
            alias);
  Rng rng(2024);
  for (const std::size_t expected : {2, 3, 2, 3, 0, 2, 2, 3, 1, 3, 2, 2}) {
    EXPECT_EQ(categorical(rng), expected);
  }
}

TEST(SimCategorical, ZeroWeightsGetZeroTableProbability) {
  const std::vector<double> weights = {3.0, 0.0, 1.0, 0.5, 0.0, 2.5};
  const Categorical categorical(weights);
  const std::vector<double> prob = {
      1.0, 0.0, 0x1.b6db6db6db6dbp-1, 0x1.b6db6db6db6dbp-2, 0.0, 0x1.2492492492492p-1};
  const std::vector<std::size_t> alias = {0, 0, 0, 5, 5, 0};
  EXPECT_EQ(std::vector<double>(categorical.table_probabilities().begin(),
                                categorical.table_probabilities().end()),
            prob);
  EXPECT_EQ(std::vector<std::size_t>(categorical.table_aliases().begin(),
                                     categorical.table_aliases().end()),
            alias);
  EXPECT_EQ(categorical.size(), 6U);
  EXPECT_DOUBLE_EQ(categorical.probability(0), 3.0 / 7.0);
  EXPECT_EQ(categorical.probability(1), 0.0);
}

TEST(SimCategorical, AcceptsABracedList) {
  const Categorical categorical({0.25, 0.75});
  EXPECT_EQ(categorical.size(), 2U);
  EXPECT_EQ(categorical.probability(1), 0.75);
}

TEST(SimCategorical, InvalidWeightsThrow) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::vector<double>> bad = {{},         {1.0, -0.5}, {1.0, nan},
                                                {1.0, inf}, {0.0, 0.0},  {1e308, 1e308}};
  for (const auto& weights : bad) {
    EXPECT_THROW(Categorical{weights}, std::invalid_argument);
  }
}

TEST(SimCategorical, ErrorMessageNamesTheArgumentAndRange) {
  const std::vector<double> weights = {1.0, -0.5};
  try {
    Categorical{weights};
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "Categorical: probabilities[1] must be finite and >= 0 (got -0.5)");
  }
}

// Weights: K in [1, 40], each an integer in [0, 1000] times a common scale 10^s, s in [-200,
// 200], at least one positive.
std::vector<double> generate_weights() {
  const int k = *rc::gen::inRange(1, 41);
  const double scale = std::pow(10.0, *rc::gen::inRange(-200, 201));
  std::vector<double> weights(static_cast<std::size_t>(k));
  bool any_positive = false;
  for (double& w : weights) {
    w = *rc::gen::inRange(0, 1001) * scale;
    any_positive = any_positive || w > 0.0;
  }
  RC_PRE(any_positive);
  return weights;
}

// Deterministic: the table's implied distribution equals the normalized weights up to
// rounding. Each q is within a few ulps of K (<= K eps each); a column is updated at most K
// times and each update adds <= 2 ulp(K) to the residual it carries, so an implied probability
// (residuals divided by K) is off by <= 2 K eps per update chain; we allow 8 K eps. Zero
// weights are never on the `large` stack and so are nobody's alias: implied probability 0.
RC_GTEST_PROP(SimCategorical, AliasTableImpliesTheNormalizedWeights, ()) {
  const std::vector<double> weights = generate_weights();
  const Categorical categorical(weights);
  const std::vector<double> implied = implied_distribution(categorical);
  const auto k = static_cast<double>(weights.size());
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] == 0.0) {
      RC_ASSERT(implied[i] == 0.0);
    } else {
      RC_ASSERT(std::abs(implied[i] - categorical.probability(i)) <=
                8 * k * std::numeric_limits<double>::epsilon());
    }
  }
}

// Frequencies: indicator of category i has variance p_i (1 - p_i) and range 1; Bernstein with
// delta split over the K categories.
RC_GTEST_PROP(SimCategorical, FrequenciesAreWithinBernsteinBounds, (std::uint64_t seed)) {
  const std::vector<double> weights = generate_weights();
  const Categorical categorical(weights);
  constexpr int draws = 20000;
  Rng rng(seed);
  std::vector<int> counts(weights.size(), 0);
  for (int i = 0; i < draws; ++i) ++counts[categorical(rng)];
  const double delta = test::kFalseFailurePerCase / static_cast<double>(weights.size());
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double p = categorical.probability(i);
    if (weights[i] == 0.0) RC_ASSERT(counts[i] == 0);
    RC_ASSERT(std::abs(counts[i] / double{draws} - p) <=
              test::bernstein_half_width(p * (1 - p), 1.0, draws, delta));
  }
}

}  // namespace
}  // namespace dyncheck::sim
