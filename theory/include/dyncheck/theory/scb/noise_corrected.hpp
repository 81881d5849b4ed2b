// dyncheck/theory/scb/noise_corrected.hpp
//
// The noise-corrected reduced model of minibatch SGD (specs/scb.md §5, approximate, validated
// there against SGD).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/scb/attention_noise.hpp>
#include <dyncheck/theory/scb/constants.hpp>
#include <dyncheck/theory/scb/instance.hpp>
#include <dyncheck/theory/scb/reduced_recurrence.hpp>
#include <dyncheck/theory/scb/reduced_state.hpp>

#include <stdexcept>

namespace dyncheck::theory::scb {

namespace detail {

/// The update shared by both noise_corrected_step overloads; `variance(k)` is σ_k².
template <class S, class Variance>
ReducedState<S> noise_corrected_step(const Instance<S>& instance, const Constants<S>& c, const ReducedState<S>& state,
                                     const S& eta, const S& eta_A, const S& B, Variance variance) {
  if (!(B > S(0))) throw std::invalid_argument("noise_corrected_step: B must be > 0");
  ReducedState<S> next = reduced_gd_step(instance, c, state, eta, eta_A);
  const S residual_energy = c.L_irr + 2 * excess_loss(instance, c, state);
  const S a_energy = mean_attention_energy(instance, c, state);
  for (Eigen::Index k = 0; k < instance.mu.size(); ++k) {
    next.omega[k] += eta_A * eta_A * S(c.T - 2) * variance(k) / (B * instance.mu[k]);
  }
  next.nu += eta * eta * S(c.N - 1) * a_energy * residual_energy / B;
  return next;
}

}  // namespace detail

/// reduced_gd_step plus the expected noise energy a batch of B samples injects per step, from the
/// state before the step (§5):
/// \f[ \omega_k^+ \mathrel{+}= \frac{\eta_A^2(T-2)\sigma_k^2}{B\mu_k},\qquad
///     \nu^+ \mathrel{+}= \frac{\eta^2(N-1)\bigl(\sum_k\mu_k\|a_k\|^2\bigr)R}{B},\qquad R = L_{irr} + 2(L - L^*), \f]
/// with spec §5's \f$\sigma_k^2 = \alpha^2K_2\f$ (the residual covariance Σ of near-uniform attention).
template <class S>
ReducedState<S> noise_corrected_step(const Instance<S>& instance, const Constants<S>& c, const ReducedState<S>& state,
                                     const S& eta, const S& eta_A, const S& B) {
  return detail::noise_corrected_step(instance, c, state, eta, eta_A, B,
                                      [&](Eigen::Index) { return state.alpha * state.alpha * c.K_2; });
}

/// The same step with the attention noise of the current state ([derived], attention_gradient_variance):
/// also valid once the attention has concentrated, where §5's value over-predicts. `noise` is
/// attention_noise_constants(instance), computed once by the caller.
template <class S>
ReducedState<S> noise_corrected_step(const Instance<S>& instance, const Constants<S>& c,
                                     const AttentionNoiseConstants<S>& noise, const ReducedState<S>& state,
                                     const S& eta, const S& eta_A, const S& B) {
  return detail::noise_corrected_step(instance, c, state, eta, eta_A, B, [&](Eigen::Index k) {
    return attention_gradient_variance(instance, c, noise, state, k);
  });
}

/// Stationary attention-noise energy (§5): \f$\omega^* = \eta_A T K_2/(2B\mu_kK_P)\f$, independent of α and
/// proportional to T.
template <class S>
S stationary_attention_noise(const S& eta_A, const S& T, const S& K_2, const S& B, const S& mu_k, const S& K_P) {
  if (!(B > S(0)) || !(mu_k > S(0)) || !(K_P > S(0))) {
    throw std::invalid_argument("stationary_attention_noise: B, mu_k and K_P must be > 0");
  }
  return eta_A * T * K_2 / (2 * B * mu_k * K_P);
}

}  // namespace dyncheck::theory::scb
