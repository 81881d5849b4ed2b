#pragma once
// Mean dynamics of SGD on noisy linear regression, and of its gradient-flow limit.
//
// Population loss L(w) = ½ E[(xᵀw − y)²] with E[xxᵀ] = H, y = xᵀw_* + σε. A stochastic
// gradient is unbiased and affine in w, so the mean of SGD with step η follows gradient
// descent exactly, E w_k − w_* = (I − ηH)^k (w_0 − w_*), and gradient flow gives
// w(t) − w_* = e^{−tH}(w_0 − w_*). Everything is evaluated in the eigenbasis H = QΛQᵀ,
// computed once in the scalar type S (50 or 100 digits for reference values).

#include <Eigen/Eigenvalues>
#include <cmath>
#include <stdexcept>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/theory/numeric/eigen.hpp"

namespace dyncheck::theory::calib {

template <class S>
class LinearRegressionFlow {
 public:
  /// Throws std::invalid_argument unless H is symmetric positive definite and sizes agree.
  LinearRegressionFlow(const Matrix<S>& H, const Vector<S>& w_star, const Vector<S>& w0)
      : w_star_(w_star), solver_(H) {
    if (H.rows() != H.cols() || H.rows() != w_star.size() || w0.size() != w_star.size()) {
      throw std::invalid_argument("LinearRegressionFlow: H must be d x d and w_star, w0 of size d");
    }
    if (solver_.info() != Eigen::Success || solver_.eigenvalues().minCoeff() <= S(0)) {
      throw std::invalid_argument("LinearRegressionFlow: H must be symmetric positive definite");
    }
    coefficients_ = solver_.eigenvectors().transpose() * (w0 - w_star);
  }

  /// \f[ w(t) = w_* + e^{-tH}(w_0 - w_*) \f]
  Vector<S> gradient_flow_mean(const S& t) const {
    using portable::exp;
    return w_star_ + in_eigenbasis([&](const S& lambda, std::size_t) { return exp(-t * lambda); });
  }

  /// \f[ \mathbb{E} w_k = w_* + (I - \eta H)^k (w_0 - w_*) \f] (exact for unbiased affine gradients)
  Vector<S> gradient_descent_mean(const S& eta, long long steps) const {
    using portable::pow;
    return w_star_ + in_eigenbasis([&](const S& lambda, std::size_t) { return pow(S(1) - eta * lambda, steps); });
  }

  /// First-order coefficient of the discretisation gap at fixed t = kη:
  /// \f[ \mathbb{E} w_k - w(t) = \eta\, c_1(t) + O(\eta^2),\qquad c_1(t) = -\tfrac{t}{2} H^2 e^{-tH}(w_0 - w_*) \f]
  /// from k\log(1-\eta\lambda) = -t\lambda - t\lambda^2\eta/2 + O(\eta^2).
  Vector<S> first_order_gap_coefficient(const S& t) const {
    using portable::exp;
    return in_eigenbasis([&](const S& lambda, std::size_t) { return -t / 2 * lambda * lambda * exp(-t * lambda); });
  }

  /// Componentwise bound on |E w_k − w(kη)|, from, for 0 ≤ x = ηλ ≤ 1,
  /// \f[ 0 \le e^{-kx} - (1-x)^k \le k\,e^{-(k-1)x}\,(e^{-x} - 1 + x) \le \tfrac{k x^2}{2} e^{-(k-1)x} \f]
  /// (a^k − b^k ≤ k a^{k−1}(a − b) for a ≥ b ≥ 0), summed over eigen-directions with |Q_ij||c_j|.
  Vector<S> discretisation_bias_bound(const S& eta, long long steps) const {
    using portable::exp;
    require_stable(eta);
    const S k(steps);
    return absolute_in_eigenbasis([&](const S& lambda) {
      const S x = eta * lambda;
      return k * x * x / 2 * exp(-(k - 1) * x);
    });
  }

  /// Componentwise bound on |(E w_k − w(kη))/η − c_1(kη)|, the O(η) remainder of the first-order
  /// expansion. With r = k log(1−x) + kx ≤ 0 and r_1 = −kx²/2, for 0 ≤ x < 1:
  /// |r| ≤ kx²/(2(1−x)), |r − r_1| ≤ kx³/(3(1−x)), |e^r − 1 − r| ≤ r²/2, so
  /// \f[ \Bigl|\tfrac{(1-x)^k - e^{-kx}}{\eta} + \tfrac{t\lambda^2}{2}e^{-t\lambda}\Bigr|
  ///     \le \frac{e^{-kx}}{\eta}\Bigl[\frac{k^2x^4}{8(1-x)^2} + \frac{kx^3}{3(1-x)}\Bigr]. \f]
  Vector<S> first_order_remainder_bound(const S& eta, long long steps) const {
    using portable::exp;
    require_stable(eta);
    const S k(steps);
    return absolute_in_eigenbasis([&](const S& lambda) {
      const S x = eta * lambda;
      if (x >= S(1)) throw std::invalid_argument("first_order_remainder_bound: needs eta * lambda_max < 1");
      const S one_minus_x = S(1) - x;
      return exp(-k * x) / eta *
             (k * k * x * x * x * x / (8 * one_minus_x * one_minus_x) + k * x * x * x / (3 * one_minus_x));
    });
  }

 private:
  void require_stable(const S& eta) const {
    if (!(eta > S(0)) || eta * solver_.eigenvalues().maxCoeff() > S(1)) {
      throw std::invalid_argument("bias bounds need 0 < eta * lambda_max(H) <= 1");
    }
  }

  /// Q diag(g(λ_j) c_j)
  template <class G>
  Vector<S> in_eigenbasis(G g) const {
    Vector<S> scaled(coefficients_.size());
    for (Eigen::Index j = 0; j < scaled.size(); ++j) {
      scaled[j] = g(solver_.eigenvalues()[j], static_cast<std::size_t>(j)) * coefficients_[j];
    }
    return solver_.eigenvectors() * scaled;
  }

  /// Σ_j |Q_ij| |c_j| b(λ_j): a componentwise bound from per-direction bounds b.
  template <class B>
  Vector<S> absolute_in_eigenbasis(B b) const {
    using std::abs;
    Vector<S> scaled(coefficients_.size());
    for (Eigen::Index j = 0; j < scaled.size(); ++j) scaled[j] = abs(coefficients_[j]) * b(solver_.eigenvalues()[j]);
    return solver_.eigenvectors().cwiseAbs() * scaled;
  }

  Vector<S> w_star_;
  Eigen::SelfAdjointEigenSolver<Matrix<S>> solver_;
  Vector<S> coefficients_;  // c = Qᵀ(w_0 − w_*)
};

}  // namespace dyncheck::theory::calib
