// dyncheck/theory/scb/attention_noise.hpp
//
// The per-position variance of the stochastic attention gradient at a reduced state, with the
// residual covariance of that state ([derived] here; specs/scb.md §5 uses the stage-1 value α²K_2).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/scb/constants.hpp>
#include <dyncheck/theory/scb/instance.hpp>
#include <dyncheck/theory/scb/reduced_state.hpp>

#include <stdexcept>

namespace dyncheck::theory::scb {

/// \f$\Sigma P^\top\!\Sigma\f$-weighted constants of the attention noise:
/// \f$W = P\Sigma P^\top\f$ (so \f$K_2 = \operatorname{tr}(W\Sigma)\f$) and \f$K_4 = \operatorname{tr}(W^2)\f$.
template <class S>
struct AttentionNoiseConstants {
  Matrix<S> W;
  S K_4;
};

template <class S>
AttentionNoiseConstants<S> attention_noise_constants(const Instance<S>& instance) {
  AttentionNoiseConstants<S> a;
  a.W = instance.P * token_covariance(instance.mu) * instance.P.transpose();
  a.K_4 = (a.W * a.W).trace();
  return a;
}

/**
 * Variance, across an off-support position t, of the per-sample attention gradient
 * \f$(V^\top r)_{x_t}\f$ of a query-k sample, after the projection \f$\Pi_T\f$ has removed its part common
 * to all positions, at the state \f$V = m\mathbf 1^\top + \alpha e\f$, \f$a_k = \tfrac1T\mathbf 1 +
 * \beta_k(q_k - \tfrac1T\mathbf 1) + a_{\perp k}\f$ ([derived]):
 * \f[ \sigma_k^2 = \operatorname{tr}\bigl(V\Sigma V^\top C_k\bigr)
 *     = \alpha^2\Bigl[K_2 - \bigl(2\alpha\langle q_k,a_k\rangle - \alpha^2\|a_k\|^2\bigr)K_4
 *       + (\mu - m)^\top W(\mu - m)\Bigr], \f]
 * with the residual covariance \f$C_k = \mathbb E[rr^\top\mid k] = \Sigma + (\mu - m)(\mu - m)^\top
 * - (2\alpha\langle q_k,a_k\rangle - \alpha^2\|a_k\|^2)\,W\f$, from
 * \f$\mathbb E[Xu\,w^\top X^\top] = (u\cdot w)\Sigma + (\mathbf 1^\top u)(\mathbf 1^\top w)\mu\mu^\top\f$ (§2) with
 * \f$\mathbb E[e_{x_o}\mid X] = PXq_k\f$, \f$P\mu = \mu\f$ and \f$\mathbf 1^\top a_k = 1\f$.
 * Approximations: \f$x_t\f$ is treated as independent of r (it enters r through \f$a_{k,t}\f$ only, O(1/T)
 * off the support), and \f$V_\perp\f$ is dropped (terms O(ν)). At α → 0, a = 1/T it reduces to the
 * stage-1 value \f$\alpha^2K_2\f$ of §5; at the ground truth (α = β = 1, Q = 1) to
 * \f$\operatorname{tr}(W(\Sigma - W)) = K_2 - K_4\f$.
 */
template <class S>
S attention_gradient_variance(const Instance<S>& instance, const Constants<S>& c,
                              const AttentionNoiseConstants<S>& a, const ReducedState<S>& state, Eigen::Index k) {
  if (k < 0 || k >= instance.mu.size()) throw std::invalid_argument("attention_gradient_variance: k out of range");
  const S inv_T = S(1) / S(c.T);
  const S overlap = inv_T + state.beta[k] * c.rho[k];  // ⟨q_k, a_k⟩
  const S energy = inv_T + state.beta[k] * state.beta[k] * c.rho[k] + state.omega[k];  // ‖a_k‖²
  const Vector<S> drift = instance.mu - state.m;
  const S alpha = state.alpha;
  return alpha * alpha * (c.K_2 - (2 * alpha * overlap - alpha * alpha * energy) * a.K_4 + drift.dot(a.W * drift));
}

}  // namespace dyncheck::theory::scb
