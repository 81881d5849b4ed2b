// dyncheck/theory/joma/nonlinear_flow_solution.hpp
//
// The nonlinear JoMA ODE v' = (mu - v) ∘ e^{v^2/2} (specs/joma.md §4) solved at output times by
// theory::integrate_with_error in short segments, with an error estimate for the chained solve.
#pragma once

#include <dyncheck/theory/joma/nonlinear_flow.hpp>
#include <dyncheck/theory/numeric/ode.hpp>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace dyncheck::theory::joma {

template <class S>
struct NonlinearFlowSolution {
  std::vector<S> times;
  std::vector<Vector<S>> states;
  std::vector<S> error_estimate;  ///< per output time
};

namespace detail {
template <class S>
NonlinearFlowSolution<S> chained_solve(const Vector<S>& mu, const Vector<S>& v0, const std::vector<S>& times,
                                       const S& tolerance, const S& segment, const S& growth) {
  NonlinearFlowSolution<S> out{times, {v0}, {S(0)}};
  Vector<S> state = v0;
  S t = times.front(), carried = 0, length = segment;
  std::size_t next = 1;
  while (next < times.size()) {
    using std::min;
    const S end = min(t + length, times.back());
    length *= growth;
    std::vector<S> local{t};
    while (next < times.size() && times[next] <= end) local.push_back(times[next++]);
    if (local.back() < end) local.push_back(end);
    const OdeSolution<S> piece = integrate_with_error(NonlinearJomaFlow<S>{mu}, state, local, tolerance);
    for (std::size_t i = 1; i < local.size(); ++i) {
      if (out.states.size() < next && local[i] == times[out.states.size()]) {
        out.states.push_back(piece.states[i]);
        out.error_estimate.push_back(carried + piece.error_estimate[i]);
      }
    }
    carried += piece.error_estimate.back();
    state = piece.states.back();
    t = end;
  }
  return out;
}
}  // namespace detail

/// \f$v(t_i)\f$ of \f$\dot v = (\mu - v)\circ e^{v^{\circ 2}/2}\f$, \f$v(t_0) = v_0\f$.
///
/// Why segments: integrate_with_error starts with a step of a sixteenth of its interval and rejects any
/// non-finite trial state; over long intervals the first Bulirsch–Stoer trial of this super-exponential
/// right-hand side overflows. Segments of length `segment` (default 1/4), each `growth` times longer than
/// the one before (default 1), keep every trial step small where the state still moves fast.
/// Error estimate (numerics.md §3, rung 1): the chain is solved twice, at τ and at τ/1000 (each segment
/// itself already compares two solves); the tighter chain is returned and charged
/// \f$|x^{\tau}-x^{\tau/1000}|_\infty\f$ plus the sum of its segments' own estimates up to \f$t_i\f$.
/// Throws what integrate_with_error throws, and std::invalid_argument for bad times or segment.
template <class S>
NonlinearFlowSolution<S> solve_nonlinear_flow(const Vector<S>& mu, const Vector<S>& v0, const std::vector<S>& times,
                                              const S& tolerance, const S& segment = S(1) / S(4),
                                              const S& growth = S(1)) {
  if (times.size() < 1 || !(segment > S(0)) || !(growth >= S(1)) || mu.size() != v0.size()) {
    throw std::invalid_argument(
        "solve_nonlinear_flow: needs output times, segment > 0, growth >= 1 and mu, v0 of equal size");
  }
  for (std::size_t i = 1; i < times.size(); ++i) {
    if (!(times[i] > times[i - 1])) throw std::invalid_argument("solve_nonlinear_flow: times must increase strictly");
  }
  const NonlinearFlowSolution<S> loose = detail::chained_solve(mu, v0, times, tolerance, segment, growth);
  NonlinearFlowSolution<S> tight = detail::chained_solve(mu, v0, times, tolerance / S(1000), segment, growth);
  for (std::size_t i = 0; i < times.size(); ++i) {
    tight.error_estimate[i] += (loose.states[i] - tight.states[i]).cwiseAbs().maxCoeff();
  }
  return tight;
}

}  // namespace dyncheck::theory::joma
