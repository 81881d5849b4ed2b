// Tests for dyncheck/theory/numeric/ode.hpp
#include <dyncheck/theory/numeric/ode.hpp>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace dyncheck::theory {
namespace {

// x'' = -x as (x, v)' = (v, -x); from (1, 0): x = cos t, v = -sin t.
struct HarmonicOscillator {
  template <class S>
  void operator()(const Vector<S>& x, Vector<S>& dxdt, const S& /*t*/) const {
    dxdt(0) = x(1);
    dxdt(1) = -x(0);
  }
};

// x' = r x (1 - x / K): x(t) = K x0 e^{rt} / (K + x0 (e^{rt} - 1)).
template <class S>
struct Logistic {
  S r, K;
  void operator()(const Vector<S>& x, Vector<S>& dxdt, const S& /*t*/) const { dxdt(0) = r * x(0) * (S(1) - x(0) / K); }
  S exact(const S& x0, const S& t) const {
    const S growth = exp(r * t);
    return K * x0 * growth / (K + x0 * (growth - S(1)));
  }
};

// A damped rotation x' = (-lambda I + omega J) x, J = [[0, -1], [1, 0]]:
// x(t) = e^{-lambda t} R(omega t) x0.
template <class S>
struct DampedRotation {
  S lambda, omega;
  void operator()(const Vector<S>& x, Vector<S>& dxdt, const S& /*t*/) const {
    dxdt(0) = -lambda * x(0) - omega * x(1);
    dxdt(1) = omega * x(0) - lambda * x(1);
  }
  Vector<S> exact(const Vector<S>& x0, const S& t) const {
    const S decay = exp(-lambda * t), c = cos(omega * t), s = sin(omega * t);
    Vector<S> x(2);
    x << decay * (c * x0(0) - s * x0(1)), decay * (s * x0(0) + c * x0(1));
    return x;
  }
};

template <class S>
std::vector<S> uniform_times(const S& t_end, int intervals) {
  std::vector<S> times;
  for (int i = 0; i <= intervals; ++i) times.push_back(t_end * S(i) / S(intervals));
  return times;
}

template <class S>
Vector<S> vector_of(std::initializer_list<S> values) {
  Vector<S> v(static_cast<Eigen::Index>(values.size()));
  Eigen::Index i = 0;
  for (const S& value : values) v(i++) = value;
  return v;
}

template <class S>
S harmonic_oscillator_error(const OdeSolution<S>& solution, std::size_t i) {
  using std::abs;
  using std::cos;
  using std::max;
  using std::sin;
  const S& t = solution.times[i];
  return max(abs(solution.states[i](0) - cos(t)), abs(solution.states[i](1) + sin(t)));
}

TEST(IntegrateWithError, HarmonicOscillatorReaches1em40InMp50) {
  const auto solution =
      integrate_with_error(HarmonicOscillator{}, vector_of<mp50>({1, 0}), uniform_times(mp50(1), 4), mp50("1e-40"));
  ASSERT_EQ(solution.states.size(), 5u);
  EXPECT_EQ(solution.states[0], vector_of<mp50>({1, 0}));
  EXPECT_EQ(solution.error_estimate[0], mp50(0));
  mp50 worst_error = 0;
  for (std::size_t i = 0; i < solution.times.size(); ++i) {
    const mp50 error = harmonic_oscillator_error(solution, i);
    worst_error = std::max(worst_error, error);
    EXPECT_LE(error, solution.error_estimate[i]) << "t = " << solution.times[i];
  }
  EXPECT_LT(worst_error, mp50("1e-40"));
  EXPECT_LT(solution.max_error_estimate, mp50("1e-40"));
  EXPECT_EQ(solution.reference_tolerance, mp50("1e-43"));
  EXPECT_EQ(solution.method, "bulirsch_stoer_dense_out");
  EXPECT_NE(solution.error_method.find("1.00e-43"), std::string::npos) << solution.error_method;
  EXPECT_LT(solution.steps, 200u);
  std::cout << "[ measured ] mp50 x''=-x on [0,1], tol 1e-40: " << solution.steps << " + " << solution.reference_steps
            << " steps (" << solution.rhs_evaluations << " + " << solution.reference_rhs_evaluations
            << " f-calls), error of the returned (1e-43) states " << to_string(worst_error, 2) << ", estimate "
            << to_string(solution.max_error_estimate, 2) << "\n";
}

// ODEint's Bulirsch-Stoer caps its order near 16, so 1e-80 would take ~1e5 steps (a step-limit
// error); 1e-50 takes about 320.
TEST(IntegrateWithError, HarmonicOscillatorReaches1em50InMp100) {
  const auto solution =
      integrate_with_error(HarmonicOscillator{}, vector_of<mp100>({1, 0}), uniform_times(mp100(1), 2), mp100("1e-50"));
  mp100 worst_error = 0;
  for (std::size_t i = 0; i < solution.times.size(); ++i) {
    const mp100 error = harmonic_oscillator_error(solution, i);
    worst_error = std::max(worst_error, error);
    EXPECT_LE(error, solution.error_estimate[i]);
  }
  EXPECT_LT(worst_error, mp100("1e-50"));
  std::cout << "[ measured ] mp100 x''=-x on [0,1], tol 1e-50: " << solution.steps << " steps, true error "
            << to_string(worst_error, 2) << ", estimate " << to_string(solution.max_error_estimate, 2) << "\n";
}

TEST(IntegrateWithError, HarmonicOscillatorInDouble) {
  const auto solution = integrate_with_error(HarmonicOscillator{}, vector_of<double>({1, 0}), uniform_times(1.0, 4), 1e-9);
  for (std::size_t i = 0; i < solution.times.size(); ++i) {
    const double error = harmonic_oscillator_error(solution, i);
    EXPECT_LE(error, solution.error_estimate[i]);
    EXPECT_LT(error, 1e-9);
  }
}

// At the lowest tolerance allowed, 1e6 eps, round-off is no longer negligible against the
// difference of the two solves: measured error 1.0e-47 against a difference of 2.9e-48, so the
// estimate holds only through its round-off allowance (3.0e-46 in all).
TEST(IntegrateWithError, EstimateBoundsTheErrorAtTheLowestToleranceInMp50) {
  const mp50 lowest = mp50(10000) * tolerance_floor<mp50>();
  const auto solution =
      integrate_with_error(HarmonicOscillator{}, vector_of<mp50>({1, 0}), uniform_times(mp50(1), 1), lowest);
  const mp50 error = harmonic_oscillator_error(solution, 1);
  EXPECT_LE(error, solution.error_estimate[1]);
  EXPECT_LT(solution.error_estimate[1], lowest);
  std::cout << "[ measured ] mp50 x''=-x on [0,1], tol " << to_string(lowest, 3) << ": " << solution.steps
            << " + " << solution.reference_steps << " steps, true error "
            << to_string(error, 2) << ", difference to reference " << to_string(solution.reference_difference[1], 2)
            << ", estimate " << to_string(solution.error_estimate[1], 2) << "\n";
}

TEST(IntegrateWithError, LogisticMatchesClosedFormInMp50) {
  const Logistic<mp50> logistic{mp50(2), mp50(3)};
  const mp50 x0 = mp50(1) / 10;
  const auto solution = integrate_with_error(logistic, vector_of<mp50>({x0}), uniform_times(mp50(6), 12), mp50("1e-30"));
  mp50 worst_error = 0;
  for (std::size_t i = 0; i < solution.times.size(); ++i) {
    const mp50 error = abs(solution.states[i](0) - logistic.exact(x0, solution.times[i]));
    worst_error = std::max(worst_error, error);
    EXPECT_LE(error, solution.error_estimate[i]) << "t = " << solution.times[i];
  }
  EXPECT_LT(worst_error, mp50("1e-30"));
  std::cout << "[ measured ] mp50 logistic r=2 K=3 on [0,6], tol 1e-30: " << solution.steps << " steps, true error "
            << to_string(worst_error, 2) << ", estimate " << to_string(solution.max_error_estimate, 2) << "\n";
}

TEST(IntegrateWithError, OutputTimesAreExactAndTheRightHandSideIsNeverCalledPastTheLast) {
  // Output times that are not multiples of any step, and a right-hand side that records how far it was asked.
  const std::vector<mp50> times{mp50(0), mp50(1) / 3, mp50(2) / 7, mp50(1), mp50(11) / 7};
  std::vector<mp50> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  mp50 latest = -1;
  auto recording = [&latest](const Vector<mp50>& x, Vector<mp50>& dxdt, const mp50& t) {
    latest = std::max(latest, t);
    HarmonicOscillator{}(x, dxdt, t);
  };
  const auto solution = integrate_with_error(recording, vector_of<mp50>({1, 0}), sorted, mp50("1e-35"));
  EXPECT_EQ(solution.times, sorted);
  EXPECT_LE(latest, sorted.back());
  for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_LT(harmonic_oscillator_error(solution, i), mp50("1e-35"));
}

TEST(IntegrateWithError, SingleOutputTimeReturnsTheInitialState) {
  const auto solution = integrate_with_error(HarmonicOscillator{}, vector_of<mp50>({1, 2}), {mp50(3)}, mp50("1e-20"));
  ASSERT_EQ(solution.states.size(), 1u);
  EXPECT_EQ(solution.states[0], vector_of<mp50>({1, 2}));
  EXPECT_EQ(solution.steps, 0u);
  EXPECT_EQ(solution.max_error_estimate, mp50(0));
}

// --- refusals ---

template <class S>
std::string invalid_argument_message(const S& tolerance) {
  try {
    integrate_with_error(HarmonicOscillator{}, vector_of<S>({1, 0}), uniform_times(S(1), 1), tolerance);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(IntegrateWithError, RefusesToleranceBelowTheFloorNamingTheValidRange) {
  const std::string message = invalid_argument_message(tolerance_floor<mp50>() / 2);
  EXPECT_NE(message.find("tolerance"), std::string::npos) << message;
  EXPECT_NE(message.find("valid range [" + to_string(mp50(10000) * tolerance_floor<mp50>(), 3)), std::string::npos) << message;
  EXPECT_NE(invalid_argument_message(1e-16).find("tolerance"), std::string::npos);
  EXPECT_NE(invalid_argument_message(mp100("1e-120")).find("tolerance"), std::string::npos);
}

// The reference solve runs at tolerance / 1000 and must stay at 10 x the floor or above.
TEST(IntegrateWithError, RefusesToleranceWhoseReferenceWouldComeWithinTenTimesTheFloor) {
  EXPECT_NE(invalid_argument_message(mp50(9000) * tolerance_floor<mp50>()), "");
  EXPECT_NE(invalid_argument_message(9000 * tolerance_floor<double>()), "");
  EXPECT_EQ(invalid_argument_message(10000 * tolerance_floor<double>()), "");
}

TEST(IntegrateWithError, RefusesToleranceAboveOnePercentAndNonFiniteTolerance) {
  EXPECT_NE(invalid_argument_message(0.1), "");
  EXPECT_NE(invalid_argument_message(std::numeric_limits<double>::quiet_NaN()), "");
}

TEST(IntegrateWithError, RefusesEmptyOrUnsortedTimesAndEmptyState) {
  const Vector<mp50> x0 = vector_of<mp50>({1, 0});
  const mp50 tol("1e-20");
  EXPECT_THROW(integrate_with_error(HarmonicOscillator{}, x0, {}, tol), std::invalid_argument);
  EXPECT_THROW(integrate_with_error(HarmonicOscillator{}, x0, {mp50(0), mp50(2), mp50(1)}, tol), std::invalid_argument);
  EXPECT_THROW(integrate_with_error(HarmonicOscillator{}, x0, {mp50(0), mp50(1), mp50(1)}, tol), std::invalid_argument);
  EXPECT_THROW(integrate_with_error(HarmonicOscillator{}, Vector<mp50>(0), {mp50(0), mp50(1)}, tol), std::invalid_argument);
  Vector<mp50> with_nan = x0;
  with_nan(1) = std::numeric_limits<mp50>::quiet_NaN();
  EXPECT_THROW(integrate_with_error(HarmonicOscillator{}, with_nan, {mp50(0), mp50(1)}, tol), std::invalid_argument);
}

TEST(IntegrateWithError, NanRightHandSideThrowsNamingTimeAndComponent) {
  auto nan_after_half = [](const Vector<mp50>& x, Vector<mp50>& dxdt, const mp50& t) {
    HarmonicOscillator{}(x, dxdt, t);
    if (t > mp50(1) / 2) dxdt(1) = std::numeric_limits<mp50>::quiet_NaN();
  };
  try {
    integrate_with_error(nan_after_half, vector_of<mp50>({1, 0}), uniform_times(mp50(1), 4), mp50("1e-30"));
    FAIL() << "no exception";
  } catch (const ode_non_finite_error& e) {
    const std::string message = e.what();
    EXPECT_GT(e.time(), 0.5);
    EXPECT_LE(e.time(), 1.0);
    EXPECT_EQ(e.component(), 1u);
    EXPECT_NE(message.find("at t = " + to_string(e.time(), 17)), std::string::npos) << message;
    EXPECT_NE(message.find("dx[1]/dt = nan"), std::string::npos) << message;
  }
  // ode_non_finite_error is a std::runtime_error.
  EXPECT_THROW(integrate_with_error(nan_after_half, vector_of<mp50>({1, 0}), uniform_times(mp50(1), 1), mp50("1e-30")),
               std::runtime_error);
}

TEST(IntegrateWithError, StepCapThrowsNamingTheTimeReached) {
  try {
    integrate_with_error(HarmonicOscillator{}, vector_of<mp50>({1, 0}), uniform_times(mp50(100), 1), mp50("1e-30"),
                         OdeOptions{.max_steps = 5});
    FAIL() << "no exception";
  } catch (const ode_step_limit_error& e) {
    const std::string message = e.what();
    EXPECT_GT(e.time(), 0.0);
    EXPECT_LT(e.time(), 100.0);
    EXPECT_NE(message.find("5 steps reached at t = " + to_string(e.time(), 17)), std::string::npos) << message;
  }
}

TEST(IntegrateWithError, RightHandSideThatResizesDxdtIsRefused) {
  auto resizing = [](const Vector<mp50>&, Vector<mp50>& dxdt, const mp50&) { dxdt = Vector<mp50>::Zero(3); };
  EXPECT_THROW(integrate_with_error(resizing, vector_of<mp50>({1, 0}), {mp50(0), mp50(1)}, mp50("1e-20")),
               std::invalid_argument);
}

// --- the error estimate bounds the true error ---

// A real in [lo, hi] on a grid of `steps` points (numerics.md §2c: no gen::inRange for reals).
rc::Gen<mp50> grid_real(const mp50& lo, const mp50& hi, std::int64_t steps) {
  return rc::gen::map(rc::gen::inRange<std::int64_t>(0, steps + 1),
                      [lo, hi, steps](std::int64_t k) { return lo + (hi - lo) * mp50(k) / mp50(steps); });
}

// A tolerance 10^-k, k in [8, 38]: the upper half of mp50's range down to 1e-38 (floor 5e-49).
rc::Gen<mp50> tolerance_power_of_ten() {
  return rc::gen::map(rc::gen::inRange(8, 39), [](int k) { return pow(mp50(10), -k); });
}

// The closed forms below are themselves evaluated in mp50, to within a few eps (their round-off,
// allowed for as 16 eps (1 + |x|)); the solver's estimate has to cover the rest.
template <class Exact>
void assert_estimate_bounds_error(const OdeSolution<mp50>& solution, Exact exact) {
  for (std::size_t i = 0; i < solution.times.size(); ++i) {
    const Vector<mp50> truth = exact(solution.times[i]);
    const mp50 scale = mp50(1) + truth.cwiseAbs().maxCoeff();
    const mp50 error = (solution.states[i] - truth).cwiseAbs().maxCoeff();
    RC_ASSERT(error <= solution.error_estimate[i] + mp50(16) * std::numeric_limits<mp50>::epsilon() * scale);
    // ... and is not vacuous: within 100 tolerances of the solution's scale.
    RC_ASSERT(solution.error_estimate[i] <= mp50(100) * solution.tolerance * scale);
  }
}

RC_GTEST_PROP(IntegrateWithError, EstimateBoundsTheTrueErrorOfADampedRotation, ()) {
  const DampedRotation<mp50> system{*grid_real(mp50(0), mp50(2), 200), *grid_real(mp50(1) / 2, mp50(6), 110)};
  Vector<mp50> x0(2);
  x0 << *grid_real(mp50(-2), mp50(2), 400), *grid_real(mp50(-2), mp50(2), 400);
  const mp50 t_end = *grid_real(mp50(1) / 4, mp50(3), 11);
  const int intervals = *rc::gen::inRange(1, 6);
  const mp50 tolerance = *tolerance_power_of_ten();
  const auto solution = integrate_with_error(system, x0, uniform_times(t_end, intervals), tolerance);
  assert_estimate_bounds_error(solution, [&](const mp50& t) { return system.exact(x0, t); });
}

RC_GTEST_PROP(IntegrateWithError, EstimateBoundsTheTrueErrorOfTheLogisticEquation, ()) {
  const Logistic<mp50> system{*grid_real(mp50(-2), mp50(3), 500), *grid_real(mp50(1) / 2, mp50(4), 35)};
  // Below K when r < 0: from above K the solution would blow up within the interval.
  const mp50 x0 = system.K * (system.r < 0 ? *grid_real(mp50(1) / 100, mp50(99) / 100, 98)
                                           : *grid_real(mp50(1) / 100, mp50(19) / 10, 189));
  const mp50 t_end = *grid_real(mp50(1) / 4, mp50(4), 15);
  const int intervals = *rc::gen::inRange(1, 6);
  const mp50 tolerance = *tolerance_power_of_ten();
  const auto solution = integrate_with_error(system, vector_of<mp50>({x0}), uniform_times(t_end, intervals), tolerance);
  assert_estimate_bounds_error(solution, [&](const mp50& t) { return vector_of<mp50>({system.exact(x0, t)}); });
}

// The same in double, over the whole valid tolerance range [2.2e-10, 1e-2].
RC_GTEST_PROP(IntegrateWithError, EstimateBoundsTheTrueErrorOfADampedRotationInDouble, ()) {
  const auto real = [](double lo, double hi, int steps) {
    return lo + (hi - lo) * static_cast<double>(*rc::gen::inRange(0, steps + 1)) / steps;
  };
  const DampedRotation<double> system{real(0, 2, 200), real(0.5, 6, 110)};
  Vector<double> x0(2);
  x0 << real(-2, 2, 400), real(-2, 2, 400);
  const double t_end = real(0.25, 3, 11);
  const double tolerance = std::max(std::pow(10.0, -real(2, 10, 16)), 10000 * tolerance_floor<double>());
  const auto solution = integrate_with_error(system, x0, uniform_times(t_end, *rc::gen::inRange(1, 6)), tolerance);
  for (std::size_t i = 0; i < solution.times.size(); ++i) {
    // Evaluated in 50 digits so that the truth carries no double round-off.
    Vector<mp50> truth = DampedRotation<mp50>{mp50(system.lambda), mp50(system.omega)}.exact(x0.cast<mp50>(), mp50(solution.times[i]));
    const double error = to_double((solution.states[i].cast<mp50>() - truth).cwiseAbs().maxCoeff());
    RC_ASSERT(error <= solution.error_estimate[i]);
  }
}

}  // namespace
}  // namespace dyncheck::theory
