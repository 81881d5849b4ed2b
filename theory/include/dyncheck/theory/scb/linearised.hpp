// dyncheck/theory/scb/linearised.hpp
//
// The symmetric 2-D system linearised at zero correlation (specs/scb.md §4.3), in closed form.
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::theory::scb {

/// The coordinates of §4.3: \f$x = \alpha\f$ and \f$y = \bar\rho\beta\f$ (the attention correlation).
template <class S>
struct LinearisedPoint {
  S x, y;
};

/// \f$r = \sqrt{\eta\bar\rho\,\eta_AK_P}\f$: the eigenvalues of the linearised GD map are \f$1 \pm r\f$ per step
/// (§4.3, "General rates"); of the flow, \f$\pm r\f$.
template <class S>
S growth_rate(const S& eta, const S& rho_bar, const S& eta_A_K_P) {
  using std::sqrt;
  if (!(eta > S(0)) || !(rho_bar > S(0)) || !(eta_A_K_P > S(0))) {
    throw std::invalid_argument("growth_rate: eta, rho_bar and eta_A K_P must be > 0");
  }
  return sqrt(eta * rho_bar * eta_A_K_P);
}

/// Flow of \f$\dot x = \eta(y + 1/T)\f$, \f$\dot y = g x\f$ from \f$x = y = 0\f$, with coupling
/// \f$g = \bar\rho\eta_AK_P\f$ and \f$r = \sqrt{\eta g}\f$:
/// \f[ x(t) = \frac{\eta}{r}\frac{\sinh(rt)}{T},\qquad y(t) = \frac{\cosh(rt) - 1}{T}; \f]
/// with the normalised rate \f$\eta_A = \eta/(\bar\rho K_P)\f$ (\f$g = \eta\f$) this is §4.3's
/// \f$x = \sinh(\eta t)/T\f$, \f$y = (\cosh(\eta t) - 1)/T\f$. Time t in steps.
template <class S>
LinearisedPoint<S> linearised_flow(const S& t, const S& eta, const S& coupling, const S& T) {
  using portable::cosh;
  using portable::sinh;
  using std::sqrt;
  if (!(eta > S(0)) || !(coupling > S(0)) || !(T > S(0))) {
    throw std::invalid_argument("linearised_flow: eta, coupling and T must be > 0");
  }
  const S r = sqrt(eta * coupling);
  return {eta / r * sinh(r * t) / T, (cosh(r * t) - S(1)) / T};
}

/// Gradient descent \f$x^+ = x + \eta(y + 1/T)\f$, \f$y^+ = y + gx\f$ from \f$x_0 = y_0 = 0\f$, exactly:
/// \f[ x_t = \frac{\eta}{r}\frac{(1+r)^t - (1-r)^t}{2T},\qquad y_t = \frac{(1+r)^t + (1-r)^t - 2}{2T}, \f]
/// (§4.3; with \f$g = \eta\f$, \f$r = \eta\f$ and \f$x_t = ((1+\eta)^t - (1-\eta)^t)/(2T)\f$).
template <class S>
LinearisedPoint<S> linearised_gd(long long t, const S& eta, const S& coupling, const S& T) {
  using portable::pow;
  using std::sqrt;
  if (t < 0) throw std::invalid_argument("linearised_gd: t must be >= 0");
  if (!(eta > S(0)) || !(coupling > S(0)) || !(T > S(0))) {
    throw std::invalid_argument("linearised_gd: eta, coupling and T must be > 0");
  }
  const S r = sqrt(eta * coupling);
  const S up = pow(S(1) + r, S(t)), down = pow(S(1) - r, S(t));
  return {eta / r * (up - down) / (2 * T), (up + down - S(2)) / (2 * T)};
}

/// A-posteriori bound on the linearisation error of GD from \f$x_0 = y_0 = 0\f$ ([derived]): given the
/// exact symmetric trajectory \f$(\alpha_s, y_s = \bar\rho\beta_s)\f$, s = 0..t, with \f$\alpha_s, \beta_s \ge 0\f$,
/// \f[ 0 \le x_t - \alpha_t \le E_t\,(x_t - x_{t-1}),\qquad 0 \le y_t - \bar\rho\beta_t \le E_t\,(y_t - y_{t-1}),
///     \qquad E_t = \sum_{s<t}\varepsilon_s,\quad
///     \varepsilon_s = \max\Bigl(\frac{\alpha_s/T + \alpha_s\beta_sy_s}{1/T + y_s},\ \alpha_s\beta_s\Bigr). \f]
/// Why: the exact map is \f$z^+ = Mz + b - n(z)\f$ with M, b the (entrywise nonnegative) linear map and
/// \f$n = (\eta(\alpha/T + \alpha\beta y),\ \bar\rho\eta_AK_P\alpha^2\beta) \ge 0\f$ the dropped terms, so
/// \f$d_t = x^{lin}_t - z_t = \sum_{s<t}M^{t-1-s}n_s \ge 0\f$; \f$n_s \le \varepsilon_s((M - I)z_s + b) \le
/// \varepsilon_s((M-I)x^{lin}_s + b) = \varepsilon_sM^sb\f$, hence \f$d_t \le E_tM^{t-1}b = E_t(x^{lin}_t - x^{lin}_{t-1})\f$.
/// Returns \f$E_t\f$ for t = 0..size-1 (E_0 = 0). `alpha`, `beta` of equal length.
template <class S>
std::vector<S> linearisation_error_factor(const std::vector<S>& alpha, const std::vector<S>& beta, const S& rho_bar,
                                          const S& T) {
  if (alpha.size() != beta.size()) throw std::invalid_argument("linearisation_error_factor: alpha and beta differ in length");
  std::vector<S> factor(alpha.size(), S(0));
  S sum = S(0);
  for (std::size_t s = 0; s + 1 < alpha.size(); ++s) {
    if (alpha[s] < S(0) || beta[s] < S(0)) {
      throw std::invalid_argument("linearisation_error_factor: the bound needs alpha, beta >= 0 along the path");
    }
    const S y = rho_bar * beta[s];
    const S drift_ratio = (alpha[s] / T + alpha[s] * beta[s] * y) / (S(1) / T + y);
    const S product = alpha[s] * beta[s];
    sum += drift_ratio > product ? drift_ratio : product;
    factor[s + 1] = sum;
  }
  return factor;
}

}  // namespace dyncheck::theory::scb
