// dyncheck/theory/scb/reduced_state.hpp
//
// The exact low-dimensional state of population dynamics (specs/scb.md §4.1), the excess loss
// in these coordinates (§4.2) and the attention correlation y (§4.3).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/scb/constants.hpp>
#include <dyncheck/theory/scb/instance.hpp>

#include <stdexcept>

namespace dyncheck::theory::scb {

/// \f$(m, \alpha, \nu, \beta_k, \omega_k)\f$ of §4.1.
template <class S>
struct ReducedState {
  Vector<S> m;      ///< \f$V\mu\f$
  S alpha;          ///< \f$\langle V,P\rangle_\Sigma/K_P\f$
  S nu;             ///< \f$\langle V_\perp,V_\perp\rangle_\Sigma\f$
  Vector<S> beta;   ///< \f$\beta_k = \langle a_k - 1/T, q_k - 1/T\rangle/\rho_k\f$
  Vector<S> omega;  ///< \f$\omega_k = \|a_{\perp k}\|^2\f$
};

/// The decomposition of §4.1 with \f$e = P - \mu\mathbf 1^\top\f$:
/// \f[ V = m\mathbf 1^\top + \alpha e + V_\perp,\qquad a_k = \tfrac1T\mathbf 1 + \beta_k(q_k - \tfrac1T\mathbf 1) + a_{\perp k}. \f]
/// \f$a_{\perp k}\f$ is orthogonal to \f$q_k - \tfrac1T\mathbf 1\f$; it is also orthogonal to \f$\mathbf 1\f$ (and the
/// identities of §4.1–4.2 hold) only when \f$\mathbf 1^\top a_k = 1\f$, which stage 1 preserves.
/// Requires \f$\rho_k > 0\f$ (q_k not uniform) and \f$K_P > 0\f$.
template <class S>
ReducedState<S> reduce(const Instance<S>& instance, const Matrix<S>& V, const Matrix<S>& A) {
  const auto N = instance.P.rows();
  const auto T = instance.q.rows();
  if (V.rows() != N || V.cols() != N || A.rows() != T || A.cols() != N) {
    throw std::invalid_argument("reduce: V must be N x N and A must be T x N");
  }
  const Vector<S>& mu = instance.mu;
  const S K_P = sigma_inner(instance.P, instance.P, mu);
  if (!(K_P > S(0))) throw std::invalid_argument("reduce: K_P must be > 0 (P = mu 1^T carries no signal)");
  ReducedState<S> state;
  state.m = V * mu;
  state.alpha = sigma_inner(V, instance.P, mu) / K_P;
  const Matrix<S> e = instance.P - mu * Vector<S>::Ones(N).transpose();
  const Matrix<S> V_perp = V - state.m * Vector<S>::Ones(N).transpose() - state.alpha * e;
  state.nu = sigma_inner(V_perp, V_perp, mu);
  state.beta = Vector<S>(N);
  state.omega = Vector<S>(N);
  const S uniform = S(1) / S(T);
  for (Eigen::Index k = 0; k < N; ++k) {
    const Vector<S> direction = (instance.q.col(k).array() - uniform).matrix();
    const S rho = direction.squaredNorm();
    if (!(rho > S(0))) throw std::invalid_argument("reduce: q_k is uniform (rho_k = 0), beta_k is undefined");
    const Vector<S> centred = (A.col(k).array() - uniform).matrix();
    state.beta[k] = centred.dot(direction) / rho;
    state.omega[k] = (centred - state.beta[k] * direction).squaredNorm();
  }
  return state;
}

/// \f$\|a_k\|^2 = 1/T + \beta_k^2\rho_k + \omega_k\f$, weighted: \f$\sum_k\mu_k\|a_k\|^2\f$ (§4.1).
template <class S>
S mean_attention_energy(const Instance<S>& instance, const Constants<S>& c, const ReducedState<S>& state) {
  S sum = S(0);
  for (Eigen::Index k = 0; k < instance.mu.size(); ++k) {
    sum += instance.mu[k] * (S(1) / S(c.T) + state.beta[k] * state.beta[k] * c.rho[k] + state.omega[k]);
  }
  return sum;
}

/// Excess loss (§4.2, [derived]), valid when \f$\mathbf 1^\top a_k = 1\f$:
/// \f[ L - L^* = \tfrac12\sum_k\mu_k\Bigl[K_P\Bigl(\frac{(1-\alpha)^2}{T} + \rho_k(1-\alpha\beta_k)^2 + \alpha^2\omega_k\Bigr)
///     + \nu\|a_k\|^2\Bigr] + \tfrac12\|\mu - m\|^2,\qquad L^* = \tfrac12 L_{irr}. \f]
template <class S>
S excess_loss(const Instance<S>& instance, const Constants<S>& c, const ReducedState<S>& state) {
  const S inv_T = S(1) / S(c.T);
  S sum = S(0);
  for (Eigen::Index k = 0; k < instance.mu.size(); ++k) {
    const S one_minus_alpha = S(1) - state.alpha;
    const S one_minus_product = S(1) - state.alpha * state.beta[k];
    const S a_energy = inv_T + state.beta[k] * state.beta[k] * c.rho[k] + state.omega[k];
    sum += instance.mu[k] * (c.K_P * (one_minus_alpha * one_minus_alpha * inv_T +
                                      c.rho[k] * one_minus_product * one_minus_product +
                                      state.alpha * state.alpha * state.omega[k]) +
                             state.nu * a_energy);
  }
  return (sum + (instance.mu - state.m).squaredNorm()) / 2;
}

/// The attention correlation (§4.3) \f$y = \sum_k\mu_k\rho_k\beta_k = \mathbb E_k\langle a_k,q_k\rangle - 1/T\f$.
template <class S>
S correlation_y(const Instance<S>& instance, const Constants<S>& c, const ReducedState<S>& state) {
  S y = S(0);
  for (Eigen::Index k = 0; k < instance.mu.size(); ++k) y += instance.mu[k] * c.rho[k] * state.beta[k];
  return y;
}

}  // namespace dyncheck::theory::scb
