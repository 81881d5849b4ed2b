// Tests of theory/kernels/reachable.hpp (specs/kernels.md A.4 D5, the Gaussian reachable-set test), as
// properties over random keys, queries and sizes on both sides of d_k = n - 1:
//  - a coefficient row made by a query is realisable, and the witness reproduces it;
//  - perturbing one coefficient of an overdetermined row (n >= d_k + 2) makes it unrealisable;
//  - two spheres are realisable iff they intersect (|k_1 - k_2| <= r_1 + r_2 and >= |r_1 - r_2|).

#include "dyncheck/theory/kernels/reachable.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

namespace dyncheck::theory::kernels {
namespace {

Eigen::MatrixXd random_matrix(int rows, int cols, double scale) {
  Eigen::MatrixXd M(rows, cols);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) M(i, j) = scale * static_cast<double>(*rc::gen::inRange(-1000, 1001)) / 1000.0;
  }
  return M;
}

Eigen::VectorXd gaussian_row(const Eigen::MatrixXd& K, const Eigen::VectorXd& q, double c_scale) {
  Eigen::VectorXd c(K.rows());
  for (Eigen::Index b = 0; b < K.rows(); ++b) c(b) = std::exp(-(q - K.row(b).transpose()).squaredNorm() / c_scale);
  return c;
}

RC_GTEST_PROP(TheoryKernelsReachable, RowsMadeByAQueryAreRealisedByTheWitness, ()) {
  const int n = *rc::gen::inRange(1, 9);
  const int dk = *rc::gen::inRange(1, 13);
  const int d = *rc::gen::inRange(1, 65);
  const double c_scale = 2 * std::sqrt(static_cast<double>(d));
  const double s = *rc::gen::element(0.1, 0.5, 1.0, 2.0);
  const Eigen::MatrixXd K = random_matrix(n, dk, s);
  const Eigen::VectorXd q = random_matrix(dk, 1, s);
  const Eigen::VectorXd c = gaussian_row(K, q, c_scale);
  RC_PRE(c.minCoeff() > 1e-200);
  const RowRealisability r = gaussian_row_realisable(K, c, c_scale, 1e-8);
  RC_ASSERT(r.realisable);
  // the witness lies on every sphere: its log-coefficients agree to the rounding of the solve
  const Eigen::VectorXd w = gaussian_row(K, r.witness, c_scale);
  for (Eigen::Index b = 0; b < n; ++b) {
    const double log_c = std::log(c(b));
    RC_ASSERT(std::abs(std::log(w(b)) - log_c) <= 1e-6 * (1 + std::abs(log_c)));
  }
}

RC_GTEST_PROP(TheoryKernelsReachable, PerturbedOverdeterminedRowsAreNotRealisable, ()) {
  const int dk = *rc::gen::inRange(1, 7);
  const int n = dk + *rc::gen::inRange(2, 4);
  const double c_scale = 2 * std::sqrt(static_cast<double>(*rc::gen::inRange(1, 65)));
  const Eigen::MatrixXd K = random_matrix(n, dk, 1.0);
  const Eigen::VectorXd q = random_matrix(dk, 1, 1.0);
  Eigen::VectorXd c = gaussian_row(K, q, c_scale);
  const int b = *rc::gen::inRange(0, n);
  c(b) *= 0.5;  // r_b^2 grows by c_scale ln 2: the n - 1 > d_k equations no longer share a solution
  // generic position: the system without row b must pin q down (rank d_k), else the perturbation can be absorbed
  Eigen::MatrixXd A(n - 2, dk);
  for (int i = 0, row = 0; i < n; ++i) {
    if (i == b || i == (b == 0 ? 1 : 0)) continue;
    A.row(row++) = K.row(i) - K.row(b == 0 ? 1 : 0);
  }
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(A);
  RC_PRE(svd.singularValues().size() == dk && svd.singularValues()(dk - 1) > 1e-3 * svd.singularValues()(0));
  const RowRealisability r = gaussian_row_realisable(K, c, c_scale, 1e-8);
  RC_ASSERT(!r.realisable);
}

RC_GTEST_PROP(TheoryKernelsReachable, TwoSpheresAreRealisableIffTheyIntersect, ()) {
  const int dk = *rc::gen::inRange(2, 6);
  const double c_scale = 2 * std::sqrt(static_cast<double>(*rc::gen::inRange(1, 65)));
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(2, dk);
  const double L = static_cast<double>(*rc::gen::inRange(1, 400)) / 100.0;
  K(1, 0) = L;
  const double r1 = static_cast<double>(*rc::gen::inRange(1, 400)) / 100.0;
  const double r2 = static_cast<double>(*rc::gen::inRange(1, 400)) / 100.0;
  const double margin = 1e-3;
  const bool meet = L <= r1 + r2 - margin && L >= std::abs(r1 - r2) + margin;
  const bool apart = L >= r1 + r2 + margin || L <= std::abs(r1 - r2) - margin;
  RC_PRE(meet || apart);
  const Eigen::VectorXd c = (Eigen::VectorXd(2) << std::exp(-r1 * r1 / c_scale), std::exp(-r2 * r2 / c_scale)).finished();
  RC_ASSERT(gaussian_row_realisable(K, c, c_scale, 1e-10).realisable == meet);
}

TEST(TheoryKernelsReachable, TangentSpheresMeetInOnePointWithoutNullSpace) {
  // d_k = 1: keys 0 and 2, radii 1 and 1 meet at q = 1 only
  Eigen::MatrixXd K(2, 1);
  K << 0.0, 2.0;
  const double c_scale = 2.0;
  const Eigen::VectorXd c = Eigen::VectorXd::Constant(2, std::exp(-1.0 / c_scale));
  const RowRealisability r = gaussian_row_realisable(K, c, c_scale, 1e-12);
  EXPECT_TRUE(r.realisable);
  EXPECT_EQ(r.null_dimension, 0);
  EXPECT_NEAR(r.witness(0), 1.0, 1e-12);
}

}  // namespace
}  // namespace dyncheck::theory::kernels
