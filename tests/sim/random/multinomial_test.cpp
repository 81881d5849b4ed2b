// Tests of dyncheck/sim/random/multinomial.hpp. Golden draws are a snapshot (change detector).

#include "dyncheck/sim/random/multinomial.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "dyncheck/sim/random/binomial.hpp"
#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

TEST(SimMultinomial, FirstDrawsAreGolden) {
  const std::vector<double> p = {0.5, 0.0, 0.2, 0.3};
  std::vector<std::uint64_t> counts(4);
  Rng rng(2024);
  const std::vector<std::vector<std::uint64_t>> expected = {
      {510, 0, 194, 296}, {494, 0, 206, 300}, {484, 0, 208, 308}};
  for (const auto& e : expected) {
    multinomial(rng, 1000, p, counts);
    EXPECT_EQ(counts, e);
  }
}

TEST(SimMultinomial, IsTheDocumentedSequenceOfConditionalBinomials) {
  const std::vector<double> p = {2.0, 1.0, 0.0, 1.0};  // unnormalized on purpose
  std::vector<std::uint64_t> counts(4);
  Rng rng(8);
  multinomial(rng, 500, p, counts);
  Rng reference(8);
  const std::uint64_t c0 = binomial(reference, 500, 2.0 / 4.0);
  const std::uint64_t c1 = binomial(reference, 500 - c0, 1.0 / 2.0);
  const std::uint64_t c2 = binomial(reference, 500 - c0 - c1, 0.0 / 1.0);
  EXPECT_EQ(counts, (std::vector<std::uint64_t>{c0, c1, c2, 500 - c0 - c1 - c2}));
  EXPECT_EQ(rng, reference);
}

TEST(SimMultinomial, ZeroTrialsUseNoRandomness) {
  const std::vector<double> p = {0.2, 0.8};
  std::vector<std::uint64_t> counts = {7, 7};
  Rng rng(1);
  multinomial(rng, 0, p, counts);
  EXPECT_EQ(counts, (std::vector<std::uint64_t>{0, 0}));
  EXPECT_EQ(rng, Rng(1));
}

TEST(SimMultinomial, InvalidArgumentsThrow) {
  Rng rng(1);
  std::vector<std::uint64_t> two(2);
  std::vector<std::uint64_t> three(3);
  const std::vector<double> p = {0.5, 0.5};
  EXPECT_THROW(multinomial(rng, 10, p, three), std::invalid_argument);
  std::vector<std::uint64_t> none;
  EXPECT_THROW(multinomial(rng, 10, std::vector<double>{}, none), std::invalid_argument);
  EXPECT_THROW(multinomial(rng, 10, std::vector<double>{0.5, -0.5}, two), std::invalid_argument);
  EXPECT_THROW(multinomial(rng, 10, std::vector<double>{0.0, 0.0}, two), std::invalid_argument);
  EXPECT_THROW(
      multinomial(rng, 10, std::vector<double>{0.5, std::numeric_limits<double>::quiet_NaN()}, two),
      std::invalid_argument);
  EXPECT_THROW(multinomial(rng, binomial_max_n + 1, p, two), std::invalid_argument);
}

struct Problem {
  std::uint64_t n;
  std::vector<double> weights;
  double total;
};

// K in [1, 8], integer weights in [0, 100] (some zero), n log-uniform on [1, 10^6].
Problem generate_problem() {
  Problem problem;
  problem.n = static_cast<std::uint64_t>(
      std::llround(test::log_scale(*rc::gen::inRange(0, 1001), 1000, 1.0, 1e6)));
  const int k = *rc::gen::inRange(1, 9);
  for (int i = 0; i < k; ++i) problem.weights.push_back(*rc::gen::inRange(0, 101));
  problem.total = std::accumulate(problem.weights.begin(), problem.weights.end(), 0.0);
  RC_PRE(problem.total > 0.0);
  return problem;
}

RC_GTEST_PROP(SimMultinomial, CountsSumToNAndSkipZeroWeights, (std::uint64_t seed)) {
  const Problem problem = generate_problem();
  std::vector<std::uint64_t> counts(problem.weights.size());
  Rng rng(seed);
  for (int r = 0; r < 20; ++r) {
    multinomial(rng, problem.n, problem.weights, counts);
    RC_ASSERT(std::accumulate(counts.begin(), counts.end(), std::uint64_t{0}) == problem.n);
    for (std::size_t i = 0; i < counts.size(); ++i) {
      if (problem.weights[i] == 0.0) RC_ASSERT(counts[i] == 0U);
    }
  }
}

// Means: over N draws the total of C_i is Binomial(N n, p_i), so Bernstein on N n Bernoulli
// trials (variance p_i(1 - p_i), range 1). Covariances: the partial sum S_j = C_0 + ... + C_j
// is Binomial(n, P_j), P_j = p_0 + ... + p_j, so Var S_j = n P_j (1 - P_j) checks the
// covariances -n p_i p_l too; median of means on (S_j - n P_j)^2 with
// Var = n P Q (1 - 6 P Q) + 2 (n P Q)^2. delta split over the 2K assertions.
RC_GTEST_PROP(SimMultinomial, MeansAndPartialSumVariancesAreWithinDerivedBounds,
              (std::uint64_t seed)) {
  const Problem problem = generate_problem();
  const std::size_t k = problem.weights.size();
  constexpr int draws = 5000;
  const double delta = test::kFalseFailurePerCase / (2.0 * static_cast<double>(k));
  const double nd = static_cast<double>(problem.n);
  std::vector<double> p(k);
  std::vector<double> cumulative(k);
  double running = 0.0;
  for (std::size_t i = 0; i < k; ++i) {
    p[i] = problem.weights[i] / problem.total;
    running += problem.weights[i];
    cumulative[i] = running / problem.total;
  }
  std::vector<double> totals(k, 0.0);
  std::vector<std::vector<double>> squares(k, std::vector<double>(draws));
  std::vector<std::uint64_t> counts(k);
  Rng rng(seed);
  for (int r = 0; r < draws; ++r) {
    multinomial(rng, problem.n, problem.weights, counts);
    double partial = 0.0;
    for (std::size_t i = 0; i < k; ++i) {
      totals[i] += static_cast<double>(counts[i]);
      partial += static_cast<double>(counts[i]);
      const double d = partial - nd * cumulative[i];
      squares[i][static_cast<std::size_t>(r)] = d * d;
    }
  }
  const double trials = nd * draws;
  for (std::size_t i = 0; i < k; ++i) {
    RC_ASSERT(std::abs(totals[i] / trials - p[i]) <=
              test::bernstein_half_width(p[i] * (1 - p[i]), 1.0, trials, delta));
    const double pq = cumulative[i] * (1 - cumulative[i]);
    const double npq = nd * pq;
    const auto plan = test::median_of_means_plan(npq * (1 - 6 * pq) + 2 * npq * npq, draws, delta);
    RC_ASSERT(std::abs(test::median_of_means(squares[i], plan.blocks) - npq) <= plan.half_width);
  }
}

}  // namespace
}  // namespace dyncheck::sim
