// theory/joma/nonlinear_flow.hpp: quadrature against an independent mpmath value, monotonicity in
// |mu| (property), the ODE's late-time rate, and the entropy limits.
#include <dyncheck/theory/joma/nonlinear_flow.hpp>
#include <dyncheck/theory/numeric/ode.hpp>

#include <gtest/gtest.h>
#include <vector>
#include <rapidcheck/gtest.h>

namespace dyncheck::theory::joma {
namespace {

TEST(TheoryJomaNonlinearFlow, TimeToPrecisionMatchesMpmath) {
  // mpmath 50 digits: quad(exp(-mu^2 s^2/2)/(1-s), [0, 0.9, 0.999, 1-1e-6]) at mu = 1.5
  const mp50 reference("5.29090854978154264349086413292079049897800826493");
  const auto q = time_to_relative_precision(mp50("1.5"), mp50("1e-6"));
  EXPECT_LT(to_double(abs(q.value - reference)), 1e-45);
}

TEST(TheoryJomaNonlinearFlow, OffsetIsTheLimit) {
  const mp50 mu("0.8"), eps("1e-30");
  const auto t = time_to_relative_precision(mu, eps);
  const auto c = time_to_precision_offset(mu);
  // t(ε) - e^{-μ²/2} ln(1/ε) - C(μ) = -∫_{1-ε}^1 g = O(ε)
  EXPECT_LT(to_double(abs(t.value - exp(-mu * mu / 2) * log(1 / eps) - c.value)), 1e-28);
}

TEST(TheoryJomaNonlinearFlow, TimeToPrecisionAtEpsilonsThatBrokeTanhSinh) {
  // Boost 1.74's tanh_sinh aborted (BOOST_ASSERT) for some epsilon when the lower end was s = 0 (issue #10 fuzz,
  // seed 14005: epsilon = 1.3267024118788857e-06). Over a log grid of epsilon and that value, the time agrees with
  // the offset: t(eps) = C(mu) - int_0^eps g(h) dh + e^{-a} ln(1/eps), a = mu^2/2, where
  // int_0^eps g = e^{-a} (2 a eps + (2a^2 - a) eps^2/2 + O(eps^3)); tolerance (2a^2 + a) eps^2 covers the rest.
  for (const char* text : {"0.45747051501419006", "1.9079554739944657"}) {
    const mp50 mu(text), a = mu * mu / 2;
    const mp50 c = time_to_precision_offset(mu).value;
    std::vector<mp50> epsilons{mp50(1.3267024118788857e-06)};
    for (int i = 0; i <= 48; ++i) epsilons.push_back(pow(mp50(10), mp50(-9) + mp50(i) / 8));
    for (const mp50& eps : epsilons) {
      const mp50 t = time_to_relative_precision(mu, eps).value;
      const mp50 expected = c - exp(-a) * (2 * a * eps + (2 * a * a - a) * eps * eps / 2) + exp(-a) * log(1 / eps);
      EXPECT_LT(to_double(abs(t - expected)), to_double((2 * a * a + a) * eps * eps) + 1e-24)
          << "mu = " << text << ", eps = " << to_double(eps);
    }
  }
}

RC_GTEST_PROP(TheoryJomaNonlinearFlow, TimeToPrecisionDecreasesInMu, ()) {
  const double mu = 0.2 + 0.01 * *rc::gen::inRange(0, 270);
  const double eps = std::pow(10.0, -*rc::gen::inRange(2, 12));
  RC_ASSERT(time_to_relative_precision(mu + 0.02, eps).value < time_to_relative_precision(mu, eps).value);
}

TEST(TheoryJomaNonlinearFlow, LateRateOfOdeIsExpMuSquaredOverTwo) {
  for (const char* text : {"0.7", "1.9"}) {
    const mp50 mu(text);
    // From δ/μ = 1e-8 on, d ln δ/dt = -e^{(μ-δ)²/2} = -e^{μ²/2}(1 + O(μδ)): relative bias ≤ 1e-7.
    const mp50 t1 = time_to_relative_precision(mu, mp50("1e-8")).value;
    const mp50 t2 = t1 + 1 / late_time_rate(mu);
    Vector<mp50> mu_vector(1), v0 = Vector<mp50>::Zero(1);
    mu_vector << mu;
    const OdeSolution<mp50> ode = integrate_with_error(NonlinearJomaFlow<mp50>{mu_vector}, v0, {mp50(0), t1, t2}, mp50("1e-28"));
    const mp50 rate = log((mu - ode.states[1][0]) / (mu - ode.states[2][0])) / (t2 - t1);
    EXPECT_LT(to_double(abs(rate / late_time_rate(mu) - 1)), 1e-6) << text;
  }
}

TEST(TheoryJomaNonlinearFlow, EntropyLimits) {
  Vector<double> x = Vector<double>::Constant(4, 0.25), mu(4), zero = Vector<double>::Zero(4);
  mu << 0.5, 1, 1.5, 2;
  EXPECT_NEAR(entropy(nonlinear_attention(x, zero)), std::log(4.0), 1e-15);
  const Vector<double> p = nonlinear_attention(x, mu);
  EXPECT_NEAR(p.sum(), 1.0, 1e-15);
  EXPECT_LT(asymptotic_attention_entropy(x, mu), std::log(4.0));
}

TEST(TheoryJomaNonlinearFlow, RejectsBadArguments) {
  EXPECT_THROW(time_to_relative_precision(1.0, 1.5), std::invalid_argument);
  EXPECT_THROW(time_to_relative_precision(0.0, 0.1), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::joma

// nonlinear_flow_solution.hpp: the chained solve reaches v = μ(1 − ε) exactly at the quadrature time
// t(ε), and its error estimate covers the actual error.
#include <dyncheck/theory/joma/nonlinear_flow_solution.hpp>

namespace dyncheck::theory::joma {
namespace {

TEST(TheoryJomaNonlinearFlowSolution, ReachesQuadratureTargetWithinEstimate) {
  for (const char* text : {"0.4", "2.6"}) {
    const mp50 mu(text), eps("1e-5");
    const mp50 t = time_to_relative_precision(mu, eps).value;
    Vector<mp50> m(1), v0 = Vector<mp50>::Zero(1);
    m << mu;
    const NonlinearFlowSolution<mp50> sol = solve_nonlinear_flow(m, v0, {mp50(0), t}, mp50("1e-20"), mp50("0.25"), mp50(2));
    const mp50 error = abs(sol.states[1][0] - mu * (1 - eps));
    EXPECT_LT(to_double(error), 1e-17) << text;
    EXPECT_LE(to_double(error), to_double(sol.error_estimate[1]) + 1e-30) << text;
  }
}

TEST(TheoryJomaNonlinearFlowSolution, RejectsBadArguments) {
  Vector<double> m(1), v0(1);
  m << 1.0;
  v0 << 0.0;
  EXPECT_THROW(solve_nonlinear_flow<double>(m, v0, {0.0, 1.0}, 1e-8, 0.0), std::invalid_argument);
  EXPECT_THROW(solve_nonlinear_flow<double>(m, v0, {1.0, 0.5}, 1e-8), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::joma
