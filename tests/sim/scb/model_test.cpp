// Tests of sim/scb/model.hpp: per-sample gradients against a dense one-hot computation, and the
// population gradient of population_gd.hpp against Monte-Carlo means of per-sample gradients.

#include "dyncheck/sim/scb/model.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dyncheck/sim/scb/attention_kernels.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/sim/scb/sampler.hpp"

namespace dyncheck::sim::scb {
namespace {

Instance test_instance(std::uint64_t seed, int N, int T, int Q) {
  Rng rng(seed);
  return random_instance({.N = N, .T = T, .Q = Q, .dirichlet_concentration = 0.6, .identity_mix = 0.1,
                          .q_uniform = false},
                         rng);
}

LinearModel perturbed_model(const Instance& instance, std::uint64_t seed, double scale) {
  Rng rng(seed);
  LinearModel model = initial_model(instance);
  auto u = [&rng] { return static_cast<double>(rng() >> 11U) * 0x1.0p-53 - 0.5; };
  for (Eigen::Index i = 0; i < model.V.size(); ++i) model.V.data()[i] += scale * u();
  for (Eigen::Index i = 0; i < model.A.size(); ++i) model.A.data()[i] += scale * u() / static_cast<double>(instance.T);
  return model;
}

TEST(SimScbModel, PerSampleGradientMatchesDenseOneHot) {
  const Instance instance = test_instance(1, 5, 17, 3);
  const Sampler sampler(instance);
  const LinearModel model = perturbed_model(instance, 2, 1.0);
  Rng rng(3);
  for (int i = 0; i < 50; ++i) {
    const Example example = sampler.sample(rng);
    BatchGradient sums(instance.N(), instance.T);
    const double loss = accumulate_gradient(model, example, sums);
    Eigen::MatrixXd X = Eigen::MatrixXd::Zero(instance.N(), instance.T);
    for (int t = 0; t < instance.T; ++t) X(example.tokens[static_cast<std::size_t>(t)], t) = 1.0;
    const Eigen::VectorXd a = model.A.col(example.query);
    Eigen::VectorXd r = -model.V * X * a;
    r(example.output) += 1.0;
    const Eigen::MatrixXd grad_V = -r * (X * a).transpose();
    Eigen::MatrixXd grad_A = Eigen::MatrixXd::Zero(instance.T, instance.N());
    grad_A.col(example.query) = -(model.V * X).transpose() * r;
    EXPECT_NEAR(loss, 0.5 * r.squaredNorm(), 1e-12);
    EXPECT_NEAR(sample_loss(model, example), loss, 1e-12);
    EXPECT_LT((sums.V - grad_V).lpNorm<Eigen::Infinity>(), 1e-12);
    EXPECT_LT((sums.A - grad_A).lpNorm<Eigen::Infinity>(), 1e-12);
    EXPECT_EQ(sums.touched, std::vector<int>{example.query});
    sums.clear();
    EXPECT_EQ(sums.A.lpNorm<Eigen::Infinity>(), 0.0);
    EXPECT_EQ(sums.V.lpNorm<Eigen::Infinity>(), 0.0);
  }
}

// Both code paths (plain loops for N ≤ 32, Eigen kernels above) against the dense formula.
RC_GTEST_PROP(SimScbModel, PerSampleGradientMatchesDenseOneHotForAllSizes, ()) {
  const int N = *rc::gen::inRange(1, 48);
  const int T = *rc::gen::inRange(1, 40);
  const int Q = *rc::gen::inRange(1, T + 1);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const Instance instance = test_instance(seed, N, T, Q);
  const Sampler sampler(instance);
  const LinearModel model = perturbed_model(instance, seed + 1, 1.0);
  Rng rng(seed + 2);
  const Example example = sampler.sample(rng);
  BatchGradient sums(N, T);
  const double loss = accumulate_gradient(model, example, sums);
  Eigen::MatrixXd X = Eigen::MatrixXd::Zero(N, T);
  for (int t = 0; t < T; ++t) X(example.tokens[static_cast<std::size_t>(t)], t) = 1.0;
  const Eigen::VectorXd a = model.A.col(example.query);
  Eigen::VectorXd r = -model.V * X * a;
  r(example.output) += 1.0;
  Eigen::MatrixXd grad_A = Eigen::MatrixXd::Zero(T, N);
  grad_A.col(example.query) = -(model.V * X).transpose() * r;
  RC_ASSERT(std::abs(loss - 0.5 * r.squaredNorm()) <= 1e-12);
  RC_ASSERT((sums.V + r * (X * a).transpose()).lpNorm<Eigen::Infinity>() <= 1e-12);
  RC_ASSERT((sums.A - grad_A).lpNorm<Eigen::Infinity>() <= 1e-12);
}

// accumulate_gradients processes groups stage by stage; every sum must still get its terms in
// sample order, so the result is the same bits as one accumulate_gradient call per example.
RC_GTEST_PROP(SimScbModel, GroupedAccumulationIsSequentialAccumulationBitForBit, ()) {
  const int N = *rc::gen::inRange(1, 41);
  const int T = *rc::gen::inRange(1, 120);
  const int B = *rc::gen::inRange(1, 14);
  const int queries = *rc::gen::inRange(1, N + 1);  // few queries: columns of A hit repeatedly
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  Rng rng(seed);
  auto u = [&rng] { return static_cast<double>(rng() >> 11U) * 0x1.0p-53 - 0.5; };
  LinearModel model{.V = Eigen::MatrixXd(N, N), .A = Eigen::MatrixXd(T, N)};
  for (Eigen::Index i = 0; i < model.V.size(); ++i) model.V.data()[i] = u();
  for (Eigen::Index i = 0; i < model.A.size(); ++i) model.A.data()[i] = u();
  std::vector<Example> examples(static_cast<std::size_t>(B));
  for (Example& example : examples) {
    example.query = static_cast<int>(rng() % static_cast<std::uint64_t>(queries));
    example.output = static_cast<int>(rng() % static_cast<std::uint64_t>(N));
    for (int t = 0; t < T; ++t) example.tokens.push_back(static_cast<int>(rng() % static_cast<std::uint64_t>(N)));
  }
  BatchGradient sequential(N, T), grouped(N, T);
  for (const Example& example : examples) accumulate_gradient(model, example, sequential);
  accumulate_gradients(model, examples, grouped);
  auto same = [](const Eigen::MatrixXd& x, const Eigen::MatrixXd& y) {
    return std::memcmp(x.data(), y.data(), static_cast<std::size_t>(x.size()) * sizeof(double)) == 0;
  };
  RC_ASSERT(same(grouped.V, sequential.V));
  RC_ASSERT(same(grouped.A, sequential.A));
  RC_ASSERT(std::memcmp(&grouped.loss_sum, &sequential.loss_sum, sizeof(double)) == 0);
  RC_ASSERT(grouped.samples == sequential.samples);
  RC_ASSERT(grouped.touched == sequential.touched);
  RC_ASSERT(grouped.count == sequential.count);
}

// accumulate_gradients on every kernel path (SIMD scatter of sample pairs, lane-wise N²
// products with the loss in half_squared_norm's order) against accumulate_gradient on the scalar
// path, bit for bit: N at every boundary of the kernels (1..8, 9..16, 17..24, 25..32, above 32),
// T below, at and around the chunk sizes, batches that leave partial groups and pairs.
TEST(SimScbModel, GroupedAccumulationOnEveryPathIsScalarSequentialAccumulationBitForBit) {
  std::uint64_t seed = 1;
  for (const int N : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 20, 24, 25, 31, 32, 33}) {
    for (const int T : {1, 3, 7, 8, 9, 16, 17, 100, 101}) {
      for (const int B : {1, 2, 3, 5, 8, 13}) {
        Rng rng(seed++);
        // Mixed magnitudes, so that a different order of additions would show in the low bits.
        auto u = [&rng] {
          const double x = static_cast<double>(rng() >> 11U) * 0x1.0p-53 - 0.5;
          return std::ldexp(x, static_cast<int>(rng() % 13U) - 6);
        };
        LinearModel model{.V = Eigen::MatrixXd(N, N), .A = Eigen::MatrixXd(T, N)};
        for (Eigen::Index i = 0; i < model.V.size(); ++i) model.V.data()[i] = u();
        for (Eigen::Index i = 0; i < model.A.size(); ++i) model.A.data()[i] = u();
        std::vector<Example> examples(static_cast<std::size_t>(B));
        for (Example& example : examples) {
          example.query = static_cast<int>(rng() % static_cast<std::uint64_t>(std::min(N, 2)));
          example.output = static_cast<int>(rng() % static_cast<std::uint64_t>(N));
          for (int t = 0; t < T; ++t) example.tokens.push_back(static_cast<int>(rng() % static_cast<std::uint64_t>(N)));
        }
        BatchGradient sequential(N, T);
        for (const Example& example : examples) accumulate_gradient(model, example, sequential, KernelPath::scalar);
        for (const KernelPath path : available_kernel_paths()) {
          BatchGradient grouped(N, T);
          accumulate_gradients(model, examples, grouped, path);
          const std::string where = std::string(kernel_path_name(path)) + " N " + std::to_string(N) + " T " +
                                    std::to_string(T) + " B " + std::to_string(B);
          EXPECT_EQ(std::memcmp(grouped.V.data(), sequential.V.data(), sizeof(double) * static_cast<std::size_t>(N * N)),
                    0)
              << where;
          EXPECT_EQ(std::memcmp(grouped.A.data(), sequential.A.data(), sizeof(double) * static_cast<std::size_t>(N * T)),
                    0)
              << where;
          EXPECT_EQ(std::memcmp(&grouped.loss_sum, &sequential.loss_sum, sizeof(double)), 0) << where;
          EXPECT_EQ(grouped.touched, sequential.touched) << where;
        }
      }
    }
  }
}

TEST(SimScbModel, PopulationGradientIsTheMeanOfPerSampleGradients) {
  // n iid per-sample gradients; for each of the N² + TN entries (and the loss) the z-score
  // (mean − population)/(sd/√n) is within z* = 6 of 0. The per-sample quantities are bounded,
  // so with n = 4e5 the CLT is accurate far into the tail; P(|Z| > 6) = 2e-9, times 1 + 9 + 18
  // comparisons gives a false-failure rate < 1e-7.
  const Instance instance = test_instance(4, 3, 6, 2);
  const Sampler sampler(instance);
  const LinearModel model = perturbed_model(instance, 5, 1.0);
  const PopulationGradient population = population_gradient(instance, model);
  const double population_L = population_loss(instance, model);
  const int n = 400000;
  const Eigen::Index entries_V = model.V.size(), entries_A = model.A.size();
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(1 + entries_V + entries_A), sum_sq = sum;
  BatchGradient sums(instance.N(), instance.T);
  Example example;
  Rng rng(6);
  Eigen::VectorXd x(sum.size());
  for (int i = 0; i < n; ++i) {
    sampler.sample_into(example, rng);
    sums.clear();
    x(0) = accumulate_gradient(model, example, sums);
    x.segment(1, entries_V) = Eigen::Map<const Eigen::VectorXd>(sums.V.data(), entries_V);
    x.segment(1 + entries_V, entries_A) = Eigen::Map<const Eigen::VectorXd>(sums.A.data(), entries_A);
    sum += x;
    sum_sq += x.cwiseProduct(x);
  }
  Eigen::VectorXd expected(sum.size());
  expected(0) = population_L;
  expected.segment(1, entries_V) = Eigen::Map<const Eigen::VectorXd>(population.V.data(), entries_V);
  expected.segment(1 + entries_V, entries_A) = Eigen::Map<const Eigen::VectorXd>(population.A.data(), entries_A);
  for (Eigen::Index i = 0; i < sum.size(); ++i) {
    const double mean = sum(i) / n;
    const double variance = (sum_sq(i) - n * mean * mean) / (n - 1);
    const double z = (mean - expected(i)) / std::sqrt(variance / n);
    EXPECT_LT(std::abs(z), 6.0) << "entry " << i << ": mean " << mean << " vs " << expected(i);
  }
}

}  // namespace
}  // namespace dyncheck::sim::scb
