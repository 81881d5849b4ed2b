// Unit tests of sim/multihead/layer.hpp.
#include "dyncheck/sim/multihead/layer.hpp"

#include <gtest/gtest.h>

#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/random/standard_normal.hpp"

namespace dyncheck::sim::multihead {
namespace {

Eigen::MatrixXd random_matrix(Rng& rng, int r, int c, double scale) {
  Eigen::MatrixXd m(r, c);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = scale * standard_normal(rng);
  return m;
}

Layer random_layer(Rng& rng, int d, int m) {
  Layer layer;
  for (int i = 0; i < m; ++i) {
    layer.theta.push_back(random_matrix(rng, d, d, 0.5));
    layer.w.push_back(random_matrix(rng, d, d, 1.0));
  }
  return layer;
}

TEST(MultiheadLayer, ZeroAttentionIsTheTokenMean) {
  Rng rng = derive_stream(1, "test", 0);
  Layer layer = random_layer(rng, 3, 1);
  layer.theta[0].setZero();
  Eigen::MatrixXd X;
  sample_gaussian(rng, 4, 3, X);
  const Eigen::MatrixXd expected = Eigen::MatrixXd::Constant(4, 4, 0.25) * X * layer.w[0];
  EXPECT_LT((forward(layer, X) - expected).cwiseAbs().maxCoeff(), 1e-14);
}

TEST(MultiheadLayer, OddAndTokenEquivariant) {
  Rng rng = derive_stream(2, "test", 0);
  const Layer layer = random_layer(rng, 3, 2);
  Eigen::MatrixXd X;
  sample_boolean(rng, 4, 3, X);
  EXPECT_LT((forward(layer, -X) + forward(layer, X)).cwiseAbs().maxCoeff(), 1e-13);
  Eigen::PermutationMatrix<Eigen::Dynamic> pi(4);
  pi.indices() << 2, 0, 3, 1;
  EXPECT_LT((forward(layer, pi * X) - pi * forward(layer, X)).cwiseAbs().maxCoeff(), 1e-13);
}

TEST(MultiheadLayer, HeadGradientMatchesCentralDifferences) {
  Rng rng = derive_stream(3, "test", 0);
  const Layer teacher = random_layer(rng, 3, 2);
  const Eigen::MatrixXd theta = random_matrix(rng, 3, 3, 0.4), w = random_matrix(rng, 3, 3, 1.0);
  Eigen::MatrixXd X;
  sample_gaussian(rng, 4, 3, X);
  const Eigen::MatrixXd Y = forward(teacher, X);
  const HeadGradient g = head_gradient(theta, w, X, Y);
  const double h = 1e-6;
  for (Eigen::Index i = 0; i < 9; ++i) {
    Eigen::MatrixXd tp = theta, tm = theta, wp = w, wm = w;
    tp.data()[i] += h;
    tm.data()[i] -= h;
    wp.data()[i] += h;
    wm.data()[i] -= h;
    const double fd_theta = (head_gradient(tp, w, X, Y).loss - head_gradient(tm, w, X, Y).loss) / (2 * h);
    const double fd_w = (head_gradient(theta, wp, X, Y).loss - head_gradient(theta, wm, X, Y).loss) / (2 * h);
    EXPECT_NEAR(fd_theta, g.theta.data()[i], 1e-6 * (1 + std::abs(fd_theta)));
    EXPECT_NEAR(fd_w, g.w.data()[i], 1e-6 * (1 + std::abs(fd_w)));
  }
}

TEST(MultiheadLayer, BooleanSamplerIsBalancedAndBiasedSamplerIsNot) {
  Rng rng = derive_stream(4, "test", 0);
  Eigen::MatrixXd X;
  double sum = 0, biased = 0;
  const int n = 20000;
  for (int j = 0; j < n; ++j) {
    sample_boolean(rng, 2, 2, X);
    sum += X.sum();
    sample_boolean(rng, 2, 2, X, 0.75);
    biased += X.sum();
  }
  // 4n = 80000 signs: sd of the mean 1/sqrt(80000) = 0.0035; 6 sd.
  EXPECT_LT(std::abs(sum / (4.0 * n)), 0.022);
  EXPECT_NEAR(biased / (4.0 * n), 0.5, 0.022);
}

TEST(MultiheadLayer, CubePointEnumeratesEverySignPattern) {
  Eigen::MatrixXd X;
  Eigen::MatrixXd total = Eigen::MatrixXd::Zero(2, 2);
  for (std::uint64_t i = 0; i < 16; ++i) {
    cube_point(i, 2, 2, X);
    total += X;
  }
  EXPECT_EQ(total.cwiseAbs().maxCoeff(), 0.0);
}

}  // namespace
}  // namespace dyncheck::sim::multihead
