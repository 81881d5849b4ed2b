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

/// Which residual covariance sets the attention noise of noise_corrected_step.
enum class AttentionNoise {
  stage_one,  ///< spec §5: \f$\mathbb E[rr^\top] \approx \Sigma\f$, per-position variance \f$\alpha^2K_2\f$
  state,      ///< [derived]: the residual covariance of the current state (attention_gradient_variance)
};

/// reduced_gd_step plus the expected noise energy a batch of B samples injects per step, from the
/// state before the step (§5):
/// \f[ \omega_k^+ \mathrel{+}= \frac{\eta_A^2(T-2)\sigma_k^2}{B\mu_k},\qquad
///     \nu^+ \mathrel{+}= \frac{\eta^2(N-1)\bigl(\sum_k\mu_k\|a_k\|^2\bigr)R}{B},\qquad R = L_{irr} + 2(L - L^*), \f]
/// with \f$\sigma_k^2 = \alpha^2K_2\f$ (spec §5, `AttentionNoise::stage_one`: valid while the attention is
/// near uniform) or the state's own variance (`AttentionNoise::state`, attention_gradient_variance: also
/// valid once the attention has concentrated, where §5's value over-predicts).
template <class S>
ReducedState<S> noise_corrected_step(const Instance<S>& instance, const Constants<S>& c, const ReducedState<S>& state,
                                     const S& eta, const S& eta_A, const S& B,
                                     AttentionNoise noise = AttentionNoise::stage_one) {
  if (!(B > S(0))) throw std::invalid_argument("noise_corrected_step: B must be > 0");
  ReducedState<S> next = reduced_gd_step(instance, c, state, eta, eta_A);
  const S residual_energy = c.L_irr + 2 * excess_loss(instance, c, state);
  const S a_energy = mean_attention_energy(instance, c, state);
  const AttentionNoiseConstants<S> noise_constants =
      noise == AttentionNoise::state ? attention_noise_constants(instance) : AttentionNoiseConstants<S>{};
  for (Eigen::Index k = 0; k < instance.mu.size(); ++k) {
    const S variance = noise == AttentionNoise::state
                           ? attention_gradient_variance(instance, c, noise_constants, state, k)
                           : state.alpha * state.alpha * c.K_2;
    next.omega[k] += eta_A * eta_A * S(c.T - 2) * variance / (B * instance.mu[k]);
  }
  next.nu += eta * eta * S(c.N - 1) * a_energy * residual_energy / B;
  return next;
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
