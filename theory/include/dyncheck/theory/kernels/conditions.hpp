// dyncheck/theory/kernels/conditions.hpp
//
// The computable conditions of specs/kernels.md A.3 [reconstructed], evaluated on one instance (inputs X_i and
// heads W_h^Q, W_h^K, W_h^V, W_h^O), from the exact Jacobians of attention.hpp (D1):
//   lambda_V = lambda_min(J_V J_V') = lambda_min(sum_h (W_h^O)' W_h^O (x) B_h B_h'),  B_h = [S_1h X_1; ...; S_Nh X_N]
//              (A-T1; for H = 1 and W^O = I_d it is lambda_min(BB')), > 0 only if d >= Nn (rank B_h <= d);
//   lambda_Q = lambda_min(J_Q J_Q'), J_Q = d vec(T)/d vec(W^Q) (A-T3);
//   d >= Nn (A-T1's and A-T3's dimension condition: sufficient, not necessary, for lambda_Q > 0);
//   the learning-rate bound of the W^V-only problem, exactly quadratic with Hessian J_V'J_V: GD contracts for
//   eta <= 1/L with L = lambda_max(J_V J_V') (the step the A-T1 claims use); for the other problems A.3 only says
//   "eta <= 1/L with L a local smoothness bound", whose constant is unknown (the claims use Armijo).
// Double precision, symmetric eigensolver: a computed eigenvalue errs by up to a small multiple of
// u (rows + columns) |J|_F^2 (Weyl), reported as `rounding`, so a lambda below it is not resolved from 0.
#pragma once

#include <Eigen/Eigenvalues>
#include <limits>
#include <vector>

#include "dyncheck/theory/kernels/attention.hpp"

namespace dyncheck::theory::kernels {

struct Conditions {
  double lambda_V = 0, lambda_V_max = 0;  ///< extreme eigenvalues of J_V J_V'
  double lambda_Q = 0;                    ///< lambda_min(J_Q J_Q')
  double rounding_V = 0, rounding_Q = 0;  ///< 4 gamma_{rows + columns} |J|_F^2: eigenvalues below are not resolved
  bool d_at_least_Nn = false;
  double eta_max_value_only = 0;  ///< 1 / lambda_V_max: the W^V-only step bound
};

inline Conditions evaluate_conditions(const KernelSpec& spec, const std::vector<Matrix<double>>& X,
                                      const std::vector<Head<double>>& heads) {
  if (X.empty() || heads.empty()) throw std::invalid_argument("evaluate_conditions: needs N >= 1 inputs and H >= 1 heads");
  const double u = std::numeric_limits<double>::epsilon() / 2;
  auto extremes = [&](const TrainedBlocks& blocks, double& lo, double& hi, double& rounding) {
    const Matrix<double> J = jacobian<double>(spec, X, heads, blocks);
    const Eigen::SelfAdjointEigenSolver<Matrix<double>> eig(J * J.transpose(), Eigen::EigenvaluesOnly);
    lo = eig.eigenvalues()(0);
    hi = eig.eigenvalues()(eig.eigenvalues().size() - 1);
    const double k = static_cast<double>(J.rows() + J.cols());
    rounding = 4 * (k * u / (1 - k * u)) * J.squaredNorm();
  };
  Conditions c;
  extremes(TrainedBlocks{false, false, true}, c.lambda_V, c.lambda_V_max, c.rounding_V);
  double q_max = 0;
  extremes(TrainedBlocks{true, false, false}, c.lambda_Q, q_max, c.rounding_Q);
  const Eigen::Index N = static_cast<Eigen::Index>(X.size()), n = X[0].rows(), d = X[0].cols();
  c.d_at_least_Nn = d >= N * n;
  c.eta_max_value_only = c.lambda_V_max > 0 ? 1 / c.lambda_V_max : std::numeric_limits<double>::infinity();
  return c;
}

}  // namespace dyncheck::theory::kernels
