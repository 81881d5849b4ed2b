#pragma once
// The derived escape-time prediction of population GD from zero correlation (specs/scb.md §4.3),
// shared by scb.escape_time_log_T (its derivation is written there) and scb.two_stage_detection:
// the first step with α ≥ c is t_lin + δ + U, U ∈ [0, 1), up to the phase error of δ, the dropped
// −α/T drift Δ(T) and the decaying linear mode.

#include <cmath>
#include <limits>
#include <vector>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/theory/scb/phases.hpp"

namespace dyncheck::checks::scb {

inline double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(x.size());
  my /= static_cast<double>(x.size());
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxy / sxx;
}

/// How much later than t_lin the linearised GD, with its decaying mode, reaches c: x_t = (eta/r)((1+r)^t -
/// (1-r)^t)/(2T) and (1-r)^t <= (1+r)^{-t}, so with q = eta/(2cTr) the crossing moves by at most
/// -ln(1 - q^2)/ln(1 + r) steps (needs q < 1).
inline double decaying_mode_shift(double c, double T, double eta, double r) {
  const double q = eta / (2 * c * T * r);
  return q < 1 ? -portable::log1p(-q * q) / portable::log1p(r) : std::numeric_limits<double>::infinity();
}

/// The prediction at one T: t_lin (with the growth rate `r_linear`, the theory's or a mutant's), the
/// discrete delay δ and the three error terms of the first passage (scb.escape_time_log_T's header).
struct EscapePoint {
  double linear = 0, delay = 0, phase = 0, slack = 0, decay = 0, r = 0, landing = 0;
};

/// Needs 0 < c < landing_alpha(eta, rho_bar, eta_A_K_P). `drift` scales the 1/T drift of t_lin.
inline EscapePoint escape_point(double c, double T, double eta, double rho_bar, double eta_A_K_P, double r_linear,
                                double drift = 1) {
  namespace tscb = theory::scb;
  EscapePoint point;
  point.r = tscb::growth_rate(eta, rho_bar, eta_A_K_P);
  point.landing = tscb::landing_alpha(eta, rho_bar, eta_A_K_P);
  point.linear = portable::log(2 * c * T / drift * r_linear / eta) / portable::log1p(r_linear);
  const auto discrete = tscb::escape_delay_discrete(c, eta, rho_bar, eta_A_K_P);
  point.delay = discrete.delay;
  point.phase = discrete.phase_error;
  point.slack =
      2 * eta * (1 + point.r) / (point.r * T * portable::log1p(point.r) * (1 - c * c / (point.landing * point.landing)));
  point.decay = decaying_mode_shift(c, T, eta, point.r);
  return point;
}

/// The largest error of the least-squares slope of the first passages against ln T: what integer
/// rounding can fake, sum_{l_i > mean}(l_i - mean) / sum (l_i - mean)^2, plus the Δ(T), phase-error and
/// decaying-mode terms weighted by |l_i - mean| alike.
inline double escape_slope_error(const std::vector<double>& log_T, const std::vector<EscapePoint>& points) {
  double mean_log = 0;
  for (double l : log_T) mean_log += l;
  mean_log /= static_cast<double>(log_T.size());
  double sxx = 0, positive = 0, weighted_slack = 0;
  for (std::size_t j = 0; j < points.size(); ++j) {
    const double dev = log_T[j] - mean_log;
    sxx += dev * dev;
    if (dev > 0) positive += dev;
    weighted_slack += std::abs(dev) * (points[j].slack + points[j].phase + points[j].decay);
  }
  return (positive + weighted_slack) / sxx;
}

}  // namespace dyncheck::checks::scb
