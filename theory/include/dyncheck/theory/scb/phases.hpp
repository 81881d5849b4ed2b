// dyncheck/theory/scb/phases.hpp
//
// Predictions for the phases of stage-1 population dynamics from the symmetric start
// (specs/scb.md §4.3): escape in O(ln T) steps, fast landing on αβ = 1, slow drift to (1, 1),
// and the sign branch.
#pragma once

#include <dyncheck/theory/scb/linearised.hpp>

#include <cmath>
#include <stdexcept>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::theory::scb {

/// \f$1/\ln(1 + \sqrt{\eta\bar\rho\eta_AK_P})\f$: steps per unit of \f$\ln T\f$ of the escape time.
template <class S>
S escape_slope(const S& eta, const S& rho_bar, const S& eta_A_K_P) {
  using portable::log1p;
  return S(1) / log1p(growth_rate(eta, rho_bar, eta_A_K_P));
}

/// \f[ t_{esc}(c) \approx \frac{\ln(2cT)}{\ln(1 + \sqrt{\eta\bar\rho\,\eta_AK_P})} \f] (+ O(1), §4.3, [derived]).
template <class S>
S escape_time_prediction(const S& c, const S& T, const S& eta, const S& rho_bar, const S& eta_A_K_P) {
  using portable::log;
  if (!(c > S(0)) || !(T > S(0))) throw std::invalid_argument("escape_time_prediction: c and T must be > 0");
  return log(2 * c * T) * escape_slope(eta, rho_bar, eta_A_K_P);
}

/// The time at which the growing mode alone of the linearised GD (linearised.hpp) reaches c:
/// \f$\frac{\eta}{r}\frac{(1+r)^t}{2T} = c\f$, i.e. \f$t = \ln(2cTr/\eta)/\ln(1+r)\f$. It differs from
/// escape_time_prediction by the T-independent \f$\ln(r/\eta)/\ln(1+r)\f$ (0 for normalised rates).
template <class S>
S escape_time_linear(const S& c, const S& T, const S& eta, const S& rho_bar, const S& eta_A_K_P) {
  using portable::log;
  if (!(c > S(0)) || !(T > S(0))) throw std::invalid_argument("escape_time_linear: c and T must be > 0");
  const S r = growth_rate(eta, rho_bar, eta_A_K_P);
  return log(2 * c * T * r / eta) * escape_slope(eta, rho_bar, eta_A_K_P);
}

/// Fast-phase landing (§4.3): with the 1/T terms dropped, \f$I_c = \eta_AK_P\alpha^2 - \eta\bar\rho\beta^2\f$ is
/// conserved (0 from the symmetric start), so the trajectory meets \f$\alpha\beta = 1\f$ at
/// \f[ \alpha^* = \Bigl(\frac{\eta\bar\rho}{\eta_AK_P}\Bigr)^{1/4}. \f]
template <class S>
S landing_alpha(const S& eta, const S& rho_bar, const S& eta_A_K_P) {
  using std::sqrt;
  if (!(eta > S(0)) || !(rho_bar > S(0)) || !(eta_A_K_P > S(0))) {
    throw std::invalid_argument("landing_alpha: eta, rho_bar and eta_A K_P must be > 0");
  }
  return sqrt(sqrt(eta * rho_bar / eta_A_K_P));
}

/// The delay of the escape behind the linearised growth, for the GD map itself ([derived]). Without the
/// 1/T terms and on \f$I_c = 0\f$, β = α/α*² is preserved exactly by GD and α follows the 1-D map
/// \f[ \alpha^+ = \alpha\bigl(1 + r(1 - \alpha^2/\alpha^{*2})\bigr) \f]
/// (since ηρ̄/α*² = η_AK_Pα*² = r). Iterating it from α₀ = 10⁻⁸c, with the crossing of c placed by
/// log-linear interpolation, gives the delay D = t_cross − ln(c/α₀)/ln(1+r) behind pure growth 1 + r.
/// `phase_error` bounds how D moves with the phase of the start relative to the integer grid: the
/// log-linear interpolation error at the crossing, \f$|\Delta^2\ln\alpha|/(8\,\Delta\ln\alpha)\f$ steps, doubled (the
/// crossing of a shifted start may fall anywhere in the step). escape_nonlinear_delay is the flow
/// estimate of D (it overestimates it by O(r) relative). Requires 0 < c < α*.
template <class S>
struct EscapeDelay {
  S delay;
  S phase_error;
};

template <class S>
EscapeDelay<S> escape_delay_discrete(const S& c, const S& eta, const S& rho_bar, const S& eta_A_K_P) {
  using std::abs;
  using portable::log;
  using portable::log1p;
  const S landing = landing_alpha(eta, rho_bar, eta_A_K_P);
  if (!(c > S(0)) || !(c < landing)) throw std::invalid_argument("escape_delay_discrete: needs 0 < c < landing_alpha");
  const S r = growth_rate(eta, rho_bar, eta_A_K_P);
  const S start = c / S(100000000);
  const S capacity = landing * landing;
  S previous = start, x = start;
  long long t = 0;
  while (true) {
    const S next = x * (S(1) + r * (S(1) - x * x / capacity));
    if (next >= c) {
      const S step = log(next) - log(x);
      const S fraction = (log(c) - log(x)) / step;
      const S curvature = t > 0 ? abs(log(next) - 2 * log(x) + log(previous)) : S(0);
      return {S(t) + fraction - log(c / start) / log1p(r), 2 * curvature / (8 * step)};
    }
    previous = x;
    x = next;
    if (++t > 10000000) throw std::runtime_error("escape_delay_discrete: no crossing in 1e7 steps");
  }
}

/// The delay of the escape behind escape_time_linear caused by the nonlinear terms ([derived]): without
/// the 1/T terms and on \f$I_c = 0\f$ (below), \f$\beta = \alpha/\alpha^{*2}\f$ and
/// \f$\dot\alpha = r\alpha(1 - \alpha^2/\alpha^{*2})\f$, a logistic equation in \f$\alpha^2\f$, so α reaches c when
/// the linear solution reaches \f$c/\sqrt{1 - c^2/\alpha^{*2}}\f$: in steps of growth factor \f$1 + r\f$,
/// \f[ \delta_{nl} = \frac{-\ln(1 - c^2/\alpha^{*2})}{2\ln(1 + r)}. \f]
/// An estimate for gradient descent (the logistic flow stands in for the GD map; the difference is
/// O(r) relative). Requires \f$0 < c < \alpha^*\f$ (landing_alpha).
template <class S>
S escape_nonlinear_delay(const S& c, const S& eta, const S& rho_bar, const S& eta_A_K_P) {
  using portable::log;
  using portable::log1p;
  const S landing = landing_alpha(eta, rho_bar, eta_A_K_P);
  if (!(c > S(0)) || !(c < landing)) throw std::invalid_argument("escape_nonlinear_delay: needs 0 < c < landing_alpha");
  const S ratio = c * c / (landing * landing);
  return -log1p(-ratio) / (2 * log1p(growth_rate(eta, rho_bar, eta_A_K_P)));
}

/// Slow phase (§4.3): along \f$\alpha\beta = 1\f$ near (1, 1),
/// \f[ -\frac{d\ln|1-\alpha|}{dt} = \frac{\eta}{T}\,\frac{\eta_AK_P}{\eta\bar\rho + \eta_AK_P}, \f]
/// the leading term in 1/T of the slow eigenvalue of the linearisation at (1, 1).
template <class S>
S slow_phase_rate(const S& eta, const S& T, const S& rho_bar, const S& eta_A_K_P) {
  if (!(eta > S(0)) || !(T > S(0)) || !(rho_bar > S(0)) || !(eta_A_K_P > S(0))) {
    throw std::invalid_argument("slow_phase_rate: eta, T, rho_bar and eta_A K_P must be > 0");
  }
  return eta / T * eta_A_K_P / (eta * rho_bar + eta_A_K_P);
}

/// The exact per-step contraction rate \f$-\ln(1 + \lambda_s)\f$ of the symmetric GD map linearised at
/// (1, 1), where \f$\lambda_s\f$ is the eigenvalue of smaller modulus of
/// \f$\begin{pmatrix}-\varepsilon - a & -a\\ -b & -b\end{pmatrix}\f$, \f$a = \eta\bar\rho\f$, \f$b = \eta_AK_P\f$,
/// \f$\varepsilon = \eta/T\f$: \f$\lambda_s = \bigl(-(\varepsilon+a+b) + \sqrt{(\varepsilon+a+b)^2 - 4\varepsilon b}\bigr)/2\f$.
/// slow_phase_rate is its first-order term in \f$\varepsilon\f$.
template <class S>
S slow_phase_gd_rate(const S& eta, const S& T, const S& rho_bar, const S& eta_A_K_P) {
  using portable::log1p;
  using std::sqrt;
  if (!(eta > S(0)) || !(T > S(0)) || !(rho_bar > S(0)) || !(eta_A_K_P > S(0))) {
    throw std::invalid_argument("slow_phase_gd_rate: eta, T, rho_bar and eta_A K_P must be > 0");
  }
  const S a = eta * rho_bar, b = eta_A_K_P, eps = eta / T;
  const S trace = eps + a + b;
  // -(trace - sqrt(trace^2 - 4 eps b))/2 written without cancellation.
  const S lambda = -2 * eps * b / (trace + sqrt(trace * trace - 4 * eps * b));
  return -log1p(lambda);
}

/// Sign branch (§4.3, [derived]): the linearised unstable coordinate \f$u = x + y\f$ obeys
/// \f$u_{t} + 1/T = (1+\eta)^t(u_0 + 1/T)\f$ (normalised rates), so the final branch is
/// \f$\operatorname{sign}(u_0 + 1/T)\f$: +1, -1, or 0 on the boundary.
template <class S>
int predicted_sign_branch(const S& u0, const S& T) {
  const S shifted = u0 + S(1) / T;
  return shifted > S(0) ? 1 : (shifted < S(0) ? -1 : 0);
}

}  // namespace dyncheck::theory::scb
