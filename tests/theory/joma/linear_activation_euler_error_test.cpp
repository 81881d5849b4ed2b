// theory/joma/linear_activation_euler_error.hpp: the leading Euler error coefficient against explicit Euler
// itself (at two steps, so that the O(h²) remainder is visible), and the closed form of the flow it carries.
#include <dyncheck/theory/joma/linear_activation_erf.hpp>
#include <dyncheck/theory/joma/linear_activation_euler_error.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace dyncheck::theory::joma {
namespace {

// Explicit Euler on (τ, ζ) with n steps to t_end, in double.
std::pair<double, double> euler(double a, double beta, double zeta0, double kappa, double t_end, int n) {
  double tau = 0, zeta = zeta0;
  const double h = t_end / n;
  for (int i = 0; i < n; ++i) {
    const double e = std::exp(zeta);
    const double dzeta = kappa * e * (beta + a * tau);
    tau += h * e;
    zeta += h * dzeta;
  }
  return {tau, zeta};
}

TEST(TheoryJomaLinearActivationEulerError, CoefficientMatchesEuler) {
  // beta > 0, beta < 0 and beta = 0 (zero init), with a non-zero zeta0.
  for (const double beta : {0.1, -0.2, 0.0}) {
    const double a = 0.3, zeta0 = 0.2, kappa = 1.5;
    Matrix<mp50> Delta(1, 1), V0(1, 1);
    Delta(0, 0) = sqrt(mp50(a));
    V0(0, 0) = mp50(beta) / sqrt(mp50(a));
    const LinearActivationErfSolution<mp50> sol(Delta, V0, Vector<mp50>::Constant(1, mp50(zeta0)), mp50(kappa), mp50(1));
    const double t_end = 0.8 * to_double(sol.blow_up_time(0));
    std::vector<mp50> errors;
    const auto states = euler_error_coefficient<mp50>(mp50(a), mp50(beta), mp50(zeta0), mp50(kappa), mp50(1),
                                                      {mp50(0), mp50(t_end)}, mp50("1e-25"), &errors);
    // The flow it carries is the closed form.
    EXPECT_LT(to_double(abs(states[1][0] - sol.clock_at_time(0, mp50(t_end)))), 1e-20) << beta;
    EXPECT_LT(to_double(abs(states[1][1] - sol.zeta(0, mp50(t_end)))), 1e-20) << beta;
    EXPECT_LT(to_double(errors[1]), 1e-20);
    // Euler's error / h → ε: (y_h - y)/h = ε + O(h); its O(h) part shrinks by 2 per halving.
    const double eps_tau = to_double(states[1][2]), eps_zeta = to_double(states[1][3]);
    double previous = 0;
    for (const int n : {4000, 8000}) {
      const auto [tau, zeta] = euler(a, beta, zeta0, kappa, t_end, n);
      const double h = t_end / n;
      const double gap = std::abs((zeta - to_double(sol.zeta(0, mp50(t_end)))) / h - eps_zeta) +
                         std::abs((tau - to_double(sol.clock_at_time(0, mp50(t_end)))) / h - eps_tau);
      EXPECT_LT(gap, 2e-3 * (1 + std::abs(eps_zeta))) << beta << " n = " << n;
      if (previous > 0) {
        EXPECT_NEAR(previous / gap, 2.0, 0.1) << beta;
      }
      previous = gap;
    }
  }
}

TEST(TheoryJomaLinearActivationEulerError, RejectsBadArguments) {
  EXPECT_THROW(euler_error_coefficient<double>(0.0, 0.0, 0.0, 1.0, 1.0, {0.0, 1.0}, 1e-8), std::invalid_argument);
  EXPECT_THROW(euler_error_coefficient<double>(1.0, 0.0, 0.0, 1.0, 1.0, {0.5, 1.0}, 1e-8), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::joma
