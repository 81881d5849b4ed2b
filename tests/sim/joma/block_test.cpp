// sim/joma/block.hpp: the hand-written backward pass against central finite differences for every
// kernel, activation and loss, with orthonormal and with non-orthogonal embeddings.
#include "dyncheck/sim/joma/block.hpp"

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

RC_GTEST_PROP(SimJomaBlock, GradientMatchesFiniteDifferences, ()) {
  const auto kernel = *rc::gen::element(AttentionKernel::linear, AttentionKernel::exp, AttentionKernel::softmax);
  const auto activation = *rc::gen::element(Activation::identity, Activation::relu, Activation::leaky_relu,
                                            Activation::silu, Activation::tanh);
  const auto loss = *rc::gen::element(Loss::cross_entropy, Loss::squared, Loss::linear);
  const Eigen::Index m = *rc::gen::inRange(2, 7), k = *rc::gen::inRange(1, 5);
  const Eigen::Index d = m + 1 + *rc::gen::inRange(0, 3);
  const bool orthonormal = *rc::gen::arbitrary<bool>();
  Rng rng = derive_stream(*rc::gen::arbitrary<std::uint64_t>(), "block_test", 0);
  const Embeddings U = orthonormal ? random_orthonormal_embeddings(d, m, rng) : perturbed_embeddings(d, m, 0.5, rng);
  BlockSpec spec{kernel, activation, loss, 0.5 + 0.1 * *rc::gen::inRange(0, 10), 0.1};
  Readout readout;
  const int classes = 3;
  readout.A = standard_normal_matrix(classes, k, rng);
  readout.G = standard_normal_matrix(classes, classes, rng);
  const JomaBlock block(U, spec, readout, k);
  BlockParameters p = gaussian_parameters(m, d, k, 0.5, 0.5, rng);
  const Batch batch = dirichlet_batch(m, 3, 1.0, classes, rng);
  const BlockGradient g = block.gradient(p, batch);
  const double h = 1e-6;
  for (Eigen::Index i = 0; i < m; ++i) {
    BlockParameters plus = p, minus = p;
    plus.z[i] += h;
    minus.z[i] -= h;
    const double fd = (block.gradient(plus, batch).loss - block.gradient(minus, batch).loss) / (2 * h);
    RC_ASSERT(std::abs(fd - g.z[i]) <= 1e-5 * (1 + std::abs(fd)));
  }
  for (Eigen::Index i = 0; i < p.W.size(); ++i) {
    BlockParameters plus = p, minus = p;
    plus.W.data()[i] += h;
    minus.W.data()[i] -= h;
    const double fd = (block.gradient(plus, batch).loss - block.gradient(minus, batch).loss) / (2 * h);
    RC_ASSERT(std::abs(fd - g.W.data()[i]) <= 1e-5 * (1 + std::abs(fd)));
  }
}

TEST(SimJomaBlock, SoftmaxAttentionSumsToOne) {
  Rng rng = derive_stream(1, "softmax", 0);
  const JomaBlock block(identity_embeddings(6, 4), {AttentionKernel::softmax, Activation::identity,
                                                    Loss::cross_entropy, 0.5, 0.1},
                        {}, 4);
  const Batch batch = dirichlet_batch(4, 5, 1.0, 4, rng);
  const Eigen::MatrixXd b = block.attention(Eigen::VectorXd::LinSpaced(4, -1, 2), batch.x);
  for (Eigen::Index s = 0; s < 5; ++s) EXPECT_NEAR(b.col(s).sum(), 1.0, 1e-15);
}

TEST(SimJomaBlock, RejectsInconsistentShapes) {
  EXPECT_THROW(JomaBlock(identity_embeddings(6, 4), {}, {}, 0), std::invalid_argument);
  EXPECT_THROW(identity_embeddings(4, 4), std::invalid_argument);
  BlockSpec spec;
  spec.temperature = 0;
  EXPECT_THROW(JomaBlock(identity_embeddings(6, 4), spec, {}, 2), std::invalid_argument);
}

TEST(SimJomaEmbeddings, OrthonormalHasZeroCosineAndPerturbedDoesNot) {
  Rng rng = derive_stream(2, "embeddings", 0);
  EXPECT_LT(mean_absolute_cosine(random_orthonormal_embeddings(30, 20, rng)), 1e-14);
  EXPECT_GT(mean_absolute_cosine(perturbed_embeddings(30, 20, 0.3, rng)), 0.01);
}

TEST(SimJomaData, Figure23ColumnsAreDistributions) {
  Rng rng = derive_stream(3, "figure", 0);
  const Eigen::MatrixXd X = figure_2_3_token_distributions(10, 10, 20, true, rng);
  for (Eigen::Index y = 0; y < 20; ++y) EXPECT_NEAR(X.col(y).sum(), 1.0, 1e-15);
  EXPECT_GE(X.minCoeff(), 0.0);
}

}  // namespace
}  // namespace dyncheck::sim::joma
