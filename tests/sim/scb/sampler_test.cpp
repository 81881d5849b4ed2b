// Tests of sim/scb/sampler.hpp: exact alias tables, empirical frequencies of μ, q and P, and
// reproducibility.
//
// Frequency bounds: a cell count C ~ Binomial(n, p) satisfies, by Bernstein's inequality,
//   |C − np| ≤ sqrt(2 n p(1−p) L) + (2/3) L,   L = ln(2/δ),
// with probability ≥ 1 − δ. Each test splits a false-failure rate of 1e-6 over its cells
// (Bonferroni), so the whole file fails spuriously with probability < 4e-6.

#include "dyncheck/sim/scb/sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dyncheck/sim/scb/instance.hpp"

namespace dyncheck::sim::scb {
namespace {

constexpr double file_false_failure = 1e-6;

double bernstein_half_width(double n, double p, double delta) {
  const double L = std::log(2.0 / delta);
  return std::sqrt(2.0 * n * p * (1.0 - p) * L) + 2.0 / 3.0 * L;
}

Instance test_instance() {
  Rng rng(2024);
  return random_instance({.N = 4, .T = 12, .Q = 3, .dirichlet_concentration = 0.5, .q_uniform = false}, rng);
}

TEST(SimScbSampler, AliasTableIsExact) {
  const std::vector<double> weights{0.1, 0.0, 2.5, 1e-9, 0.7, 3.0};
  const AliasTable table(weights);
  double total = 0.0;
  for (const double w : weights) total += w;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    EXPECT_NEAR(table.probability(i), weights[i] / total, 8 * 0x1.0p-53) << i;
  }
  Rng rng(3);
  for (int i = 0; i < 100000; ++i) EXPECT_NE(table(rng), 1);  // weight 0 is never drawn
  EXPECT_THROW(AliasTable(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(AliasTable(std::vector<double>{0.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(AliasTable(std::vector<double>{1.0, -1.0}), std::invalid_argument);
}

TEST(SimScbSampler, FrequenciesMatchMuQAndP) {
  const Instance instance = test_instance();
  const Sampler sampler(instance);
  const int N = instance.N(), T = instance.T;
  const long long n = 200000;
  std::vector<double> token(static_cast<std::size_t>(N)), query(static_cast<std::size_t>(N));
  std::vector<std::vector<double>> position(static_cast<std::size_t>(N), std::vector<double>(static_cast<std::size_t>(T)));
  Eigen::MatrixXd output = Eigen::MatrixXd::Zero(N, N);  // (x_o, x_s)
  Rng rng(77);
  Example example;
  for (long long i = 0; i < n; ++i) {
    sampler.sample_into(example, rng);
    for (const int x : example.tokens) token[static_cast<std::size_t>(x)] += 1;
    query[static_cast<std::size_t>(example.query)] += 1;
    position[static_cast<std::size_t>(example.query)][static_cast<std::size_t>(example.position)] += 1;
    output(example.output, example.tokens[static_cast<std::size_t>(example.position)]) += 1;
  }
  // Cells: N token + N query + N·T position-given-query + N·N output-given-source counts.
  const double cells = 2.0 * N + N * T + N * N;
  const double delta = file_false_failure / cells;
  const double n_tokens = static_cast<double>(n) * T;
  for (int i = 0; i < N; ++i) {
    const double p = instance.mu(i);
    EXPECT_LE(std::abs(token[static_cast<std::size_t>(i)] - n_tokens * p), bernstein_half_width(n_tokens, p, delta));
    EXPECT_LE(std::abs(query[static_cast<std::size_t>(i)] - static_cast<double>(n) * p),
              bernstein_half_width(static_cast<double>(n), p, delta));
  }
  const Eigen::MatrixXd q = dense_q(instance);
  for (int k = 0; k < N; ++k) {
    // Conditional on the number of examples with query k, positions are multinomial(q_k).
    const double n_k = query[static_cast<std::size_t>(k)];
    for (int t = 0; t < T; ++t) {
      const double c = position[static_cast<std::size_t>(k)][static_cast<std::size_t>(t)];
      if (q(t, k) == 0.0) {
        EXPECT_EQ(c, 0.0);
      } else {
        EXPECT_LE(std::abs(c - n_k * q(t, k)), bernstein_half_width(n_k, q(t, k), delta));
      }
    }
  }
  for (int j = 0; j < N; ++j) {
    const double n_j = output.col(j).sum();
    for (int i = 0; i < N; ++i) {
      EXPECT_LE(std::abs(output(i, j) - n_j * instance.P(i, j)), bernstein_half_width(n_j, instance.P(i, j), delta));
    }
  }
}

TEST(SimScbSampler, SameSeedSameExamples) {
  const Instance instance = test_instance();
  const Sampler sampler(instance);
  Rng a(9), b(9);
  for (int i = 0; i < 100; ++i) {
    const Example x = sampler.sample(a), y = sampler.sample(b);
    EXPECT_EQ(x.tokens, y.tokens);
    EXPECT_EQ(x.query, y.query);
    EXPECT_EQ(x.position, y.position);
    EXPECT_EQ(x.output, y.output);
  }
  // T + 3 engine outputs per example.
  Rng c(9), d(9);
  sampler.sample(c);
  for (int i = 0; i < instance.T + 3; ++i) d();
  EXPECT_EQ(c, d);
}

TEST(SimScbSampler, RejectsInvalidInstance) {
  Instance instance = test_instance();
  instance.mu(0) += 0.01;
  EXPECT_THROW(Sampler{instance}, std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::scb
