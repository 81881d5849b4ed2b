#include "dyncheck/theory/calib/balanced_factorisation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <rapidcheck/gtest.h>

#include "dyncheck/theory/numeric/ode.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"

namespace dyncheck::theory::calib {
namespace {

using S = mp50;

TEST(BalancedFactor, SolvesTheBalancedFlowToFiftyDigits) {
  const S s("1.3"), u0("0.2"), t("0.9"), h("1e-15");
  const S derivative = (balanced_factor(s, u0, t + h) - balanced_factor(s, u0, t - h)) / (2 * h);
  const S u = balanced_factor(s, u0, t);
  EXPECT_LT(to_double(abs(derivative - (s - u * u) * u)), 1e-25);  // O(h^2) central difference
  EXPECT_LT(to_double(abs(balanced_factor(s, u0, S(0)) - u0)), 1e-48);
  EXPECT_LT(to_double(abs(balanced_factor(s, u0, S(60)) - sqrt(s))), 1e-45);  // converges to sqrt(s)
}

// The ODE right-hand side the claim integrates (FactorisationGradientFlow, -grad of (uv - s)^2 / 2)
// against the logistic closed form: from a balanced start u = v the flow stays balanced and u(t) is
// balanced_factor. Independent of the closed form: a Bulirsch-Stoer solve of the field in 50 digits.
TEST(FactorisationGradientFlow, BalancedStartFollowsTheClosedForm) {
  const S s("1.3"), u0("0.2");
  const FactorisationGradientFlow<S> flow{s};
  Vector<S> x0(2);
  x0 << u0, u0;
  const std::vector<S> times{S(0), S("0.5"), S("2"), S("7")};
  const OdeSolution<S> solution = integrate_with_error(flow, x0, times, S("1e-30"));
  for (std::size_t i = 0; i < times.size(); ++i) {
    const S expected = balanced_factor(s, u0, times[i]);
    EXPECT_LT(to_double(abs(solution.states[i][0] - expected)), 1e-28) << i;
    EXPECT_LT(to_double(abs(solution.states[i][1] - expected)), 1e-28) << i;
  }
  // Off the balanced line the field is (-(uv - s) v, -(uv - s) u): at (2, 0.5) with s = 1.3, uv - s = -0.3,
  // so the field is (0.3 * 0.5, 0.3 * 2) = (0.15, 0.6).
  Vector<S> x(2), dxdt;
  x << S(2), S("0.5");
  flow(x, dxdt, S(0));
  ASSERT_EQ(dxdt.size(), 2);
  EXPECT_LT(to_double(abs(dxdt[0] - S("0.15"))), 1e-48);
  EXPECT_LT(to_double(abs(dxdt[1] - S("0.6"))), 1e-48);
}

/// Gradient descent on the balanced line in 50 digits: the exact iterates the bound speaks about.
std::vector<S> exact_iterates(const S& s, const S& u0, const S& eta, long long steps) {
  std::vector<S> u{u0};
  for (long long k = 0; k < steps; ++k) u.push_back(u.back() + eta * (s - u.back() * u.back()) * u.back());
  return u;
}

RC_GTEST_PROP(EulerErrorBound, BoundsTheDistanceOfGradientDescentToTheFlow, ()) {
  const double s = *rc::gen::inRange(5, 300) / 100.0;
  const double u0 = *rc::gen::inRange(1, 250) / 100.0;
  const double eta = *rc::gen::inRange(1, 101) / 100.0 * largest_resolved_step(s, u0);
  const long long steps = *rc::gen::inRange(1, 600);
  const std::vector<S> exact = exact_iterates(S(s), S(u0), S(eta), steps);
  std::vector<double> iterates;
  for (const S& u : exact) iterates.push_back(to_double(u));
  const std::vector<double> bound = euler_error_bound(iterates, s, eta);
  for (long long k = 0; k <= steps; k += 1 + steps / 20) {
    const S flow = balanced_factor(S(s), S(u0), S(eta) * S(k));
    RC_ASSERT(to_double(abs(flow - exact[static_cast<std::size_t>(k)])) <= bound[static_cast<std::size_t>(k)] * (1 + 1e-12) + 1e-15);
  }
}

RC_GTEST_PROP(EulerRoundingBound, BoundsTheRoundingOfDoubleIterates, ()) {
  const double s = *rc::gen::inRange(5, 300) / 100.0;
  const double u0 = *rc::gen::inRange(1, 250) / 100.0;
  const double eta = *rc::gen::inRange(1, 101) / 100.0 * largest_resolved_step(s, u0);
  const long long steps = *rc::gen::inRange(1, 2000);
  // The double iterates exactly as the simulation computes them (u = v, so residual * v == residual * u).
  std::vector<double> iterates{u0};
  for (long long k = 0; k < steps; ++k) {
    const double u = iterates.back();
    iterates.push_back(u - eta * (u * u - s) * u);
  }
  const std::vector<S> exact = exact_iterates(S(s), S(u0), S(eta), steps);
  const std::vector<double> bound = euler_rounding_bound(iterates, s, eta);
  for (std::size_t k = 0; k < iterates.size(); ++k) {
    RC_ASSERT(to_double(abs(S(iterates[k]) - exact[k])) <= bound[k]);
  }
}

TEST(EulerErrorBound, IsUnboundedFromAStepThatLeavesTheEnclosure) {
  const std::vector<double> bound = euler_error_bound({10.0, -90.0, 5.0}, 0.01, 0.1);
  EXPECT_EQ(bound[0], 0.0);
  EXPECT_FALSE(std::isfinite(bound[1]));
  EXPECT_FALSE(std::isfinite(bound[2]));
}

}  // namespace
}  // namespace dyncheck::theory::calib
