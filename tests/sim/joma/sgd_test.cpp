// sim/joma/sgd.hpp: the exact per-step invariant identities of specs/joma.md §2 hold under plain
// SGD to round-off for random settings (M_C, K, d, T, η_z/η_w, φ, loss, batch, init scale, data),
// and break measurably with momentum, weight decay or non-orthogonal embeddings.
#include "dyncheck/sim/joma/sgd.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "dyncheck/sim/joma/data.hpp"
#include "dyncheck/sim/joma/embeddings.hpp"
#include "dyncheck/sim/random/derive_stream.hpp"
#include "dyncheck/sim/random/fill_standard_normal.hpp"

namespace dyncheck::sim::joma {
namespace {

Eigen::MatrixXd standard_normal_matrix(Eigen::Index rows, Eigen::Index cols, Rng& rng) {
  Eigen::VectorXd values(rows * cols);
  fill_standard_normal(rng, values);
  return Eigen::Map<Eigen::MatrixXd>(values.data(), rows, cols);
}

struct Run {
  double residual;  ///< max over steps of |actual − predicted invariant change| / scale
};

enum class Control { none, momentum, weight_decay, non_orthogonal };

// Runs `steps` SGD steps and measures the identity residual, written here from the spec's
// formulas (independently of theory/), relative to 1 + |z|_∞ + κ Σ_k |v_k|².
Run run_identity(AttentionKernel kernel, Control control, std::uint64_t seed, Eigen::Index m, Eigen::Index k,
                 Eigen::Index extra_d, double T, double ratio, Activation activation, Loss loss, Eigen::Index batch,
                 double scale, double alpha, int steps) {
  Rng rng = derive_stream(seed, "sgd_test", 0);
  const Eigen::Index d = m + 1 + extra_d;
  const Embeddings U =
      control == Control::non_orthogonal ? perturbed_embeddings(d, m, 0.3, rng) : random_orthonormal_embeddings(d, m, rng);
  const int classes = 3;
  Readout readout{standard_normal_matrix(classes, k, rng), standard_normal_matrix(classes, classes, rng)};
  const JomaBlock block(U, {kernel, activation, loss, kernel == AttentionKernel::linear ? 1.0 : T, 0.1}, readout, k);
  BlockParameters p = gaussian_parameters(m, d, k, scale, scale, rng);
  if (kernel == AttentionKernel::linear) p.z.array() += 1.0;  // start z away from 0 (§7 claim 2)
  const double eta_w = 0.05;
  SgdSpec spec{ratio * eta_w, eta_w, 0, 0};
  if (control == Control::momentum) spec.momentum = 0.5;
  if (control == Control::weight_decay) spec.weight_decay = 0.05;
  JomaSgd sgd(spec);
  const double kappa = kernel == AttentionKernel::linear ? ratio : ratio / T;
  double residual = 0;
  for (int t = 0; t < steps; ++t) {
    const Batch data = dirichlet_batch(m, batch, alpha, classes, rng);
    const Eigen::VectorXd z0 = p.z;
    const Eigen::MatrixXd V0 = U.contextual.transpose() * p.W;
    sgd.step(block, p, data);
    const Eigen::MatrixXd V1 = U.contextual.transpose() * p.W;
    const Eigen::VectorXd sq0 = V0.array().square().rowwise().sum(), sq1 = V1.array().square().rowwise().sum();
    const Eigen::VectorXd dsq = (V1 - V0).array().square().rowwise().sum();
    Eigen::VectorXd mismatch;
    double size;
    if (kernel == AttentionKernel::linear) {
      mismatch = (p.z.array().square() - kappa * sq1.array()) - (z0.array().square() - kappa * sq0.array()) -
                 ((p.z - z0).array().square() - kappa * dsq.array());
      size = 1 + p.z.squaredNorm() + kappa * V1.squaredNorm();
    } else {
      mismatch = (p.z - kappa / 2 * sq1) - (z0 - kappa / 2 * sq0) + kappa / 2 * dsq;
      size = 1 + p.z.cwiseAbs().maxCoeff() + kappa * V1.squaredNorm();
    }
    residual = std::max(residual, mismatch.cwiseAbs().maxCoeff() / size);
  }
  return {residual};
}

Run random_run(AttentionKernel kernel, Control control) {
  const Eigen::Index m = *rc::gen::inRange(2, 65), k = *rc::gen::inRange(1, 33), extra = *rc::gen::inRange(0, 6);
  const double T = 0.2 + 0.1 * *rc::gen::inRange(0, 20);
  const double ratio = 0.1 * *rc::gen::inRange(1, 40);
  const auto activation = *rc::gen::element(Activation::identity, Activation::relu, Activation::leaky_relu,
                                            Activation::silu, Activation::tanh);
  const auto loss = *rc::gen::element(Loss::cross_entropy, Loss::squared, Loss::linear);
  const Eigen::Index batch = *rc::gen::inRange(1, 9);
  const double scale = 0.01 * *rc::gen::inRange(1, 100);
  const double alpha = 0.1 * *rc::gen::inRange(1, 30);
  return run_identity(kernel, control, *rc::gen::arbitrary<std::uint64_t>(), m, k, extra, T, ratio, activation, loss,
                      batch, scale, alpha, 20);
}

RC_GTEST_PROP(SimJomaSgd, ExpIdentityHoldsToRoundOff, ()) {
  RC_ASSERT(random_run(AttentionKernel::exp, Control::none).residual <= 1e-10);
}

RC_GTEST_PROP(SimJomaSgd, LinearIdentityHoldsToRoundOff, ()) {
  RC_ASSERT(random_run(AttentionKernel::linear, Control::none).residual <= 1e-10);
}

// The controls: a fixed, moderate setting where the broken identity shows far above round-off.
TEST(SimJomaSgd, MomentumWeightDecayAndNonOrthogonalEmbeddingsBreakTheIdentity) {
  for (AttentionKernel kernel : {AttentionKernel::exp, AttentionKernel::linear}) {
    const double plain = run_identity(kernel, Control::none, 7, 8, 4, 2, 0.7, 1.5, Activation::leaky_relu,
                                      Loss::cross_entropy, 4, 0.5, 1.0, 50)
                             .residual;
    EXPECT_LE(plain, 1e-12);
    for (Control control : {Control::momentum, Control::weight_decay, Control::non_orthogonal}) {
      const double broken = run_identity(kernel, control, 7, 8, 4, 2, 0.7, 1.5, Activation::leaky_relu,
                                         Loss::cross_entropy, 4, 0.5, 1.0, 50)
                                .residual;
      EXPECT_GE(broken, 1e-6) << static_cast<int>(control);
    }
  }
}

TEST(SimJomaSgd, RejectsBadRates) {
  EXPECT_THROW(JomaSgd({-1, 1, 0, 0}), std::invalid_argument);
  EXPECT_THROW(JomaSgd({1, 1, 1.0, 0}), std::invalid_argument);
  EXPECT_THROW(JomaSgd({1, 1, 0, -1}), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::joma
