// dyncheck/theory/scb/reduced_recurrence.hpp
//
// Stage-1 population gradient descent in the reduced coordinates (specs/scb.md §4.2, exact).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/scb/constants.hpp>
#include <dyncheck/theory/scb/instance.hpp>
#include <dyncheck/theory/scb/reduced_state.hpp>

namespace dyncheck::theory::scb {

/// One step of stage-1 population GD (population_step.hpp) in the coordinates of §4.1, exact
/// when \f$\mathbf 1^\top a_k = 1\f$ (analogue of Lemmas C.5/C.6 [paper]; [derived]):
/// \f[ m^+ = m + \eta(\mu - m),\qquad \alpha^+ = \alpha + \eta\sum_k\mu_k\bigl[\tfrac1T + \beta_k\rho_k
///      - \alpha(\tfrac1T + \beta_k^2\rho_k + \omega_k)\bigr], \f]
/// \f[ \nu^+ = (1 - \eta\textstyle\sum_k\mu_k\|a_k\|^2)^2\nu,\quad \beta_k^+ = \beta_k + \eta_A[\alpha K_P - \beta_kK_{VV}],
///     \quad \omega_k^+ = (1 - \eta_AK_{VV})^2\omega_k,\quad K_{VV} = \alpha^2K_P + \nu. \f]
template <class S>
ReducedState<S> reduced_gd_step(const Instance<S>& instance, const Constants<S>& c, const ReducedState<S>& state,
                                const S& eta, const S& eta_A) {
  const S inv_T = S(1) / S(c.T);
  const S K_VV = state.alpha * state.alpha * c.K_P + state.nu;
  ReducedState<S> next;
  next.m = state.m + eta * (instance.mu - state.m);
  S drive = S(0);
  for (Eigen::Index k = 0; k < instance.mu.size(); ++k) {
    const S a_energy = inv_T + state.beta[k] * state.beta[k] * c.rho[k] + state.omega[k];
    drive += instance.mu[k] * (inv_T + state.beta[k] * c.rho[k] - state.alpha * a_energy);
  }
  next.alpha = state.alpha + eta * drive;
  const S nu_factor = S(1) - eta * mean_attention_energy(instance, c, state);
  next.nu = nu_factor * nu_factor * state.nu;
  const S omega_factor = S(1) - eta_A * K_VV;
  next.beta = (state.beta.array() + eta_A * (state.alpha * c.K_P - state.beta.array() * K_VV)).matrix();
  next.omega = (omega_factor * omega_factor) * state.omega;
  return next;
}

}  // namespace dyncheck::theory::scb
