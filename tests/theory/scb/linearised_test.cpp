#include "dyncheck/theory/scb/linearised.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <vector>

#include "dyncheck/theory/numeric/ode.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/symmetric_2d.hpp"

namespace dyncheck::theory::scb {
namespace {

using S = mp50;

RC_GTEST_PROP(LinearisedGd, EqualsTheIteratedLinearMap, ()) {
  const S eta = S(*rc::gen::inRange(5, 61)) / 100;
  const S coupling = S(*rc::gen::inRange(5, 100)) / 100;
  const S T = S(*rc::gen::inRange(5, 100000));
  S x = S(0), y = S(0);
  for (long long t = 1; t <= 80; ++t) {
    const S x_next = x + eta * (y + S(1) / T);
    y = y + coupling * x;
    x = x_next;
    const LinearisedPoint<S> closed = linearised_gd(t, eta, coupling, T);
    RC_ASSERT(abs(closed.x - x) <= S(1e-40) * abs(x));
    RC_ASSERT(abs(closed.y - y) <= S(1e-40) * abs(y));  // y_1 = 0 exactly
  }
}

TEST(LinearisedGd, NormalisedRatesGiveTheSpecClosedForm) {
  const S eta("0.3"), T(1000);
  for (long long t : {1LL, 7LL, 30LL}) {
    const LinearisedPoint<S> p = linearised_gd(t, eta, eta, T);
    const S up = pow(1 + eta, S(t)), down = pow(1 - eta, S(t));
    EXPECT_LT(to_double(abs(p.x - (up - down) / (2 * T))), 1e-50);
    EXPECT_LT(to_double(abs(p.y - (up + down - 2) / (2 * T))), 1e-50);
  }
}

struct LinearFlow {
  S eta, coupling, inv_T;
  void operator()(const Vector<S>& z, Vector<S>& dz, const S&) const {
    dz.resize(2);
    dz[0] = eta * (z[1] + inv_T);
    dz[1] = coupling * z[0];
  }
};

TEST(LinearisedFlow, SolvesTheLinearOde) {
  const S eta("0.4"), coupling("0.15"), T(500);
  std::vector<S> times{S(0), S(3), S(10), S(25)};
  const auto solution = integrate_with_error(LinearFlow{eta, coupling, 1 / T}, Vector<S>(Vector<S>::Zero(2)), times, S("1e-35"));
  for (std::size_t i = 1; i < times.size(); ++i) {
    const LinearisedPoint<S> p = linearised_flow(times[i], eta, coupling, T);
    EXPECT_LT(to_double(abs(p.x - solution.states[i][0])), 1e-32);
    EXPECT_LT(to_double(abs(p.y - solution.states[i][1])), 1e-32);
  }
}

TEST(GrowthRate, IsTheSquareRootOfTheCoupling) {
  EXPECT_DOUBLE_EQ(growth_rate(0.5, 0.4, 0.2), std::sqrt(0.04));
  EXPECT_THROW(growth_rate(0.0, 0.4, 0.2), std::invalid_argument);
}

// The a-posteriori bound of linearisation_error_factor holds along exact 2-D trajectories
// (normalised and general rates), with the lower bound 0 <= x - alpha.
RC_GTEST_PROP(LinearisationErrorFactor, BoundsTheExactTrajectory, ()) {
  const S eta = S(*rc::gen::inRange(5, 61)) / 100;
  const S rho_bar = S(*rc::gen::inRange(10, 90)) / 100;
  const S eta_A_K_P = S(*rc::gen::inRange(5, 100)) / 100;
  const S T = S(*rc::gen::inRange(100, 100000));
  const long long steps = 60;
  const auto path = symmetric_2d_trajectory(Symmetric2D<S>{S(0), S(0)}, steps, eta, rho_bar, eta_A_K_P, T);
  std::vector<S> alpha, beta;
  for (const auto& p : path) {
    if (p.alpha > S("0.05")) break;  // the bound needs alpha, beta >= 0; stop well before the nonlinear phase
    alpha.push_back(p.alpha);
    beta.push_back(p.beta);
  }
  const std::vector<S> factor = linearisation_error_factor(alpha, beta, rho_bar, T);
  const S coupling = rho_bar * eta_A_K_P;
  for (std::size_t t = 1; t < alpha.size(); ++t) {
    const auto now = linearised_gd(static_cast<long long>(t), eta, coupling, T);
    const auto before = linearised_gd(static_cast<long long>(t) - 1, eta, coupling, T);
    const S dx = now.x - alpha[t], dy = now.y - rho_bar * beta[t];
    RC_ASSERT(dx >= S(-1e-45));
    RC_ASSERT(dy >= S(-1e-45));
    RC_ASSERT(dx <= factor[t] * (now.x - before.x) + S(1e-45));
    RC_ASSERT(dy <= factor[t] * (now.y - before.y) + S(1e-45));
  }
}

}  // namespace
}  // namespace dyncheck::theory::scb
