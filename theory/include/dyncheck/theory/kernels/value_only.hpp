// dyncheck/theory/kernels/value_only.hpp
//
// specs/kernels.md A.4 D2 [derived]: with only W^V trained (H = 1), T = B W^V W^O with
// B = [S_1 X_1; ...; S_N X_N] fixed, so f is a linear least-squares loss and GD with step eta is
// the linear recurrence
//   R_{t+1} = R_t - eta P R_t Q_O,   P = B B' (Nn x Nn),  Q_O = W^O' W^O (d_out x d_out).
// With P = U diag(lambda) U', Q_O = V diag(mu) V' and C = U' R_0 V:
//   R_t = U (C o rho^t) V',  rho_ij = 1 - eta lambda_i mu_j,
//   f_t = 1/2 sum_ij C_ij^2 rho_ij^{2t}.
// If eta <= 1/(lambda_max mu_max), every |rho_ij| <= 1: f_t <= (1 - eta lambda_min mu_min)^{2t} f_0, the
// bound is attained asymptotically (f_{t+1}/f_t -> rho_min^2 for generic R_0), and when lambda_min = 0
// (rank B <= d < Nn) f_t tends to the least-squares floor 1/2 sum_{lambda_i mu_j = 0} C_ij^2.
// `rate_power` (2 in the theorem) is a knob for the mutants.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dyncheck/theory/numeric/eigen.hpp"

namespace dyncheck::theory::kernels {

/// x^k for an integer k >= 0 by repeated squaring (no transcendental function).
template <class S>
S integer_power(S x, long long k) {
  S result(1);
  while (k > 0) {
    if (k & 1) result *= x;
    x *= x;
    k >>= 1;
  }
  return result;
}

template <class S>
class ValueOnlyDynamics {
 public:
  /// B: Nn x d, W0: d x d, O: d x d_out, Y: Nn x d_out (rows stacked sample by sample).
  ValueOnlyDynamics(const Matrix<S>& B, const Matrix<S>& W0, const Matrix<S>& O, const Matrix<S>& Y, S eta,
                    int rate_power = 2)
      : eta_(eta), rate_power_(rate_power) {
    const Matrix<S> P = B * B.transpose();
    const Matrix<S> QO = O.transpose() * O;
    const Eigen::SelfAdjointEigenSolver<Matrix<S>> p(P), q(QO);
    lambda_ = p.eigenvalues();
    mu_ = q.eigenvalues();
    const Matrix<S> R0 = B * W0 * O - Y;
    C_ = p.eigenvectors().transpose() * R0 * q.eigenvectors();
    const S lambda_max = lambda_.maxCoeff() > S(0) ? lambda_.maxCoeff() : S(1);
    zero_ = lambda_max * zero_mode_threshold(B.rows(), B.cols(), O.cols());
  }

  /// The zero-mode threshold relative to lambda_max mu_max: a mode with lambda_i mu_j <= threshold lambda_max mu_max
  /// is a zero mode (counted in floor(), skipped by slowest_rho()). It follows the scalar: in S a zero eigenvalue
  /// of P = B B' (rank B <= d < Nn) does not come out as 0 but as the rounding of the inner products of length d
  /// that form P (<= d eps lambda_max) plus the backward error of the symmetric eigen-solver (a small multiple of
  /// Nn eps lambda_max), and the same holds for Q_O = O' O (size d_out, inner length d); their product with the
  /// other factor's eigenvalue stays below eps (k + d) lambda_max mu_max, k = max(Nn, d_out). The threshold is 16
  /// times that (16: a margin over the solver's O(1) constants): ~3e-14 in double at Nn = 6, d = 4 (a zero mode is
  /// there ~1e-16 lambda_max), ~1e-46 in 50 digits. A genuinely nonzero mode below it is not resolved in S anyway (its
  /// rate 1 - eta lambda mu differs from 1 by less than the rounding of 1). (A fixed 1e-40, the old threshold, is
  /// below double's rounding: the zero modes of a rank-deficient P were taken for slow nonzero modes and the floor
  /// came out too small.)
  static S zero_mode_threshold(Eigen::Index Nn, Eigen::Index d, Eigen::Index d_out) {
    const auto k = static_cast<double>(std::max(Nn, d_out) + d);
    return S(16 * k) * std::numeric_limits<S>::epsilon();
  }

  const Vector<S>& lambda() const { return lambda_; }  ///< eigenvalues of P = BB', ascending
  const Vector<S>& mu() const { return mu_; }          ///< eigenvalues of Q_O, ascending
  S lambda_min() const { return lambda_(0); }
  S lambda_max() const { return lambda_(lambda_.size() - 1); }

  /// rho_ij = 1 - eta lambda_i mu_j.
  S rho(Eigen::Index i, Eigen::Index j) const { return S(1) - eta_ * lambda_(i) * mu_(j); }

  /// f_t = 1/2 sum C_ij^2 rho_ij^{rate_power t}.
  S loss(long long t) const {
    S f(0);
    for (Eigen::Index i = 0; i < C_.rows(); ++i) {
      for (Eigen::Index j = 0; j < C_.cols(); ++j) f += C_(i, j) * C_(i, j) * integer_power(rho(i, j), rate_power_ * t);
    }
    return f / S(2);
  }

  /// The least-squares floor: 1/2 sum of C_ij^2 over the zero modes (zero_mode_threshold).
  S floor() const {
    S f(0);
    const S mu_max = mu_.maxCoeff() > S(0) ? mu_.maxCoeff() : S(1);
    for (Eigen::Index i = 0; i < C_.rows(); ++i) {
      for (Eigen::Index j = 0; j < C_.cols(); ++j) {
        if (lambda_(i) * mu_(j) <= zero_ * mu_max) f += C_(i, j) * C_(i, j);
      }
    }
    return f / S(2);
  }

  /// The part of f_t carried by the nonzero modes (f_t - floor).
  S transient(long long t) const { return loss(t) - floor(); }

  /// The slowest nonzero mode's |rho| (the asymptotic rate of R; f decays as its square).
  S slowest_rho() const {
    using std::abs;  // double; multiprecision abs is found by argument-dependent lookup
    S slowest(0);
    const S mu_max = mu_.maxCoeff() > S(0) ? mu_.maxCoeff() : S(1);
    for (Eigen::Index i = 0; i < C_.rows(); ++i) {
      for (Eigen::Index j = 0; j < C_.cols(); ++j) {
        if (lambda_(i) * mu_(j) <= zero_ * mu_max) continue;
        const S r = abs(rho(i, j));
        if (r > slowest) slowest = r;
      }
    }
    return slowest;
  }

 private:
  S eta_;
  int rate_power_;
  Vector<S> lambda_, mu_;
  Matrix<S> C_;
  S zero_;
};

}  // namespace dyncheck::theory::kernels
