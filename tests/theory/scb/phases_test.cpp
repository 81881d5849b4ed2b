// escape_time_prediction and escape_nonlinear_delay (theory/scb/phases.hpp) against independent
// computations: the defining logarithms, a Runge-Kutta integration of the logistic flow, and the
// discrete delay escape_delay_discrete that scb.escape_time_log_T uses.
#include "dyncheck/theory/scb/phases.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dyncheck::theory::scb {
namespace {

TEST(EscapeTimePrediction, IsLnTwoCTOverLnOnePlusR) {
  for (const double T : {100.0, 1e4, 1e6}) {
    const double c = 0.3, eta = 0.4, rho_bar = 0.45, eta_A_K_P = 0.7;
    const double r = std::sqrt(eta * rho_bar * eta_A_K_P);
    const double predicted = escape_time_prediction(c, T, eta, rho_bar, eta_A_K_P);
    EXPECT_NEAR(predicted, std::log(2 * c * T) / std::log(1 + r), 1e-12 * predicted);
    // The linearised GD's growing mode differs by the T-independent ln(r/eta)/ln(1+r).
    EXPECT_NEAR(escape_time_linear(c, T, eta, rho_bar, eta_A_K_P) - predicted, std::log(r / eta) / std::log(1 + r), 1e-9);
  }
  EXPECT_THROW(escape_time_prediction(0.0, 100.0, 0.4, 0.45, 0.7), std::invalid_argument);
  EXPECT_THROW(escape_time_prediction(0.3, 0.0, 0.4, 0.45, 0.7), std::invalid_argument);
}

/// The delay of the flow x' = rho x (1 - x^2/a^2), rho = ln(1 + r), behind pure growth e^{rho t},
/// from x0 to c, by classical RK4 with step h.
double logistic_delay_rk4(double c, double a, double r, double x0, double h) {
  const double rho = std::log1p(r);
  auto f = [&](double x) { return rho * x * (1 - x * x / (a * a)); };
  double x = x0, t = 0;
  while (true) {
    const double k1 = f(x), k2 = f(x + h / 2 * k1), k3 = f(x + h / 2 * k2), k4 = f(x + h * k3);
    const double next = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    if (next >= c) {
      // Place the crossing inside the step by the local growth rate of ln x.
      const double fraction = (std::log(c) - std::log(x)) / (std::log(next) - std::log(x));
      return t + fraction * h - std::log(c / x0) / rho;
    }
    x = next;
    t += h;
  }
}

TEST(EscapeNonlinearDelay, MatchesTheIntegratedLogisticFlow) {
  const double eta = 0.5, rho_bar = 0.49, eta_A_K_P = 0.5;
  const double a = landing_alpha(eta, rho_bar, eta_A_K_P), r = growth_rate(eta, rho_bar, eta_A_K_P);
  for (const double fraction : {0.2, 0.5, 0.8}) {
    const double c = fraction * a;
    const double delay = escape_nonlinear_delay(c, eta, rho_bar, eta_A_K_P);
    // x0 = 1e-9 c: the flow's delay converges to the formula as x0 -> 0 (error O(x0^2 / a^2)).
    const double integrated = logistic_delay_rk4(c, a, r, 1e-9 * c, 1e-3);
    EXPECT_NEAR(integrated, delay, 1e-6 * std::max(1.0, delay)) << "c = " << c;
    EXPECT_GT(delay, 0.0);
  }
  EXPECT_THROW(escape_nonlinear_delay(1.01 * a, eta, rho_bar, eta_A_K_P), std::invalid_argument);
  EXPECT_THROW(escape_nonlinear_delay(0.0, eta, rho_bar, eta_A_K_P), std::invalid_argument);
}

TEST(EscapeNonlinearDelay, IsTheSmallRateLimitOfTheDiscreteDelay) {
  // The GD map alpha+ = alpha (1 + r (1 - alpha^2/alpha*^2)) and the logistic flow differ at O(r)
  // relative: the discrete delay approaches the flow's as r -> 0.
  const double rho_bar = 0.5, eta_A_K_P = 0.5;
  for (const double eta : {0.02, 0.002}) {
    const double a = landing_alpha(eta, rho_bar, eta_A_K_P), r = growth_rate(eta, rho_bar, eta_A_K_P);
    const double c = 0.6 * a;
    const double flow = escape_nonlinear_delay(c, eta, rho_bar, eta_A_K_P);
    const auto discrete = escape_delay_discrete(c, eta, rho_bar, eta_A_K_P);
    EXPECT_NEAR(discrete.delay, flow, 4 * r * flow + discrete.phase_error + 1e-6) << "eta = " << eta;
  }
}

}  // namespace
}  // namespace dyncheck::theory::scb
