// Tests of sim/scb/softmax_model.hpp: softmax, the W-gradient through the softmax Jacobian
// against finite differences, and the batch shared with the linear model.

#include "dyncheck/sim/scb/softmax_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "dyncheck/sim/scb/optimizers.hpp"

namespace dyncheck::sim::scb {
namespace {

Instance test_instance(std::uint64_t seed, int N = 3, int T = 7, int Q = 2) {
  Rng rng(seed);
  return random_instance({.N = N, .T = T, .Q = Q}, rng);
}

double softmax_sample_loss(const SoftmaxModel& model, const Example& example) {
  LinearModel linear{model.V, attention_matrix(model)};
  return sample_loss(linear, example);
}

TEST(SimScbSoftmaxModel, SoftmaxIsStableAndNormalised) {
  Eigen::VectorXd w(4), a(4);
  w << 1000.0, 999.0, -5.0, 0.0;
  softmax(w, a);
  EXPECT_NEAR(a.sum(), 1.0, 1e-15);
  EXPECT_NEAR(a(0) / a(1), std::exp(1.0), 1e-12);
  w.setZero();
  softmax(w, a);
  for (Eigen::Index t = 0; t < 4; ++t) EXPECT_EQ(a(t), 0.25);
  w(2) = std::nan("");
  EXPECT_THROW(softmax(w, a), std::invalid_argument);
}

TEST(SimScbSoftmaxModel, LogitGradientMatchesFiniteDifferences) {
  const Instance instance = test_instance(1);
  const Sampler sampler(instance);
  SoftmaxModel model = initial_softmax_model(instance);
  Rng init(2);
  for (Eigen::Index i = 0; i < model.W.size(); ++i) model.W.data()[i] = static_cast<double>(init() >> 11U) * 0x1.0p-53;
  model.V.array() += 0.2;
  SoftmaxWorkspace workspace(instance.N(), instance.T, 1);
  Rng rng(3), replay(3);
  draw_softmax_batch_gradient(model, sampler, 1, rng, workspace);
  const Example example = sampler.sample(replay);
  const double h = 1e-5;  // smooth loss: central differences err by O(h²) ≈ 1e-10
  for (Eigen::Index i = 0; i < model.W.size(); ++i) {
    SoftmaxModel plus = model, minus = model;
    plus.W.data()[i] += h;
    minus.W.data()[i] -= h;
    const double numeric = (softmax_sample_loss(plus, example) - softmax_sample_loss(minus, example)) / (2 * h);
    EXPECT_NEAR(workspace.grad_W.data()[i], numeric, 1e-9) << i;
  }
  for (Eigen::Index i = 0; i < model.V.size(); ++i) {
    SoftmaxModel plus = model, minus = model;
    plus.V.data()[i] += h;
    minus.V.data()[i] -= h;
    const double numeric = (softmax_sample_loss(plus, example) - softmax_sample_loss(minus, example)) / (2 * h);
    EXPECT_NEAR(workspace.sums.V.data()[i], numeric, 1e-9) << i;
  }
}

TEST(SimScbSoftmaxModel, UniformAttentionStepSharesTheLinearBatch) {
  // At W = 0 the softmax model is the linear model at a = 1/T; from the same engine state the
  // two steps draw the same batch, so their V-updates agree to round-off.
  const Instance instance = test_instance(4, 4, 20, 3);
  const Sampler sampler(instance);
  SoftmaxModel softmax_model = initial_softmax_model(instance);
  LinearModel linear = initial_model(instance);
  Rng rng_s(5), rng_l(5);
  softmax_sgd_step(softmax_model, sampler, 32, 0.3, 0.5, rng_s);
  plain_sgd_step(linear, sampler, 32, 0.3, 0.0, rng_l);
  EXPECT_EQ(rng_s, rng_l);
  EXPECT_LT((softmax_model.V - linear.V).lpNorm<Eigen::Infinity>(), 1e-15);
  for (Eigen::Index k = 0; k < softmax_model.W.cols(); ++k) EXPECT_NEAR(softmax_model.W.col(k).sum(), 0.0, 1e-15);
}

TEST(SimScbSoftmaxModel, RejectsBadArguments) {
  const Instance instance = test_instance(6);
  const Sampler sampler(instance);
  SoftmaxModel model = initial_softmax_model(instance);
  Rng rng(1);
  EXPECT_THROW(softmax_sgd_step(model, sampler, 0, 0.1, 0.1, rng), std::invalid_argument);
  EXPECT_THROW(softmax_sgd_step(model, sampler, 2, 0.1, -0.1, rng), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::scb
