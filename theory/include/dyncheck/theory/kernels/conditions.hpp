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
// Double precision, symmetric eigensolver on the smaller Gram matrix (J J' when J has no more rows than columns,
// else J'J, whose nonzero eigenvalues are the same): a computed eigenvalue errs by up to a small multiple of
// u (rows + columns) |J|_F^2 (Weyl), reported as `rounding`, so a lambda below it is not resolved from 0. When J
// has more rows than columns, lambda_min(J J') = 0 exactly (rank J <= columns) and is returned as 0 with
// `*_zero_by_shape` set: for J_V that is N n d_out > H d^2 (e.g. d < Nn with d_out = d), for J_Q N n d_out > H d^2.
// The inputs' shapes are checked (std::invalid_argument naming the argument): X_i all n x d, W^Q, W^K, W^V d x d,
// W^O d x d_out with one d_out for every head.
#pragma once

#include <Eigen/Eigenvalues>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dyncheck/theory/kernels/attention.hpp"

namespace dyncheck::theory::kernels {

struct Conditions {
  double lambda_V = 0, lambda_V_max = 0;  ///< extreme eigenvalues of J_V J_V'
  double lambda_Q = 0;                    ///< lambda_min(J_Q J_Q')
  double rounding_V = 0, rounding_Q = 0;  ///< 4 gamma_{rows + columns} |J|_F^2: eigenvalues below are not resolved
  bool zero_V_by_shape = false, zero_Q_by_shape = false;  ///< J has more rows than columns: lambda_min = 0 exactly
  bool d_at_least_Nn = false;
  double eta_max_value_only = 0;  ///< 1 / lambda_V_max: the W^V-only step bound
};

/// `with_value_block = false` skips J_V (lambda_V, lambda_V_max, rounding_V and eta_max_value_only stay 0): for a
/// caller that needs only lambda_Q (half the work).
inline Conditions evaluate_conditions(const KernelSpec& spec, const std::vector<Matrix<double>>& X,
                                      const std::vector<Head<double>>& heads, bool with_value_block = true) {
  if (X.empty() || heads.empty()) throw std::invalid_argument("evaluate_conditions: needs N >= 1 inputs and H >= 1 heads");
  const Eigen::Index n0 = X[0].rows(), d0 = X[0].cols(), d_out = heads[0].O.cols();
  if (n0 < 1 || d0 < 1) throw std::invalid_argument("evaluate_conditions: X[0] must be n x d with n, d >= 1");
  for (std::size_t i = 0; i < X.size(); ++i) {
    if (X[i].rows() != n0 || X[i].cols() != d0) {
      throw std::invalid_argument("evaluate_conditions: every X[i] must be n x d like X[0]; X[" + std::to_string(i) +
                                  "] is " + std::to_string(X[i].rows()) + " x " + std::to_string(X[i].cols()));
    }
  }
  if (d_out < 1) throw std::invalid_argument("evaluate_conditions: W^O must have d_out >= 1 columns");
  for (std::size_t i = 0; i < X.size(); ++i) {
    if (!X[i].allFinite()) throw std::invalid_argument("evaluate_conditions: X[" + std::to_string(i) + "] has a NaN or infinite entry");
  }
  for (std::size_t h = 0; h < heads.size(); ++h) {
    const Head<double>& w = heads[h];
    const std::string at = " of head " + std::to_string(h);
    for (const auto& [M, name] : {std::pair{&w.Q, "W^Q"}, std::pair{&w.K, "W^K"}, std::pair{&w.V, "W^V"}}) {
      if (M->rows() != d0 || M->cols() != d0) {
        throw std::invalid_argument(std::string("evaluate_conditions: ") + name + at + " must be d x d (d = " +
                                    std::to_string(d0) + ", the columns of X)");
      }
    }
    if (!w.Q.allFinite() || !w.K.allFinite() || !w.V.allFinite() || !w.O.allFinite()) {
      throw std::invalid_argument("evaluate_conditions: a weight" + at + " has a NaN or infinite entry");
    }
    if (w.O.rows() != d0 || w.O.cols() != d_out) {
      throw std::invalid_argument("evaluate_conditions: W^O" + at + " must be d x d_out like head 0's (" +
                                  std::to_string(d0) + " x " + std::to_string(d_out) + ")");
    }
  }
  const double u = std::numeric_limits<double>::epsilon() / 2;
  auto extremes = [&](const TrainedBlocks& blocks, double& lo, double& hi, double& rounding, bool& zero_by_shape) {
    const Matrix<double> J = jacobian<double>(spec, X, heads, blocks);
    zero_by_shape = J.rows() > J.cols();
    const Matrix<double> gram = zero_by_shape ? Matrix<double>(J.transpose() * J) : Matrix<double>(J * J.transpose());
    const Eigen::SelfAdjointEigenSolver<Matrix<double>> eig(gram, Eigen::EigenvaluesOnly);
    lo = zero_by_shape ? 0.0 : eig.eigenvalues()(0);
    hi = eig.eigenvalues()(eig.eigenvalues().size() - 1);
    const double k = static_cast<double>(J.rows() + J.cols());
    rounding = 4 * (k * u / (1 - k * u)) * J.squaredNorm();
  };
  Conditions c;
  if (with_value_block) extremes(TrainedBlocks{false, false, true}, c.lambda_V, c.lambda_V_max, c.rounding_V, c.zero_V_by_shape);
  double q_max = 0;
  extremes(TrainedBlocks{true, false, false}, c.lambda_Q, q_max, c.rounding_Q, c.zero_Q_by_shape);
  const Eigen::Index N = static_cast<Eigen::Index>(X.size()), n = X[0].rows(), d = X[0].cols();
  c.d_at_least_Nn = d >= N * n;
  if (with_value_block) {
    c.eta_max_value_only = c.lambda_V_max > 0 ? 1 / c.lambda_V_max : std::numeric_limits<double>::infinity();
  }
  return c;
}

}  // namespace dyncheck::theory::kernels
