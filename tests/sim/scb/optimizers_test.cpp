// Tests of sim/scb/optimizers.hpp: invariants of the stage-1/stage-2 steps, agreement with a
// direct computation, and reproducibility.

#include "dyncheck/sim/scb/optimizers.hpp"
#include "dyncheck/sim/scb/steps_from_sums.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace dyncheck::sim::scb {
namespace {

Instance test_instance(std::uint64_t seed, int N = 4, int T = 30, int Q = 3) {
  Rng rng(seed);
  return random_instance({.N = N, .T = T, .Q = Q}, rng);
}

TEST(SimScbOptimizers, Stage1KeepsAttentionSumsAndValueColumnSums) {
  const Instance instance = test_instance(1);
  const Sampler sampler(instance);
  LinearModel model = initial_model(instance);
  SgdWorkspace workspace(instance.N(), instance.T);
  Rng rng(2);
  for (int step = 0; step < 200; ++step) {
    stage1_sgd_step(model, instance, sampler, 16, 0.5, 0.5, rng, workspace);
  }
  // Per sample 1ᵀ r = 1 − 1ᵀV X a_k = 0 when 1ᵀV = 1ᵀ and 1ᵀa_k = 1, and Π_T removes 1: both
  // sums are invariant exactly, up to round-off accumulated over the steps.
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) EXPECT_NEAR(model.A.col(k).sum(), 1.0, 1e-12);
  for (Eigen::Index j = 0; j < model.V.cols(); ++j) EXPECT_NEAR(model.V.col(j).sum(), 1.0, 1e-12);
  EXPECT_GT((model.V - initial_model(instance).V).norm(), 0.0);
}

TEST(SimScbOptimizers, Stage1StepMatchesDirectComputation) {
  const Instance instance = test_instance(3, 3, 10, 2);
  const Sampler sampler(instance);
  LinearModel model = initial_model(instance);
  model.A.col(1)(3) += 0.05;
  model.V(0, 2) -= 0.1;
  const LinearModel before = model;
  const double eta = 0.3, eta_A = 0.7;
  const long long B = 5;
  Rng rng(4), replay(4);
  stage1_sgd_step(model, instance, sampler, B, eta, eta_A, rng);

  Eigen::MatrixXd grad_V = Eigen::MatrixXd::Zero(3, 3), grad_A = Eigen::MatrixXd::Zero(10, 3);
  for (long long b = 0; b < B; ++b) {
    const Example e = sampler.sample(replay);
    Eigen::VectorXd h = Eigen::VectorXd::Zero(3);
    for (int t = 0; t < 10; ++t) h(e.tokens[static_cast<std::size_t>(t)]) += before.A(t, e.query);
    Eigen::VectorXd r = -before.V * h;
    r(e.output) += 1.0;
    grad_V -= r * h.transpose();
    const Eigen::VectorXd g = before.V.transpose() * r;
    for (int t = 0; t < 10; ++t) grad_A(t, e.query) -= g(e.tokens[static_cast<std::size_t>(t)]);
  }
  grad_V /= static_cast<double>(B);
  grad_A /= static_cast<double>(B);
  const Eigen::MatrixXd Pi = Eigen::MatrixXd::Identity(10, 10) - Eigen::MatrixXd::Constant(10, 10, 0.1);
  const Eigen::MatrixXd expected_V = before.V - eta * grad_V * instance.mu.cwiseInverse().asDiagonal();
  Eigen::MatrixXd expected_A = before.A;
  for (int k = 0; k < 3; ++k) expected_A.col(k) -= eta_A / instance.mu(k) * Pi * grad_A.col(k);
  EXPECT_LT((model.V - expected_V).lpNorm<Eigen::Infinity>(), 1e-13);
  EXPECT_LT((model.A - expected_A).lpNorm<Eigen::Infinity>(), 1e-13);
}

TEST(SimScbOptimizers, Stage2ThresholdsEveryEntryWithoutReprojection) {
  const Instance instance = test_instance(5);
  const Sampler sampler(instance);
  LinearModel stage1 = initial_model(instance), stage2 = stage1;
  const double eta = 0.2, eta_A = 0.3, lambda = 0.01;
  Rng rng1(6), rng2(6);
  stage1_sgd_step(stage1, instance, sampler, 8, eta, eta_A, rng1);
  stage2_prox_sgd_step(stage2, instance, sampler, 8, eta, eta_A, lambda, rng2);
  EXPECT_EQ(stage1.V, stage2.V);
  for (Eigen::Index k = 0; k < stage1.A.cols(); ++k) {
    const double threshold = eta_A * lambda / instance.mu(k);
    for (Eigen::Index t = 0; t < stage1.A.rows(); ++t) {
      const double a = stage1.A(t, k);
      EXPECT_EQ(stage2.A(t, k), std::abs(a) <= threshold ? 0.0 : a - std::copysign(threshold, a));
    }
  }
}

TEST(SimScbOptimizers, PlainSgdIsTheRawGradientStep) {
  const Instance instance = test_instance(7, 3, 8, 2);
  const Sampler sampler(instance);
  LinearModel model = initial_model(instance);
  const LinearModel before = model;
  Rng rng(8), replay(8);
  SgdWorkspace workspace(3, 8);
  plain_sgd_step(model, sampler, 4, 0.1, 0.2, rng, workspace);
  SgdWorkspace check(3, 8);
  draw_batch_gradient(before, sampler, 4, replay, check);
  EXPECT_LT((model.V - (before.V - 0.1 / 4 * check.sums.V)).lpNorm<Eigen::Infinity>(), 1e-15);
  EXPECT_LT((model.A - (before.A - 0.2 / 4 * check.sums.A)).lpNorm<Eigen::Infinity>(), 1e-15);
}

TEST(SimScbOptimizers, SharedBatchGivesEachModelItsOwnSumsBitForBit) {
  // Three different models on one draw of the examples (B = 7: a partial last group) get, bit for bit, the sums
  // and the generator state that draw_batch_gradient gives each of them alone from the same state.
  const Instance instance = test_instance(11, 5, 40, 3);
  const Sampler sampler(instance);
  std::vector<LinearModel> models(3, initial_model(instance));
  models[1].A.col(2)(7) += 0.3;
  models[2].V(1, 4) -= 0.2;
  std::vector<BatchGradient> sums(3, BatchGradient(5, 40));
  const LinearModel* const model_ptrs[] = {&models[0], &models[1], &models[2]};
  BatchGradient* const sum_ptrs[] = {&sums[0], &sums[1], &sums[2]};
  std::array<Example, BatchGradient::kGroup> examples;
  Rng shared(12);
  draw_shared_batch_gradients(model_ptrs, sum_ptrs, sampler, 7, shared, examples);
  for (std::size_t i = 0; i < models.size(); ++i) {
    Rng alone(12);
    SgdWorkspace workspace(5, 40);
    draw_batch_gradient(models[i], sampler, 7, alone, workspace);
    EXPECT_EQ(sums[i].V, workspace.sums.V);
    EXPECT_EQ(sums[i].A, workspace.sums.A);
    EXPECT_EQ(sums[i].loss_sum, workspace.sums.loss_sum);
    EXPECT_EQ(sums[i].touched, workspace.sums.touched);
    Rng after = shared;
    EXPECT_EQ(after(), alone());
  }
  BatchGradient* const too_few[] = {&sums[0]};
  EXPECT_THROW(draw_shared_batch_gradients(model_ptrs, too_few, sampler, 7, shared, examples), std::invalid_argument);
}

TEST(SimScbOptimizers, StepsFromSharedSumsAreTheMethodsStepsBitForBit) {
  // Three runs (stage 1, stage 2 with l1, plain SGD) on one shared draw per step take, bit for bit, the steps that
  // stage1_sgd_step, stage2_prox_sgd_step and plain_sgd_step take alone from the same generator state (B = 11: a
  // partial last group), over several steps, and the generators end in the same state.
  const Instance instance = test_instance(13, 4, 24, 3);
  const Sampler sampler(instance);
  const double eta = 0.3, eta_A = 0.2, lambda = 2e-3;
  const long long B = 11;
  std::vector<LinearModel> shared(3, initial_model(instance));
  LinearModel stage1 = shared[0], stage2 = shared[1], plain = shared[2];
  std::vector<BatchGradient> sums(3, BatchGradient(4, 24));
  const LinearModel* const model_ptrs[] = {&shared[0], &shared[1], &shared[2]};
  BatchGradient* const sum_ptrs[] = {&sums[0], &sums[1], &sums[2]};
  std::array<Example, BatchGradient::kGroup> examples;
  Rng rng_shared(14), rng1(14), rng2(14), rng3(14);
  SgdWorkspace workspace(4, 24);
  for (int step = 0; step < 25; ++step) {
    draw_shared_batch_gradients(model_ptrs, sum_ptrs, sampler, B, rng_shared, examples);
    stage1_step_from_sums(shared[0], instance, sums[0], eta, eta_A);
    stage2_prox_step_from_sums(shared[1], instance, sums[1], eta, eta_A, lambda);
    plain_sgd_step_from_sums(shared[2], sums[2], eta, eta_A);
    stage1_sgd_step(stage1, instance, sampler, B, eta, eta_A, rng1, workspace);
    stage2_prox_sgd_step(stage2, instance, sampler, B, eta, eta_A, lambda, rng2, workspace);
    plain_sgd_step(plain, sampler, B, eta, eta_A, rng3, workspace);
  }
  EXPECT_EQ(shared[0].V, stage1.V);
  EXPECT_EQ(shared[0].A, stage1.A);
  EXPECT_EQ(shared[1].V, stage2.V);
  EXPECT_EQ(shared[1].A, stage2.A);
  EXPECT_EQ(shared[2].V, plain.V);
  EXPECT_EQ(shared[2].A, plain.A);
  EXPECT_NE(shared[0].A, shared[1].A);  // the threshold acted
  const std::uint64_t next = rng_shared();
  EXPECT_EQ(next, rng1());
  EXPECT_EQ(next, rng2());
  EXPECT_EQ(next, rng3());
  BatchGradient empty(4, 24);
  EXPECT_THROW(stage1_step_from_sums(shared[0], instance, empty, eta, eta_A), std::invalid_argument);
  EXPECT_THROW(stage2_prox_step_from_sums(shared[1], instance, sums[1], eta, eta_A, -1.0), std::invalid_argument);
  EXPECT_THROW(plain_sgd_step_from_sums(shared[2], sums[2], -eta, eta_A), std::invalid_argument);
}

TEST(SimScbOptimizers, SameSeedSameTrajectory) {
  const Instance instance = test_instance(9);
  const Sampler sampler(instance);
  LinearModel a = initial_model(instance), b = a;
  Rng rng_a(10), rng_b(10);
  for (int step = 0; step < 30; ++step) {
    stage2_prox_sgd_step(a, instance, sampler, 8, 0.4, 0.4, 1e-3, rng_a);
    stage2_prox_sgd_step(b, instance, sampler, 8, 0.4, 0.4, 1e-3, rng_b);
  }
  EXPECT_EQ(a.V, b.V);
  EXPECT_EQ(a.A, b.A);
  normalise(a);
  for (Eigen::Index k = 0; k < a.A.cols(); ++k) EXPECT_NEAR(a.A.col(k).sum(), 1.0, 1e-14);
}

TEST(SimScbOptimizers, RejectsBadArguments) {
  const Instance instance = test_instance(11);
  const Sampler sampler(instance);
  LinearModel model = initial_model(instance);
  Rng rng(1);
  EXPECT_THROW(stage1_sgd_step(model, instance, sampler, 0, 0.1, 0.1, rng), std::invalid_argument);
  EXPECT_THROW(stage1_sgd_step(model, instance, sampler, 4, -0.1, 0.1, rng), std::invalid_argument);
  EXPECT_THROW(stage2_prox_sgd_step(model, instance, sampler, 4, 0.1, 0.1, -1.0, rng), std::invalid_argument);
  model.A.resize(5, 4);
  EXPECT_THROW(plain_sgd_step(model, sampler, 4, 0.1, 0.1, rng), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::scb
