// The erf solution of theory/joma/linear_activation_erf.hpp against a direct 50-digit ODE solve
// of the reduced flow, its inverse, its blow-up time and the erfinv formula at t*.
#include <dyncheck/theory/joma/linear_activation_erf.hpp>
#include <dyncheck/theory/numeric/ode.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <type_traits>

namespace dyncheck::theory::joma {
namespace {

template <class S>
S num(const char* text) {
  if constexpr (std::is_same_v<S, double>) {
    return std::stod(text);
  } else {
    return S(text);
  }
}

template <class S>
LinearActivationErfSolution<S> example(bool zero_init) {
  Matrix<S> Delta(3, 2), V0(3, 2);
  Delta << num<S>("0.3"), num<S>("-0.2"), num<S>("0.1"), num<S>("0.15"), num<S>("-0.05"), num<S>("0.02");
  V0.setZero();
  Vector<S> zeta0 = Vector<S>::Zero(3);
  if (!zero_init) {
    V0 << num<S>("0.1"), num<S>("-0.3"), num<S>("0.2"), num<S>("0.05"), num<S>("-0.1"), num<S>("0.4");
    zeta0 << num<S>("0.2"), num<S>("-0.1"), num<S>("0.3");
  }
  return LinearActivationErfSolution<S>(Delta, V0, zeta0, num<S>("1.7"), num<S>("0.8"));
}

TEST(TheoryJomaLinearActivationErf, ClockInvertsTime) {
  const auto sol = example<mp50>(false);
  for (Eigen::Index l = 0; l < 3; ++l) {
    const mp50 t = mp50("0.7") * sol.blow_up_time(l);
    EXPECT_LT(to_double(abs(sol.time_at_clock(l, sol.clock_at_time(l, t)) - t)), 1e-45);
  }
}

TEST(TheoryJomaLinearActivationErf, MatchesDirectOdeSolveIn50Digits) {
  const auto sol = example<mp50>(false);
  const mp50 kappa("1.7"), eta_w("0.8");
  Matrix<mp50> Delta(3, 2);
  Delta << mp50("0.3"), mp50("-0.2"), mp50("0.1"), mp50("0.15"), mp50("-0.05"), mp50("0.02");
  // State (V row-major by token, then zeta): v' = eta_w Delta e^zeta, zeta' = kappa eta_w e^zeta Σ_k v Δ.
  auto system = [&](const Vector<mp50>& s, Vector<mp50>& ds, const mp50&) {
    for (Eigen::Index l = 0; l < 3; ++l) {
      const mp50 e = exp(s[6 + l]);
      mp50 drive = 0;
      for (Eigen::Index k = 0; k < 2; ++k) {
        ds[2 * l + k] = eta_w * Delta(l, k) * e;
        drive += s[2 * l + k] * Delta(l, k);
      }
      ds[6 + l] = kappa * eta_w * e * drive;
    }
  };
  Vector<mp50> s0(9);
  s0 << mp50("0.1"), mp50("-0.3"), mp50("0.2"), mp50("0.05"), mp50("-0.1"), mp50("0.4"), mp50("0.2"), mp50("-0.1"),
      mp50("0.3");
  mp50 t_end = sol.blow_up_time(0);
  for (Eigen::Index l = 1; l < 3; ++l) t_end = std::min(t_end, sol.blow_up_time(l));
  t_end *= mp50("0.8");
  const OdeSolution<mp50> ode = integrate_with_error(system, s0, {mp50(0), t_end}, mp50("1e-35"));
  const Matrix<mp50> V = sol.V(t_end);
  for (Eigen::Index l = 0; l < 3; ++l) {
    EXPECT_LT(to_double(abs(ode.states[1][6 + l] - sol.zeta(l, t_end))), 1e-30) << l;
    for (Eigen::Index k = 0; k < 2; ++k) EXPECT_LT(to_double(abs(ode.states[1][2 * l + k] - V(l, k))), 1e-30);
  }
}

// Both branches of the erf solution that the example above (every beta_l > 0) and the claims (V0 = 0,
// beta = 0) leave out: a token with beta_l < 0 (erf rather than erfc, in time_at_clock and
// clock_at_time) and a token with Delta_l = 0 (a_l = 0: zeta_l stays, the clock runs linearly, no
// blow-up). Checked against a direct 50-digit ODE solve of the flow, through zeta(t) for all tokens.
TEST(TheoryJomaLinearActivationErf, NegativeBetaAndZeroRowMatchDirectOdeSolveIn50Digits) {
  const mp50 kappa("1.3"), eta_w("0.6");
  Matrix<mp50> Delta(3, 2), V0(3, 2);
  Delta << mp50("0.25"), mp50("-0.1"), mp50("0"), mp50("0"), mp50("-0.15"), mp50("0.3");
  V0 << mp50("-0.2"), mp50("0.3"), mp50("0.5"), mp50("-0.4"), mp50("0.1"), mp50("0.2");
  Vector<mp50> zeta0(3);
  zeta0 << mp50("0.1"), mp50("-0.2"), mp50("0.05");
  const LinearActivationErfSolution<mp50> sol(Delta, V0, zeta0, kappa, eta_w);
  // beta_l = sum_k V0(l, k) Delta(l, k) by hand: -0.05 - 0.03 = -0.08, 0, -0.015 + 0.06 = 0.045.
  EXPECT_LT(to_double(abs(sol.beta()[0] - mp50("-0.08"))), 1e-48);
  EXPECT_EQ(sol.beta()[1], mp50(0));
  EXPECT_LT(to_double(abs(sol.beta()[2] - mp50("0.045"))), 1e-48);
  EXPECT_EQ(sol.a()[1], mp50(0));
  EXPECT_FALSE(is_finite(sol.blow_up_time(1)));
  EXPECT_GT(sol.blow_up_time(1), mp50(0));

  auto system = [&](const Vector<mp50>& s, Vector<mp50>& ds, const mp50&) {
    for (Eigen::Index l = 0; l < 3; ++l) {
      const mp50 e = exp(s[6 + l]);
      mp50 drive = 0;
      for (Eigen::Index k = 0; k < 2; ++k) {
        ds[2 * l + k] = eta_w * Delta(l, k) * e;
        drive += s[2 * l + k] * Delta(l, k);
      }
      ds[6 + l] = kappa * eta_w * e * drive;
    }
  };
  Vector<mp50> s0(9);
  s0 << V0(0, 0), V0(0, 1), V0(1, 0), V0(1, 1), V0(2, 0), V0(2, 1), zeta0[0], zeta0[1], zeta0[2];
  const mp50 t_end = mp50("0.8") * std::min(sol.blow_up_time(0), sol.blow_up_time(2));
  const OdeSolution<mp50> ode = integrate_with_error(system, s0, {mp50(0), t_end}, mp50("1e-35"));
  const Vector<mp50> zeta = sol.zeta(t_end);
  const Matrix<mp50> V = sol.V(t_end);
  for (Eigen::Index l = 0; l < 3; ++l) {
    EXPECT_LT(to_double(abs(ode.states[1][6 + l] - zeta[l])), 1e-30) << l;
    for (Eigen::Index k = 0; k < 2; ++k) EXPECT_LT(to_double(abs(ode.states[1][2 * l + k] - V(l, k))), 1e-30) << l;
    EXPECT_LT(to_double(abs(sol.time_at_clock(l, sol.clock_at_time(l, t_end)) - t_end)), 1e-45) << l;
  }
}

TEST(TheoryJomaLinearActivationErf, ZeroInitBlowUpTime) {
  const auto sol = example<mp50>(true);
  // t*_l = sqrt(pi / (2 kappa a_l)) / eta_w
  const mp50 expected = sqrt(boost::math::constants::pi<mp50>() / (mp50(2) * mp50("1.7") * sol.a()[0])) / mp50("0.8");
  EXPECT_LT(to_double(abs(sol.blow_up_time(0) - expected)), 1e-45);
}

TEST(TheoryJomaLinearActivationErf, ZetaAtFirstBlowUpIsErfinvSquared) {
  const auto sol = example<mp50>(true);
  // token 0 has the largest a_l; evaluate token 1 just before t*_0 and extrapolate the limit.
  const mp50 t_star = sol.blow_up_time(0);
  const mp50 limit = zeta_at_first_blow_up(sqrt(sol.a()[1]), sqrt(sol.a()[0]));
  const mp50 near = sol.zeta(1, t_star * (mp50(1) - mp50("1e-30")));
  EXPECT_LT(to_double(abs(near - limit)), 1e-25);
}

// The double path (portable erf/erfc, inverses in mp50 rounded to double: erf_detail) against the
// 50-digit solution, for every token of both examples (beta > 0 and beta = 0): relative 1e-12 allows
// the conditioning of tau(t) near the blow-up (at most ~1e3 here) times a few double roundings.
TEST(TheoryJomaLinearActivationErf, DoubleAgreesWithFiftyDigits) {
  for (const bool zero_init : {false, true}) {
    const auto wide = example<mp50>(zero_init);
    const auto narrow = example<double>(zero_init);
    for (Eigen::Index l = 0; l < 3; ++l) {
      const double t_star = to_double(wide.blow_up_time(l));
      EXPECT_NEAR(narrow.blow_up_time(l), t_star, 1e-13 * t_star) << l;
      for (const double fraction : {0.1, 0.5, 0.9}) {
        const double t = fraction * t_star;
        const double tau = to_double(wide.clock_at_time(l, mp50(t)));
        EXPECT_NEAR(narrow.clock_at_time(l, t), tau, 1e-12 * std::abs(tau)) << l << " " << fraction;
        EXPECT_NEAR(narrow.time_at_clock(l, tau), to_double(wide.time_at_clock(l, mp50(tau))), 1e-13 * t) << l;
      }
    }
  }
  EXPECT_NEAR(zeta_at_first_blow_up(0.3, 0.5), to_double(zeta_at_first_blow_up(mp50("0.3"), mp50("0.5"))), 1e-15);
}

TEST(TheoryJomaLinearActivationErf, RejectsTimesPastBlowUp) {
  const auto sol = example<double>(true);
  EXPECT_THROW(sol.clock_at_time(0, sol.blow_up_time(0) * 1.01), std::domain_error);
  EXPECT_THROW(zeta_at_first_blow_up(2.0, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::joma
