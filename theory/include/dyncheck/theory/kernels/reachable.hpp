// dyncheck/theory/kernels/reachable.hpp
//
// specs/kernels.md A.4 D5 [derived]: the Gaussian reachable-set test. An unnormalised Gaussian attention
// row has coefficients c_b = exp(-|q - k_b|^2 / (2 sqrt d)) in (0, 1], so a coefficient vector c is
// realisable by some query q iff the spheres |q - k_b| = r_b, r_b^2 := -2 sqrt(d) ln c_b, intersect:
//   1. subtracting sphere 1 from sphere b (b = 2..n) gives the linear system
//        2 (k_b - k_1)' q = r_1^2 - r_b^2 + |k_b|^2 - |k_1|^2,       A q = h;
//   2. q0 = its solution closest to k_1 (k_1 + A^+ (h - A k_1));
//   3. the spheres intersect iff the system is consistent and |q0 - k_1| <= r_1: then every
//      q = q0 + v with v in null(A), |v|^2 = r_1^2 - |q0 - k_1|^2 lies on all n spheres (v is orthogonal to
//      every k_b - k_1, so |q - k_b|^2 - |q - k_1|^2 is the same for every such v). A strictly positive
//      slack r_1^2 - |q0 - k_1|^2 needs null(A) != {0}, i.e. rank A < d_k.
// With a Gaussian teacher the targets are realisable by construction; this test certifies realisability of
// a given coefficient row (or refutes it) without a teacher. The keys are the rows of K (n x d_k).
#pragma once

#include "dyncheck/portable/math.hpp"
#include <Eigen/Dense>
#include <cmath>

namespace dyncheck::theory::kernels {

struct RowRealisability {
  bool realisable = false;
  double inconsistency = 0;  ///< |A q0 - h| / (|h| + |A| |k_1|): the linear system's relative residual
  double slack = 0;          ///< r_1^2 - |q0 - k_1|^2 (>= 0 needed)
  Eigen::Index null_dimension = 0;
  Eigen::VectorXd witness;   ///< a q on every sphere when realisable (q0 + v), else q0
};

/// D5 for one row: keys K (n x d_k), coefficients c in (0, 1]^n, kernel scale c_scale = 2 sqrt(d)
/// (so r_b^2 = -c_scale ln c_b). `tolerance` is relative: the system counts as consistent when its
/// relative residual is <= tolerance, and the slack counts as >= 0 (and as 0) within tolerance r_max^2.
inline RowRealisability gaussian_row_realisable(const Eigen::MatrixXd& K, const Eigen::VectorXd& c, double c_scale,
                                                double tolerance = 1e-10) {
  const Eigen::Index n = K.rows(), dk = K.cols();
  Eigen::VectorXd r2(n);
  for (Eigen::Index b = 0; b < n; ++b) r2(b) = -c_scale * portable::log(c(b));
  RowRealisability result;
  const Eigen::RowVectorXd k1 = K.row(0);
  if (n == 1) {
    result.null_dimension = dk;
    result.slack = r2(0);
    result.witness = k1.transpose();
    result.witness(0) += std::sqrt(r2(0));
    result.realisable = true;
    return result;
  }
  Eigen::MatrixXd A(n - 1, dk);
  Eigen::VectorXd h(n - 1);
  for (Eigen::Index b = 1; b < n; ++b) {
    A.row(b - 1) = 2 * (K.row(b) - k1);
    h(b - 1) = r2(0) - r2(b) + K.row(b).squaredNorm() - k1.squaredNorm();
  }
  // minimum-norm solution of A z = h - A k_1, z = q - k_1 (so q0 is the solution closest to k_1)
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeFullV | Eigen::ComputeThinU);
  const double s_max = svd.singularValues().size() > 0 ? svd.singularValues()(0) : 0.0;
  Eigen::Index rank = 0;
  for (Eigen::Index i = 0; i < svd.singularValues().size(); ++i) {
    if (svd.singularValues()(i) > s_max * 1e-12 * static_cast<double>(std::max(n, dk))) ++rank;
  }
  const Eigen::VectorXd rhs = h - A * k1.transpose();
  Eigen::VectorXd z = Eigen::VectorXd::Zero(dk);
  const Eigen::VectorXd Ut_rhs = svd.matrixU().transpose() * rhs;
  for (Eigen::Index i = 0; i < rank; ++i) z += svd.matrixV().col(i) * (Ut_rhs(i) / svd.singularValues()(i));
  const Eigen::VectorXd q0 = k1.transpose() + z;
  result.inconsistency = (A * q0 - h).norm() / (h.norm() + s_max * k1.norm() + 1e-300);
  result.slack = r2(0) - z.squaredNorm();
  result.null_dimension = dk - rank;
  result.witness = q0;
  const double scale = r2.maxCoeff() + z.squaredNorm() + 1e-300;
  const bool consistent = result.inconsistency <= tolerance;
  const bool touching = std::abs(result.slack) <= tolerance * scale;
  if (!consistent || result.slack < -tolerance * scale) return result;
  if (touching) {
    result.realisable = true;
    return result;
  }
  if (result.null_dimension == 0) return result;  // the spheres meet in a point only if the slack is 0
  result.witness = q0 + std::sqrt(result.slack) * svd.matrixV().col(rank);
  result.realisable = true;
  return result;
}

}  // namespace dyncheck::theory::kernels
