#include "dyncheck/theory/scb/symmetric_2d.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/phases.hpp"
#include "dyncheck/theory/scb/reduced_recurrence.hpp"
#include "test_instance.hpp"

namespace dyncheck::theory::scb {
namespace {

using S = mp50;

// From beta_k = beta, nu = omega = 0 the reduced recurrence stays symmetric and equals the 2-D one.
RC_GTEST_PROP(Symmetric2D, EqualsTheReducedRecurrenceFromASymmetricStart, ()) {
  const int N = *rc::gen::inRange(2, 6);
  const int T = *rc::gen::inRange(5, 40);
  const int Q = *rc::gen::inRange(1, T / 2 + 1);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const Instance<S> inst = test::random_instance<S>(N, T, Q, seed);
  const Constants<S> c = constants(inst);
  const S eta = S(*rc::gen::inRange(5, 61)) / 100, eta_A_K_P = S(*rc::gen::inRange(5, 81)) / 100;
  const S alpha0 = S(*rc::gen::inRange(-50, 50)) / 100, beta0 = S(*rc::gen::inRange(-50, 50)) / 100;
  ReducedState<S> state{inst.mu, alpha0, S(0), Vector<S>::Constant(N, beta0), Vector<S>::Zero(N)};
  Symmetric2D<S> s{alpha0, beta0};
  for (int t = 0; t < 100; ++t) {
    state = reduced_gd_step(inst, c, state, eta, eta_A_K_P / c.K_P);
    s = symmetric_2d_step(s, eta, c.rho_bar, eta_A_K_P, S(T));
    RC_ASSERT(to_double(abs(state.alpha - s.alpha)) < 1e-40);
    RC_ASSERT(to_double((state.beta.array() - s.beta).abs().maxCoeff()) < 1e-40);
    RC_ASSERT(to_double(abs(state.nu) + state.omega.cwiseAbs().maxCoeff()) == 0.0);
  }
}

TEST(Symmetric2D, EscapeTimesMatchTheSpecReferenceValues) {
  // §4.3: c = 1/2, eta = 0.5, normalised rates; the spec reports 12, 18, 24, 29, 35 for T = 1e2..1e6
  // at its instance's rho_bar (not stated); check the ln T growth per decade instead, and that the
  // escape happens only after the linear prediction (alpha_t <= x_t).
  const double eta = 0.5, rho_bar = 0.5, eta_A_K_P = eta / rho_bar;
  long long previous = 0;
  for (int decade = 2; decade <= 6; ++decade) {
    const double T = std::pow(10.0, decade);
    const auto t = population_escape_steps(0.5, T, eta, rho_bar, eta_A_K_P, 0.0, 0.0, 1000);
    ASSERT_TRUE(t.has_value());
    EXPECT_GE(static_cast<double>(*t), escape_time_linear(0.5, T, eta, rho_bar, eta_A_K_P) - 1e-9);
    if (decade > 2) {
      EXPECT_NEAR(static_cast<double>(*t - previous), std::log(10.0) / std::log1p(eta), 1.0);
    }
    previous = *t;
  }
}

TEST(Symmetric2D, TransferReachesTheProductWithoutTheDrift) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto with_drift = steps_to_product(0.5, 1e4, 0.5, 0.5, 1.0, 0.3, 0.0, 1000);
  const auto without = steps_to_product(0.5, inf, 0.5, 0.5, 1.0, 0.3, 0.0, 1000);
  ASSERT_TRUE(with_drift && without);
  EXPECT_LE(std::abs(*with_drift - *without), 1);
  EXPECT_FALSE(steps_to_product(0.5, inf, 0.5, 0.5, 1.0, 0.0, 0.0, 1000).has_value());  // no signal, no drift
}

TEST(Phases, LandingAndSlowRateMatchTheTwoDimensionalRecurrence) {
  // Fast phase: alpha at the first alpha beta >= 0.99 vs (eta rho_bar/(eta_A K_P))^{1/4} (1% at T >= 1e3).
  const double eta = 0.2, rho_bar = 0.5, eta_A_K_P = 0.5, T = 1e4;
  Symmetric2D<double> s{0, 0};
  while (s.alpha * s.beta < 0.99) s = symmetric_2d_step(s, eta, rho_bar, eta_A_K_P, T);
  EXPECT_NEAR(s.alpha / landing_alpha(eta, rho_bar, eta_A_K_P), 1.0, 0.01);
  // Slow phase: the exact linearised rate agrees with the 1/T leading term to O(1/T).
  const double exact = slow_phase_gd_rate(eta, T, rho_bar, eta_A_K_P);
  EXPECT_NEAR(exact / slow_phase_rate(eta, T, rho_bar, eta_A_K_P), 1.0, 10 * eta / T);
}

TEST(Phases, SignBranch) {
  EXPECT_EQ(predicted_sign_branch(-0.5 / 100, 100.0), 1);
  EXPECT_EQ(predicted_sign_branch(-2.0 / 100, 100.0), -1);
  EXPECT_EQ(predicted_sign_branch(0.0, 100.0), 1);
}

}  // namespace
}  // namespace dyncheck::theory::scb
