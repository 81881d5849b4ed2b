// dyncheck/theory/numeric/ode.hpp
//
// Solutions of initial value problems x' = f(x, t), x(t_0) = x_0, at chosen output times, in any
// scalar type, with a numerical error estimate obtained from a second, tighter solve
// (rung 1 of the error-bound ladder of numerics.md §3).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/numeric/odeint_eigen_algebra.hpp>
#include <dyncheck/theory/numeric/scalar.hpp>

#include <boost/numeric/odeint/util/odeint_error.hpp>
#include <boost/numeric/odeint/stepper/bulirsch_stoer_dense_out.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace dyncheck::theory {

/// A right-hand side \f$f\f$ of \f$x' = f(x, t)\f$ in ODEint's calling convention:
/// `system(x, dxdt, t)` writes \f$f(x, t)\f$ into `dxdt`, which arrives with the size of `x`.
template <class System, class S>
concept ode_system = std::invocable<System&, const Vector<S>&, Vector<S>&, const S&>;

/// The solution of an initial value problem at the requested output times, with its error estimate.
template <class S>
struct OdeSolution {
  std::vector<S> times;                   ///< the requested output times; times[0] = t_0
  std::vector<Vector<S>> states;          ///< x(times[i]) from the solve at `reference_tolerance`; states[0] = x_0
  std::vector<S> error_estimate;          ///< per output time, see `error_method`; error_estimate[0] = 0
  std::vector<S> reference_difference;    ///< per output time: max_j |x_tol,j - x_ref,j| alone
  S max_error_estimate = S(0);            ///< max of error_estimate
  S tolerance = S(0);                     ///< as requested: of the looser of the two solves
  S reference_tolerance = S(0);           ///< of the tighter (reference) solve, which gives `states`
  std::size_t steps = 0;                  ///< accepted steps of the solve at `tolerance`
  std::size_t reference_steps = 0;        ///< accepted steps of the solve at `reference_tolerance`
  std::size_t rhs_evaluations = 0;        ///< calls of the right-hand side by the solve at `tolerance`
  std::size_t reference_rhs_evaluations = 0;
  std::string method;                     ///< the stepper, "bulirsch_stoer_dense_out"
  std::string error_method;               ///< a sentence: how error_estimate was obtained
};

/// Limits of one solve.
struct OdeOptions {
  /// Accepted steps allowed per solve (the main and the reference solve each). Bulirsch–Stoer
  /// needs about 60 steps for x'' = -x on [0, 1] at 1e-40 (numerics.md §2b); far more means a
  /// stiff or singular problem, or a tolerance beyond the method's capped order (see
  /// integrate_with_error), and 10^4 steps of a small system already take seconds in 50 digits.
  std::size_t max_steps = 10'000;
};

/// Thrown when the right-hand side or the state becomes infinite or NaN. The message names the time
/// and the component; so do time() (rounded to double) and component().
class ode_non_finite_error : public std::runtime_error {
 public:
  ode_non_finite_error(const std::string& message, double time, std::size_t component)
      : std::runtime_error(message), time_(time), component_(component) {}
  double time() const noexcept { return time_; }
  std::size_t component() const noexcept { return component_; }

 private:
  double time_;
  std::size_t component_;
};

/// Thrown when a solve exceeds OdeOptions::max_steps, or when the stepper fails to find an
/// acceptable step size 500 times in a row. The message names the time reached.
class ode_step_limit_error : public std::runtime_error {
 public:
  ode_step_limit_error(const std::string& message, double time) : std::runtime_error(message), time_(time) {}
  double time() const noexcept { return time_; }

 private:
  double time_;
};

namespace detail {

template <class S>
struct dense_solve_result {
  std::vector<Vector<S>> states;
  std::vector<std::size_t> rhs_evaluations_before;  // evaluations of f made before each output
  std::size_t steps = 0;
  std::size_t rhs_evaluations = 0;
};

template <class S>
std::string ode_time_string(const S& t) {
  return to_string(to_double(t), 17);
}

// Index of the first non-finite coefficient of v, or v.size() if there is none.
template <class S>
Eigen::Index first_non_finite(const Vector<S>& v) {
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (!is_finite(v(i))) return i;
  }
  return v.size();
}

// One Bulirsch–Stoer solve with dense output, evaluated at every output time.
//
// Why Bulirsch–Stoer: at tolerance 1e-40 in 50 digits it took 60 steps where rkf78 took 19 092 and
// the 5th-order steppers did not finish (numerics.md §2b). Dense output gives the state at each
// requested time from the polynomial of the step that covers it, so output times do not cut steps.
//
// Error control, per step and per component i: the extrapolation error estimate err_i satisfies
//   |err_i| <= tol * (1 + |x_i|)
// (ODEint's default_error_checker with eps_abs = eps_rel = tol, a_x = 1, a_dxdt = 0): relative for
// |x_i| >> 1, absolute for |x_i| << 1. With control_interpolation the highest coefficient of the
// dense-output polynomial must also stay below 10 tol (1 + |x_i|), so interpolated values are held
// to about the same accuracy as the step ends; without it they are not controlled at all.
template <class S, class System>
dense_solve_result<S> solve_bulirsch_stoer_dense(System& system, const Vector<S>& x0, const std::vector<S>& times,
                                                 const S& tolerance, const OdeOptions& options) {
  using stepper_type = boost::numeric::odeint::bulirsch_stoer_dense_out<Vector<S>, S, Vector<S>, S, odeint_eigen_algebra>;

  dense_solve_result<S> result;
  const std::string solve_name = "integrate_with_error (Bulirsch-Stoer at tolerance " + to_string(to_double(tolerance), 3) + ")";

  const S& t_first = times.front();
  const S& t_last = times.back();
  std::size_t* evaluations = &result.rhs_evaluations;
  auto checked_system = [&system, evaluations, &solve_name, &t_last](const Vector<S>& x, Vector<S>& dxdt,
                                                                      const S& stepper_time) {
    ++*evaluations;
    // The modified-midpoint substeps accumulate t += h, so the last evaluation of a step that ends
    // at t_last can land a few ulps past it; the right-hand side may be undefined there (a model
    // valid only on the interval), and moving the time argument by ulps changes nothing else.
    const S& t = stepper_time > t_last ? t_last : stepper_time;
    system(x, dxdt, t);
    if (dxdt.size() != x.size()) {
      throw std::invalid_argument(solve_name + ": the right-hand side resized dxdt from " + std::to_string(x.size()) +
                                  " to " + std::to_string(dxdt.size()) + " at t = " + ode_time_string(t));
    }
    // Checked at every evaluation, rejected trial points included: a NaN makes every error
    // comparison of the step-size controller false, so it would otherwise be accepted or retried
    // 500 times before anyone learnt where it came from.
    const Eigen::Index bad = first_non_finite(dxdt);
    if (bad < dxdt.size()) {
      throw ode_non_finite_error(solve_name + ": the right-hand side returned dx[" + std::to_string(bad) + "]/dt = " +
                                     to_string(to_double(dxdt(bad)), 6) + " at t = " + ode_time_string(t) + " (x[" +
                                     std::to_string(bad) + "] = " + to_string(to_double(x(bad)), 17) + ")",
                                 to_double(t), static_cast<std::size_t>(bad));
    }
  };

  const std::size_t n = times.size();
  result.states.reserve(n);
  result.states.push_back(x0);
  result.rhs_evaluations_before.push_back(0);
  if (n == 1) return result;

  using std::abs;
  using std::max;
  // ODEint accumulates t += dt, so a step aimed at t_last can end an ulp or two short of it;
  // output times that close to the current time are taken from the current step (an extrapolation
  // by a few ulps of the dense-output polynomial) instead of forcing a step of length 1e-50.
  const S time_slack = S(8) * std::numeric_limits<S>::epsilon() * max(abs(t_first), abs(t_last));

  // Initial step: a sixteenth of the interval; the controller rejects and shrinks it if needed,
  // and with m_first set ODEint's Bulirsch–Stoer accepts convergence at any order in that step.
  stepper_type stepper(tolerance, tolerance, S(1), S(0), S(0), true);
  stepper.initialize(x0, t_first, (t_last - t_first) / S(16));

  Vector<S> x(x0.size());
  std::size_t next = 1;
  while (next < n) {
    if (result.steps >= options.max_steps) {
      throw ode_step_limit_error(solve_name + ": " + std::to_string(options.max_steps) + " steps reached at t = " +
                                     ode_time_string(stepper.current_time()) + " of [" + ode_time_string(t_first) +
                                     ", " + ode_time_string(t_last) +
                                     "] (OdeOptions::max_steps; Bulirsch-Stoer's order is capped near 16, so its "
                                     "steps grow like tolerance^(-1/14))",
                                 to_double(stepper.current_time()));
    }
    // Never step past t_last: the right-hand side may be undefined beyond the last output time
    // (a blow-up just after it, a model valid only on the interval). Re-initialising resets the
    // stepper's first-step logic only; the state carries over.
    const S remaining = t_last - stepper.current_time();
    if (stepper.current_time_step() > remaining) {
      const Vector<S> current = stepper.current_state();
      stepper.initialize(current, stepper.current_time(), remaining);
    }
    try {
      stepper.do_step(checked_system);
    } catch (const boost::numeric::odeint::step_adjustment_error& e) {
      throw ode_step_limit_error(solve_name + ": no acceptable step size found at t = " +
                                     ode_time_string(stepper.current_time()) + " (" + e.what() + ")",
                                 to_double(stepper.current_time()));
    }
    ++result.steps;
    const Eigen::Index bad = first_non_finite(stepper.current_state());
    if (bad < x0.size()) {
      throw ode_non_finite_error(solve_name + ": state component x[" + std::to_string(bad) +
                                     "] is non-finite at t = " + ode_time_string(stepper.current_time()),
                                 to_double(stepper.current_time()), static_cast<std::size_t>(bad));
    }
    while (next < n && times[next] <= stepper.current_time() + time_slack) {
      stepper.calc_state(times[next], x);
      const Eigen::Index bad_output = first_non_finite(x);
      if (bad_output < x.size()) {
        throw ode_non_finite_error(solve_name + ": interpolated state component x[" + std::to_string(bad_output) +
                                       "] is non-finite at output time t = " + ode_time_string(times[next]),
                                   to_double(times[next]), static_cast<std::size_t>(bad_output));
      }
      result.states.push_back(x);
      result.rhs_evaluations_before.push_back(result.rhs_evaluations);
      ++next;
    }
  }
  return result;
}

}  // namespace detail

/// The solution of \f$x'(t) = f(x(t), t)\f$, \f$x(t_0) = x_0\f$ at output times
/// \f$t_0 < t_1 < \dots < t_m\f$, with an estimate of its numerical error:
/// \f[ \hat e_i = d_i + \bigl(\tau' + N'_i\,\varepsilon_S\bigr)\bigl(1 + \max_j |x^{\tau'}_j(t_i)|\bigr),
///     \qquad d_i = \max_j \bigl|x^{\tau}_j(t_i) - x^{\tau'}_j(t_i)\bigr|,
///     \qquad \tau' = \tau/1000, \qquad \hat e_0 = 0, \f]
/// where \f$x^{\tau'}\f$ is the Bulirsch–Stoer solution at the tighter tolerance \f$\tau'\f$
/// (returned in `states`), \f$x^{\tau}\f$ a second one at \f$\tau\f$, and \f$N'_i\f$ the number
/// of evaluations of \f$f\f$ the \f$\tau'\f$ solve made before \f$t_i\f$.
///
/// Why the tighter solution is returned and the difference charged to it: with errors
/// \f$e = x^\tau - x\f$ and \f$e' = x^{\tau'} - x\f$, \f$d \ge |e'|\f$ holds unless \f$e\f$ and
/// \f$e'\f$ have the same sign and \f$|e| < 2|e'|\f$, i.e. unless a 1000x tighter tolerance failed
/// to halve the error. Charging \f$d\f$ to \f$x^{\tau}\f$ instead needs \f$|e'| \ll |e|\f$, and
/// Bulirsch–Stoer does not deliver that reliably: in a sweep of 9 000 double checks the plain
/// difference (even extrapolated as \f$d/(1-\tau'/\tau)\f$) fell short of the error of
/// \f$x^\tau\f$ in 25, by up to 30% (at \f$\tau = 10^{-10}\f$ the errors were 5.3e-12 and
/// about 3e-13, a ratio of 17, not 1000); the same sweep charging \f$d\f$ to \f$x^{\tau'}\f$ had
/// none. The estimate is therefore pessimistic by about \f$|e|/|e'|\f$, typically 10-1000.
/// The second term covers what \f$d\f$ cannot see: where the error of \f$x^{\tau}\f$ crosses zero,
/// \f$d\f$ equals \f$|e'|\f$ and the bound is an equality, so the reference is allowed its
/// tolerance; and round-off, allowed as one unit of relative round-off per evaluation of \f$f\f$
/// (linear, worst-case-style accumulation), since the round-off of two solves does not cancel in
/// \f$d\f$: in 50 digits at \f$\tau = 10^{-45}\f$ (x'' = -x on [0, 1]; now below the valid range)
/// the error of \f$x^\tau\f$ was 7.1e-48 against \f$d = 3.7\cdot 10^{-48}\f$.
/// This remains an asymptotic estimate (numerics.md §3, rung 1), not a rigorous bound: it can fail
/// for stiff problems or tolerances far outside the asymptotic regime.
///
/// Tolerance semantics: in a solve at tolerance \f$\tau\f$, per step and per component, the local
/// error estimate satisfies \f$|err_i| \le \tau(1 + |x_i|)\f$ (absolute for small components,
/// relative for large ones); the global error is typically below \f$\tau\f$ but can exceed it on
/// long or unstable intervals, which is what the comparison of two solves is for.
///
/// Cost: ODEint's Bulirsch–Stoer extrapolates at most to k_max = 8, so its order is capped near 16
/// and the steps grow like \f$\tau^{-1/14}\f$. Measured for x'' = -x on [0, 1] (-O2, both solves):
/// 60 + 99 steps at 1e-40 (0.07 s in mp50), 319 + 547 at 1e-50 (0.6 s in mp100), 1 850 + 3 139 at
/// 1e-60 (3.3 s), 10 811 + 18 381 at 1e-70 (19 s). Below about 1e-60 prefer a closed form.
///
/// \param system callable as `system(x, dxdt, t)` (ode_system); copied, called from this thread only.
/// \param x0 initial state, non-empty and finite.
/// \param times output times, finite and strictly increasing; times[0] is the initial time.
///   Integration runs forward only and never evaluates \f$f\f$ at a time beyond times.back().
/// \param tolerance \f$\tau \in [10^4\,\tau_{\min}(S),\ 10^{-2}]\f$ with \f$\tau_{\min} = 100\,\varepsilon_S\f$
///   (tolerance_floor): double [2.2e-10, 1e-2], mp50 [5.3e-45, 1e-2], mp100 [5.7e-95, 1e-2].
///   The lower end keeps the tighter solve at \f$\tau' = \tau/1000 \ge 10\,\tau_{\min} = 1000\,\varepsilon_S\f$.
///   Measured why: at \f$\tau' \approx \tau_{\min}\f$ Bulirsch–Stoer's own error control is
///   fooled by round-off in double (\f$\tau' = 2.3\cdot 10^{-14}\f$ gave an error of 8e-13, where
///   \f$3\cdot 10^{-14}\f$ gave 1.3e-14) and the estimate was exceeded by 1.9x once in 9 000 checks;
///   with the lower end as it is, no check failed in 21 000 (double, worst error/estimate 0.59) and
///   3 600 (mp50, 0.24) on random damped rotations and logistic equations. Above \f$10^{-2}\f$ the
///   difference of two solves says little about either.
/// \param options step limit per solve.
/// \throws std::invalid_argument for arguments outside these ranges, or if `system` resizes dxdt.
/// \throws ode_non_finite_error (a std::runtime_error) if \f$f\f$ or the state becomes non-finite;
///   the message names the time and the component.
/// \throws ode_step_limit_error (a std::runtime_error) if a solve exceeds options.max_steps or no
///   step size is acceptable; the message names the time reached.
template <class S, class System>
  requires real_scalar<S> && ode_system<System, S>
OdeSolution<S> integrate_with_error(System system, const Vector<S>& x0, const std::vector<S>& times,
                                    const std::type_identity_t<S>& tolerance, const OdeOptions& options = {}) {
  const S floor = tolerance_floor<S>();
  const S lowest_tolerance = S(10000) * floor;
  const S highest_tolerance = S(1) / S(100);
  if (!is_finite(tolerance) || tolerance < lowest_tolerance || tolerance > highest_tolerance) {
    throw std::invalid_argument(
        "integrate_with_error: tolerance " + to_string(to_double(tolerance), 3) + " is outside the valid range [" +
        to_string(lowest_tolerance, 3) + ", " + to_string(to_double(highest_tolerance), 3) +
        "] for this scalar type (" + std::to_string(std::numeric_limits<S>::digits10) +
        " digits): the lower end is 1e4 x tolerance_floor = 1e6 eps, so that the reference solve at "
        "tolerance / 1000 stays at 10 x tolerance_floor or above");
  }
  if (times.empty()) {
    throw std::invalid_argument("integrate_with_error: times is empty; times[0] must be the initial time");
  }
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (!is_finite(times[i])) {
      throw std::invalid_argument("integrate_with_error: times[" + std::to_string(i) + "] is not finite");
    }
    if (i > 0 && !(times[i - 1] < times[i])) {
      throw std::invalid_argument("integrate_with_error: times must be strictly increasing, but times[" +
                                  std::to_string(i - 1) + "] = " + detail::ode_time_string(times[i - 1]) +
                                  " >= times[" + std::to_string(i) + "] = " + detail::ode_time_string(times[i]));
    }
  }
  if (x0.size() == 0) {
    throw std::invalid_argument("integrate_with_error: the initial state x0 has size 0");
  }
  if (const Eigen::Index bad = detail::first_non_finite(x0); bad < x0.size()) {
    throw std::invalid_argument("integrate_with_error: initial state component x0[" + std::to_string(bad) +
                                "] is not finite");
  }

  using std::max;
  const S reference_tolerance = tolerance / S(1000);

  auto main_solve = detail::solve_bulirsch_stoer_dense(system, x0, times, S(tolerance), options);
  auto reference_solve = detail::solve_bulirsch_stoer_dense(system, x0, times, reference_tolerance, options);

  OdeSolution<S> solution;
  solution.times = times;
  solution.tolerance = tolerance;
  solution.reference_tolerance = reference_tolerance;
  solution.steps = main_solve.steps;
  solution.reference_steps = reference_solve.steps;
  solution.rhs_evaluations = main_solve.rhs_evaluations;
  solution.reference_rhs_evaluations = reference_solve.rhs_evaluations;
  solution.method = "bulirsch_stoer_dense_out";
  solution.error_method =
      "states are from a Bulirsch-Stoer solve at tolerance " + to_string(to_double(reference_tolerance), 3) +
      "; their error is estimated, at each output time, by the max-norm difference to a second solve at "
      "tolerance " + to_string(to_double(tolerance), 3) +
      " (valid unless the tighter tolerance failed to halve the error), plus (" +
      to_string(to_double(reference_tolerance), 3) +
      " + eps per right-hand-side evaluation so far) x (1 + max-norm of the state) for the tighter solve's "
      "own truncation error where the difference vanishes, and its round-off; the initial state is exact. "
      "Both solves hold the local error per step and component to tolerance x (1 + |x_i|) in " +
      std::to_string(std::numeric_limits<S>::digits10) +
      "-digit arithmetic. An asymptotic estimate (error-bound ladder rung 1), not a rigorous bound.";
  solution.error_estimate.reserve(times.size());
  solution.reference_difference.reserve(times.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    const S difference = (main_solve.states[i] - reference_solve.states[i]).cwiseAbs().maxCoeff();
    const S reference_error_allowance =
        (reference_tolerance + S(reference_solve.rhs_evaluations_before[i]) * std::numeric_limits<S>::epsilon()) *
        (S(1) + reference_solve.states[i].cwiseAbs().maxCoeff());
    const S estimate = i == 0 ? S(0) : difference + reference_error_allowance;
    solution.reference_difference.push_back(difference);
    solution.error_estimate.push_back(estimate);
    solution.max_error_estimate = max(solution.max_error_estimate, estimate);
  }
  solution.states = std::move(reference_solve.states);
  return solution;
}

}  // namespace dyncheck::theory
