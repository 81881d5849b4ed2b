// dyncheck/theory/joma/nonlinear_flow.hpp
//
// The nonlinear JoMA dynamics with exp attention and uniform x (specs/joma.md §4, Th3/Th4,
// "Derived version" [derived]): v' = (mu - v) ∘ exp(v^2/2), its late-time rates, its time to
// relative precision, and the attention entropy along it.
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>

#include <boost/math/quadrature/tanh_sinh.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::theory::joma {

/// Right-hand side \f$\dot v = (\mu - v)\circ e^{v^{\circ 2}/2}\f$ for theory::integrate_with_error.
template <class S>
struct NonlinearJomaFlow {
  Vector<S> mu;
  void operator()(const Vector<S>& v, Vector<S>& dvdt, const S& /*t*/) const {
    using portable::exp;
    for (Eigen::Index j = 0; j < v.size(); ++j) dvdt[j] = (mu[j] - v[j]) * exp(v[j] * v[j] / S(2));
  }
};

/// Late-time rate of component j (Th4 [paper], constant [derived]): \f$\delta_j = \mu_j - v_j\f$ obeys
/// \f$\frac{d}{dt}\ln\delta_j = -e^{v_j^2/2} \to -e^{\mu_j^2/2}\f$.
template <class S>
S late_time_rate(const S& mu) {
  using portable::exp;
  return exp(mu * mu / S(2));
}

/// The smooth part of the time-to-precision integrand as a function of \f$h = 1 - s\f$,
/// \f$g = (e^{-\mu^2 s^2/2} - e^{-\mu^2/2})/(1-s) = e^{-\mu^2/2}\,\mathrm{expm1}(\mu^2 h(2-h)/2)/h\f$, written
/// through expm1 so that nothing cancels as \f$h \to 0\f$, and \f$g(h = 0) = \mu^2e^{-\mu^2/2}\f$.
template <class S>
S time_to_precision_integrand_in_h(const S& mu, const S& h) {
  using portable::exp;
  using portable::expm1;  // Boost.Multiprecision's expm1 is found by argument-dependent lookup
  const S m2 = mu * mu;
  if (h == S(0)) return m2 * exp(-m2 / S(2));
  return exp(-m2 / S(2)) * expm1(m2 * h * (S(2) - h) / S(2)) / h;
}

/// The same integrand as a function of s, \f$g(s) = (e^{-\mu^2 s^2/2} - e^{-\mu^2/2})/(1-s)\f$.
template <class S>
S time_to_precision_integrand(const S& mu, const S& s) {
  return time_to_precision_integrand_in_h(mu, S(1) - s);
}

/// Result of a quadrature with its error estimate.
template <class S>
struct QuadratureValue {
  S value;
  S error;
};

/// Time for component j to reach relative precision \f$\varepsilon\f$ from \f$v_j(0) = 0\f$ (§4 [derived]):
/// \f[ t_j(\varepsilon) = \int_0^{1-\varepsilon}\frac{e^{-\mu^2s^2/2}}{1-s}ds
///     = \int_0^{1-\varepsilon} g(s)\,ds + e^{-\mu^2/2}\ln\tfrac1\varepsilon, \f]
/// the smooth part by tanh-sinh quadrature. Strictly decreasing in \f$|\mu|\f$.
template <class S>
QuadratureValue<S> time_to_relative_precision(const S& mu, const S& epsilon) {
  using portable::exp;
  using portable::log;
  using std::sqrt;
  if (!(mu != S(0)) || !(epsilon > S(0)) || !(epsilon < S(1))) {
    throw std::invalid_argument("time_to_relative_precision: needs mu != 0 and epsilon in (0, 1)");
  }
  // min_complement given explicitly: Boost 1.74 derives it from min_value<S>(), which for MPFR
  // scalars ends in itrunc(inf); the integrand is smooth up to both ends, so 1e-300 loses nothing.
  boost::math::quadrature::tanh_sinh<S> integrator(15, S(1e-300));
  S error = 0;
  const S tolerance = sqrt(std::numeric_limits<S>::epsilon());  // tanh-sinh roughly doubles digits per level
  // Integrated in h = 1 - s over [epsilon, 1], not in s over [0, 1 - epsilon]: Boost 1.74's tanh_sinh with a
  // lower end a = 0 sets its left complement to min_value / diff, and (min_value / diff) * diff can round
  // below min_value to 0 in cpp_bin_float (no subnormals), failing BOOST_ASSERT((left_min_complement * diff + a)
  // > a) for some epsilon (issue #10 fuzz, seed 14005: epsilon = 1.3267024118788857e-06 aborted the run).
  // With a = epsilon > 0 the complement is an ulp of a / diff, a normal number.
  const S smooth = integrator.integrate([&mu](const S& h) { return time_to_precision_integrand_in_h(mu, h); }, epsilon,
                                        S(1), tolerance, &error);
  return {smooth + exp(-mu * mu / S(2)) * log(S(1) / epsilon), error};
}

/// \f$C(\mu) = \int_0^1 g(s)\,ds\f$: \f$t_j(\varepsilon) = e^{-\mu^2/2}\ln(1/\varepsilon) + C(\mu) + o(1)\f$.
template <class S>
QuadratureValue<S> time_to_precision_offset(const S& mu) {
  using std::sqrt;
  // min_complement given explicitly: Boost 1.74 derives it from min_value<S>(), which for MPFR
  // scalars ends in itrunc(inf); the integrand is smooth up to both ends, so 1e-300 loses nothing.
  boost::math::quadrature::tanh_sinh<S> integrator(15, S(1e-300));
  S error = 0;
  const S value = integrator.integrate([&mu](const S& s) { return time_to_precision_integrand(mu, s); }, S(0), S(1),
                                       sqrt(std::numeric_limits<S>::epsilon()), &error);
  return {value, error};
}

/// Attention \f$p \propto x\circ e^{v^{\circ2}/2}\f$ (exp attention normalised, §4).
template <class S>
Vector<S> nonlinear_attention(const Vector<S>& x, const Vector<S>& v) {
  using portable::exp;
  if (x.size() != v.size() || x.size() == 0) throw std::invalid_argument("nonlinear_attention: x and v must have equal, non-zero sizes");
  Vector<S> p(x.size());
  for (Eigen::Index l = 0; l < x.size(); ++l) {
    if (!(x[l] >= S(0))) throw std::invalid_argument("nonlinear_attention: x must be >= 0");
    p[l] = x[l] * exp(v[l] * v[l] / S(2));
  }
  return p / p.sum();
}

/// Shannon entropy in nats, \f$H(p) = -\sum_l p_l\ln p_l\f$ (0 ln 0 = 0).
template <class S>
S entropy(const Vector<S>& p) {
  using portable::log;
  S h = 0;
  for (Eigen::Index l = 0; l < p.size(); ++l) {
    if (p[l] > S(0)) h -= p[l] * log(p[l]);
  }
  return h;
}

/// \f$H(\infty) = H(\mathrm{softmax}(\ln x + \mu^{\circ 2}/2))\f$, the entropy once every component converged.
template <class S>
S asymptotic_attention_entropy(const Vector<S>& x, const Vector<S>& mu) {
  return entropy(nonlinear_attention(x, mu));
}

}  // namespace dyncheck::theory::joma
