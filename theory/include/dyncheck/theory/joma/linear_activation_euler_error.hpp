// dyncheck/theory/joma/linear_activation_euler_error.hpp
//
// The leading global error of full-batch GD (explicit Euler) on the linear-activation JoMA flow of
// linear_activation_erf.hpp (specs/joma.md §3 "Exact closed form" [derived]).
#pragma once

#include "dyncheck/portable/math.hpp"
#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/numeric/ode.hpp>

#include <stdexcept>
#include <vector>

namespace dyncheck::theory::joma {

/// The per-token flow of the linear-activation dynamics in its clock τ and logit ζ = z/T:
/// \f$\dot\tau = \eta_w e^{\zeta}\f$, \f$\dot\zeta = \kappa\eta_w e^{\zeta}(\beta + a\tau)\f$ (then
/// \f$v_{k}(t) = v_k(0) + \Delta_k\tau(t)\f$). Full-batch GD with step h in physical time is exactly
/// explicit Euler on this pair: each step adds \f$h\eta_w\Delta e^{\zeta_n}\f$ to v and
/// \f$h\kappa\eta_w e^{\zeta_n}\sum_k v_{k,n}\Delta_k\f$ to ζ. So GD's state is \f$y(t) + h\varepsilon(t) + O(h^2)\f$
/// with the leading coefficient (Hairer, Nørsett, Wanner I, Thm II.8.1)
/// \f[ \dot\varepsilon = J(y)\,\varepsilon - \tfrac12 J(y) f(y),\qquad \varepsilon(0) = 0, \f]
/// \f$-\tfrac12 h^2\ddot y = -\tfrac12 h^2 J f\f$ being Euler's local error.
/// Returns, at each of `times` (strictly increasing, times[0] = 0 is the start), the vector
/// (τ, ζ, ε_τ, ε_ζ), integrated by integrate_with_error at `tolerance`; `error` gets its estimate.
template <class S>
std::vector<Vector<S>> euler_error_coefficient(const S& a, const S& beta, const S& zeta0, const S& kappa,
                                               const S& eta_w, const std::vector<S>& times, const S& tolerance,
                                               std::vector<S>* error = nullptr) {
  if (!(a > S(0)) || !(kappa > S(0)) || !(eta_w > S(0))) {
    throw std::invalid_argument("euler_error_coefficient: needs a > 0, kappa > 0, eta_w > 0");
  }
  if (times.empty() || times.front() != S(0)) {
    throw std::invalid_argument("euler_error_coefficient: times must start at 0");
  }
  auto system = [&](const Vector<S>& x, Vector<S>& dxdt, const S&) {
    using portable::exp;  // double: dyncheck::portable; multiprecision: found by argument-dependent lookup
    const S e = eta_w * exp(x[1]);
    const S f0 = e, f1 = kappa * e * (beta + a * x[0]);
    // J = [[0, e], [kappa a e, f1]]
    const S Jf0 = e * f1;
    const S Jf1 = kappa * a * e * f0 + f1 * f1;
    dxdt[0] = f0;
    dxdt[1] = f1;
    dxdt[2] = e * x[3] - Jf0 / S(2);
    dxdt[3] = kappa * a * e * x[2] + f1 * x[3] - Jf1 / S(2);
  };
  Vector<S> x0(4);
  x0 << S(0), zeta0, S(0), S(0);
  const OdeSolution<S> solution = integrate_with_error(system, x0, times, tolerance);
  if (error != nullptr) *error = solution.error_estimate;
  return solution.states;
}

}  // namespace dyncheck::theory::joma
