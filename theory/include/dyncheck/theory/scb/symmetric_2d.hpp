// dyncheck/theory/scb/symmetric_2d.hpp
//
// The exact 2-D recurrence of stage-1 population GD from a symmetric start (specs/scb.md §4.3):
// β_k = β for all k and ν = ω_k = 0 stay so, and (α, β) evolve on their own.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <vector>

namespace dyncheck::theory::scb {

template <class S>
struct Symmetric2D {
  S alpha, beta;
};

/// One step of §4.2 restricted to \f$\beta_k \equiv \beta\f$, \f$\nu = \omega_k = 0\f$ (exact):
/// \f[ \alpha^+ = \alpha + \eta\Bigl[\frac{1-\alpha}{T} + \bar\rho\beta(1-\alpha\beta)\Bigr],\qquad
///     \beta^+ = \beta + \eta_AK_P\,\alpha(1-\alpha\beta). \f]
/// T may be +infinity (the limit without drift).
template <class S>
Symmetric2D<S> symmetric_2d_step(const Symmetric2D<S>& s, const S& eta, const S& rho_bar, const S& eta_A_K_P,
                                 const S& T) {
  const S gap = S(1) - s.alpha * s.beta;
  return {s.alpha + eta * ((S(1) - s.alpha) / T + rho_bar * s.beta * gap), s.beta + eta_A_K_P * s.alpha * gap};
}

/// The states at steps 0..steps.
template <class S>
std::vector<Symmetric2D<S>> symmetric_2d_trajectory(const Symmetric2D<S>& start, long long steps, const S& eta,
                                                    const S& rho_bar, const S& eta_A_K_P, const S& T) {
  if (steps < 0) throw std::invalid_argument("symmetric_2d_trajectory: steps must be >= 0");
  std::vector<Symmetric2D<S>> path{start};
  path.reserve(static_cast<std::size_t>(steps) + 1);
  for (long long t = 0; t < steps; ++t) path.push_back(symmetric_2d_step(path.back(), eta, rho_bar, eta_A_K_P, T));
  return path;
}

/// First t <= max_steps with \f$\alpha_t \ge c\f$ (the population escape time, §4.3), or nullopt.
template <class S>
std::optional<long long> population_escape_steps(const S& c, const S& T, const S& eta, const S& rho_bar,
                                                 const S& eta_A_K_P, const S& alpha0, const S& beta0,
                                                 long long max_steps) {
  Symmetric2D<S> s{alpha0, beta0};
  for (long long t = 0; t <= max_steps; ++t) {
    if (s.alpha >= c) return t;
    s = symmetric_2d_step(s, eta, rho_bar, eta_A_K_P, T);
  }
  return std::nullopt;
}

/// First t <= max_steps with \f$\alpha_t\beta_t \ge\f$ threshold (transfer, §4.3), or nullopt.
template <class S>
std::optional<long long> steps_to_product(const S& threshold, const S& T, const S& eta, const S& rho_bar,
                                          const S& eta_A_K_P, const S& alpha0, const S& beta0, long long max_steps) {
  Symmetric2D<S> s{alpha0, beta0};
  for (long long t = 0; t <= max_steps; ++t) {
    if (s.alpha * s.beta >= threshold) return t;
    s = symmetric_2d_step(s, eta, rho_bar, eta_A_K_P, T);
  }
  return std::nullopt;
}

}  // namespace dyncheck::theory::scb
