// Tests of sim/scb/population_gd.hpp: exact identities of the population loss and gradient.
// (The Monte-Carlo comparison against per-sample gradients is in model_test.cpp.)

#include "dyncheck/sim/scb/population_gd.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/model.hpp"
#include "dyncheck/sim/scb/normalise.hpp"

namespace dyncheck::sim::scb {
namespace {

Instance small_instance(std::uint64_t seed, int N = 4, int T = 9, int Q = 3, bool q_uniform = false) {
  Rng rng(seed);
  return random_instance({.N = N, .T = T, .Q = Q, .dirichlet_concentration = 0.7, .identity_mix = 0.2,
                          .q_uniform = q_uniform, .q_dirichlet_concentration = 1.0},
                         rng);
}

LinearModel random_model(const Instance& instance, std::uint64_t seed) {
  Rng rng(seed);
  LinearModel model = initial_model(instance);
  auto u = [&rng] { return static_cast<double>(rng() >> 11U) * 0x1.0p-53 - 0.5; };
  for (Eigen::Index i = 0; i < model.V.size(); ++i) model.V.data()[i] += u();
  for (Eigen::Index i = 0; i < model.A.size(); ++i) model.A.data()[i] += 0.3 * u();
  return model;
}

double sigma_inner(const Instance& in, const Eigen::MatrixXd& X, const Eigen::MatrixXd& Y) {
  const Eigen::MatrixXd Sigma = Eigen::MatrixXd(in.mu.asDiagonal()) - in.mu * in.mu.transpose();
  return (X * Sigma * Y.transpose()).trace();
}

TEST(SimScbPopulationGd, GradientMatchesCentralDifferences) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const Instance instance = small_instance(seed);
    const LinearModel model = random_model(instance, 100 + seed);
    const PopulationGradient gradient = population_gradient(instance, model);
    // The loss is quadratic in each block of entries, so central differences are exact up to
    // round-off: error ≈ eps·|L|/h with h = 1e-4 gives ~1e-12.
    const double h = 1e-4;
    auto check = [&](Eigen::MatrixXd LinearModel::*block, const Eigen::MatrixXd& analytic) {
      for (Eigen::Index i = 0; i < analytic.size(); ++i) {
        LinearModel plus = model, minus = model;
        (plus.*block).data()[i] += h;
        (minus.*block).data()[i] -= h;
        const double numeric = (population_loss(instance, plus) - population_loss(instance, minus)) / (2 * h);
        EXPECT_NEAR(numeric, analytic.data()[i], 1e-7 * std::max(1.0, std::abs(analytic.data()[i]))) << i;
      }
    };
    check(&LinearModel::V, gradient.V);
    check(&LinearModel::A, gradient.A);
  }
}

TEST(SimScbPopulationGd, GroundTruthIsStationaryWithIrreducibleLoss) {
  const Instance instance = small_instance(7);
  const LinearModel truth{instance.P, dense_q(instance)};
  const PopulationGradient gradient = population_gradient(instance, truth);
  EXPECT_LT(gradient.V.lpNorm<Eigen::Infinity>(), 1e-14);
  EXPECT_LT(gradient.A.lpNorm<Eigen::Infinity>(), 1e-14);
  // L(P, q) = ½ L_irr with L_irr = 1 − ‖μ‖² − K_P Σ_k μ_k ‖q_k‖² (specs/scb.md §2).
  double q_term = 0.0;
  for (int k = 0; k < instance.N(); ++k) q_term += instance.mu(k) * q_squared_norm(instance, k);
  const double L_irr = 1.0 - instance.mu.squaredNorm() - sigma_inner(instance, instance.P, instance.P) * q_term;
  EXPECT_NEAR(population_loss(instance, truth), 0.5 * L_irr, 1e-15);
}

TEST(SimScbPopulationGd, Stage1KeepsAttentionSumsAndValueColumnSums) {
  const Instance instance = small_instance(11, 5, 20, 4);
  LinearModel model = initial_model(instance);
  for (int step = 0; step < 50; ++step) {
    population_stage1_step(model, instance, 0.4, 0.5);
    for (Eigen::Index k = 0; k < model.A.cols(); ++k) EXPECT_NEAR(model.A.col(k).sum(), 1.0, 1e-13);
    for (Eigen::Index j = 0; j < model.V.cols(); ++j) EXPECT_NEAR(model.V.col(j).sum(), 1.0, 1e-13);
  }
  // From the uninformative start the population step moves towards the truth: α > 0.
  EXPECT_GT(sigma_inner(instance, model.V, instance.P), 0.0);
}

TEST(SimScbPopulationGd, Stage2ThresholdsWithoutReprojection) {
  const Instance instance = small_instance(13, 3, 12, 2, true);
  LinearModel model = random_model(instance, 5);
  LinearModel stage1 = model;
  const double eta = 0.3, eta_A = 0.2, lambda = 0.05;
  population_stage1_step(stage1, instance, eta, eta_A);
  population_stage2_step(model, instance, eta, eta_A, lambda);
  EXPECT_EQ(model.V, stage1.V);
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) {
    const double threshold = eta_A * lambda / instance.mu(k);
    for (Eigen::Index t = 0; t < model.A.rows(); ++t) {
      const double a = stage1.A(t, k);
      const double expected = std::abs(a) <= threshold ? 0.0 : a - std::copysign(threshold, a);
      EXPECT_EQ(model.A(t, k), expected);
    }
  }
}

TEST(SimScbPopulationGd, NormaliseMakesUnitColumnSums) {
  const Instance instance = small_instance(17);
  LinearModel model = random_model(instance, 3);
  model.V.array() += 1.0;
  normalise(model);
  for (Eigen::Index j = 0; j < model.V.cols(); ++j) EXPECT_NEAR(model.V.col(j).sum(), 1.0, 1e-14);
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) EXPECT_NEAR(model.A.col(k).sum(), 1.0, 1e-14);
}

TEST(SimScbPopulationGd, NoisyStepIsReproducibleAndKeepsAttentionSums) {
  const Instance instance = small_instance(19, 4, 30, 3);
  LinearModel a = initial_model(instance), b = initial_model(instance);
  Rng rng_a(42), rng_b(42);
  for (int step = 0; step < 20; ++step) {
    noisy_population_step(a, instance, 0.3, 0.5, 64, rng_a);
    noisy_population_step(b, instance, 0.3, 0.5, 64, rng_b);
  }
  EXPECT_EQ(a.V, b.V);
  EXPECT_EQ(a.A, b.A);
  for (Eigen::Index k = 0; k < a.A.cols(); ++k) EXPECT_NEAR(a.A.col(k).sum(), 1.0, 1e-12);
}

TEST(SimScbPopulationGd, RejectsBadInput) {
  const Instance instance = small_instance(23);
  LinearModel model = initial_model(instance);
  EXPECT_THROW(population_stage1_step(model, instance, -0.1, 0.1), std::invalid_argument);
  EXPECT_THROW(population_stage2_step(model, instance, 0.1, 0.1, -1.0), std::invalid_argument);
  Rng rng(1);
  EXPECT_THROW(noisy_population_step(model, instance, 0.1, 0.1, 0.5, rng), std::invalid_argument);
  model.A.resize(3, 3);
  EXPECT_THROW(population_loss(instance, model), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::scb
