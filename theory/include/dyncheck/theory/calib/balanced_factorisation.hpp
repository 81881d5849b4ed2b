#pragma once
// Gradient flow and gradient descent on the scalar factorisation loss L(u, v) = ½(uv − s)².
//
//   u̇ = −(uv − s) v,   v̇ = −(uv − s) u.
// From a balanced start u_0 = v_0 > 0 the flow stays balanced, and w = u² obeys the logistic
// equation ẇ = 2w(s − w) (because d(u²)/dt = 2u u̇), with the closed form
//   w(t) = s w_0 e^{2st} / (s + w_0 (e^{2st} − 1)).
// On the balanced line u follows the scalar field f(u) = (s − u²) u, whose derivatives give an
// a-posteriori bound for gradient descent (explicit Euler on f) against the flow.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/theory/numeric/eigen.hpp"

namespace dyncheck::theory::calib {

/// \f[ u(t) = \sqrt{\frac{s\,u_0^2\,e^{2st}}{s + u_0^2\,(e^{2st}-1)}} \f], the balanced factor at time t
/// (written with expm1 so that small s t loses no digits).
template <class S>
S balanced_factor(const S& s, const S& u0, const S& t) {
  using portable::expm1;
  using std::sqrt;
  if (!(s > S(0)) || !(u0 > S(0))) throw std::invalid_argument("balanced_factor: needs s > 0 and u0 > 0");
  const S w0 = u0 * u0;
  const S growth = expm1(2 * s * t);  // e^{2st} − 1
  return sqrt(s * w0 * (growth + 1) / (s + w0 * growth));
}

/// The gradient field of ½(uv − s)² as an ODE system on x = (u, v): ẋ = −∇L(x).
template <class S>
struct FactorisationGradientFlow {
  S s;
  void operator()(const Vector<S>& x, Vector<S>& dxdt, const S& /*t*/) const {
    const S residual = x[0] * x[1] - s;
    dxdt.resize(2);
    dxdt[0] = -residual * x[1];
    dxdt[1] = -residual * x[0];
  }
};

namespace detail {

/// max over z ∈ [a, b] of |1 + η f'(z)| with f'(z) = s − 3z²: a concave quadratic in z,
/// extreme at the ends or at z = 0.
inline double max_euler_amplification(double s, double eta, double a, double b) {
  auto amplification = [&](double z) { return std::abs(1 + eta * (s - 3 * z * z)); };
  double largest = std::max(amplification(a), amplification(b));
  if (a < 0 && b > 0) largest = std::max(largest, amplification(0));
  return largest;
}

/// max over z ∈ [a, b] of |f'(z) f(z)| = |3z⁵ − 4sz³ + s²z| (= |ü| along the flow): extreme at the
/// ends or where 15z⁴ − 12sz² + s² = 0, i.e. z² = s(12 ± √84)/30.
inline double max_second_derivative(double s, double a, double b) {
  auto g = [&](double z) { return std::abs(((3 * z * z - 4 * s) * z * z + s * s) * z); };
  double largest = std::max(g(a), g(b));
  for (double root_sq : {s * (12 - std::sqrt(84.0)) / 30, s * (12 + std::sqrt(84.0)) / 30}) {
    for (double z : {std::sqrt(root_sq), -std::sqrt(root_sq)}) {
      if (z > a && z < b) largest = std::max(largest, g(z));
    }
  }
  return largest;
}

inline double max_abs_field(double s, double a, double b) {
  auto f = [&](double z) { return std::abs((s - z * z) * z); };
  double largest = std::max(f(a), f(b));
  for (double z : {std::sqrt(s / 3), -std::sqrt(s / 3)}) {
    if (z > a && z < b) largest = std::max(largest, f(z));
  }
  return largest;
}

/// A radius r such that the flow started anywhere in [a, b] stays in [a − r, b + r] for a time η.
/// A candidate r is proved when η max|f| over [a − r, b + r] ≤ r: leaving that interval would
/// take a time of at least r / max|f| ≥ η.  Candidates start at twice the step from [a, b] and
/// double; a field that keeps outrunning them means η is too large for the bound to say anything.
inline double flow_reach(double s, double eta, double a, double b) {
  double reach = 2 * eta * max_abs_field(s, a, b) + 1e-300;
  for (int attempt = 0; attempt < 8; ++attempt, reach *= 2) {
    if (eta * max_abs_field(s, a - reach, b + reach) <= reach) return reach;
  }
  throw std::invalid_argument("euler_error_bound: the flow leaves every enclosure within one step; eta is too large");
}

}  // namespace detail

/// The largest step η with \f$ \eta \max_{u} |f'(u)| \le 0.2 \f$ along the balanced path from u_0
/// to √s, where \f$ f'(u) = s - 3u^2 \f$ ranges over [s − 3 max(u_0², s), s − 3 min(u_0², s)], so
/// \f$ \max |f'| = \max(2s, |3u_0^2 - s|) \f$.  Within it gradient descent is monotone and the Euler
/// bound below stays of order η; beyond it the bound's enclosures grow faster than they are resolved.
inline double largest_resolved_step(double s, double u0) {
  return 0.2 / std::max(2 * s, std::abs(3 * u0 * u0 - s));
}

/// A-posteriori bound on |u(kη) − u_k| for gradient descent u_{k+1} = u_k + η f(u_k) on the
/// balanced line, given its iterates. If the flow is within ε_k of u_k, then Taylor's theorem
/// with f Lipschitz on the enclosure U_k = [u_k − ε_k, u_k + ε_k] gives
/// \f[ \varepsilon_{k+1} = \varepsilon_k \max_{z\in U_k} |1 + \eta f'(z)|
///      + \tfrac{\eta^2}{2} \max_{z \in V_k} |f'(z) f(z)| \f]
/// where V_k widens U_k by a proved one-step reach of the flow (detail::flow_reach).
/// Evaluated in double: its own rounding (relative 1e-15) is far below the bound.
/// From the first step whose one-step reach cannot be proved (detail::flow_reach throws: the
/// enclosure has grown so wide that the cubic field outruns it, e.g. after a long unstable phase
/// from u_0 ≪ √s), there is no bound: those entries are +∞, for the caller to report as unbounded.
inline std::vector<double> euler_error_bound(const std::vector<double>& iterates, double s, double eta) {
  std::vector<double> bound(iterates.size(), 0.0);
  for (std::size_t k = 0; k + 1 < iterates.size(); ++k) {
    const double a = iterates[k] - bound[k];
    const double b = iterates[k] + bound[k];
    double reach = 0;
    try {
      reach = detail::flow_reach(s, eta, a, b);
    } catch (const std::invalid_argument&) {
      std::fill(bound.begin() + static_cast<std::ptrdiff_t>(k) + 1, bound.end(), std::numeric_limits<double>::infinity());
      break;
    }
    bound[k + 1] = bound[k] * detail::max_euler_amplification(s, eta, a, b) +
                   eta * eta / 2 * detail::max_second_derivative(s, a - reach, b + reach);
  }
  return bound;
}

/// Bound on the accumulated rounding of the double-precision iterates u_{k+1} = u_k − η(u_k² − s)u_k:
/// each step rounds five times (relative eps/2 each), so it adds at most
/// ρ_k = 4 eps (|u_k| + η|f(u_k)|), and earlier errors are amplified as in euler_error_bound:
/// \f[ r_{k+1} = r_k \max_{z \in [u_k - r_k, u_k + r_k]} |1 + \eta f'(z)| + \rho_k. \f]
inline std::vector<double> euler_rounding_bound(const std::vector<double>& iterates, double s, double eta) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  std::vector<double> bound(iterates.size(), 0.0);
  for (std::size_t k = 0; k + 1 < iterates.size(); ++k) {
    const double u = iterates[k];
    const double step_rounding = 4 * eps * (std::abs(u) + eta * std::abs((s - u * u) * u));
    bound[k + 1] = bound[k] * detail::max_euler_amplification(s, eta, u - bound[k], u + bound[k]) + step_rounding;
  }
  return bound;
}

}  // namespace dyncheck::theory::calib
