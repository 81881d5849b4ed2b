// Claim calib.balanced_factorisation_flow  [derived]  (calibration family, issue #2 (c))
//
// Gradient flow of ½(uv − s)² from a balanced start u_0 = v_0 > 0 stays balanced, and u² solves
// the logistic equation d(u²)/dt = 2u²(s − u²):
//   \f[ u(t)^2 = \frac{s\,u_0^2\,e^{2st}}{s + u_0^2(e^{2st} - 1)}. \f]
// Two experiments, both against this closed form (50 and 100 digits):
//  1. the 2-D flow (u, v), integrated by the Bulirsch–Stoer solver in 50 digits at tolerance τ;
//     tolerance = closed-form precision doubling + the solver's own error estimate (a second
//     solve at τ/1000; ladder rung 1, "estimated"). The difference is formed in 50 digits.
//  2. plain gradient descent in double with step η (deterministic: no statistical term);
//     bias = a-posteriori Euler bound ε_{k+1} = ε_k max|1 + ηf'| + η²/2 max|f'f| along the
//     iterates; numerical = the closed form's error + the propagated rounding of the iterates.
//     Where the bound's enclosure can no longer be proved (after a long unstable phase from u_0 ≪ √s the
//     enclosure grows until the cubic field outruns it: issue #10 fuzz seed 14006, s = 7.42, u_0 = 4.1e-4 was
//     an ERROR), the Euler bound is unbounded from that step on: those comparisons get a bias of
//     10 max(√s, u_0), above any resolution (|u_GD − u| cannot reach it while η is resolved: both stay in
//     (0, max(√s, u_0)]), and are INCONCLUSIVE with the reason.
// Mutants (edits of Settings::rate, the closed form evaluated at rate x t): rate_s_not_2s, the
// logistic equation d(u²)/dt = u²(s − u²) (forgetting the chain-rule factor 2 of d(u²)/dt = 2u u̇),
// and rate_1_percent (rate 1.01 x 2s), a small error. Resolution: the ODE comparison's tolerance is
// about 1e-27 at the defaults, so it tells apart any rate error that moves u(t) by more than that;
// the gradient-descent comparison resolves 2% of sqrt(s).
// Cost: deterministic; the step count t_end / eta is refused above what the budget affords.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "claims.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/sim/calib/factorisation_gradient_descent.hpp"
#include "dyncheck/theory/calib/balanced_factorisation.hpp"
#include "dyncheck/theory/numeric/ode.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"

namespace dyncheck::checks::calib {
namespace {

using theory::mp100;
using theory::mp50;

constexpr int compared_times = 8;
constexpr int plotted_times = 96;

struct Params : ParamSet {
  Real s{this, "s", 1, open_closed(0, 10), "target product", Scale::log};
  Real u0{this, "u0", 0.1, open_closed(0, 10), "balanced initial factor u0 = v0", Scale::log};
  Real eta{this, "eta", 0.01, open_closed(0, 0.1), "gradient-descent step; also eta * max(2s, |3 u0^2 - s|) <= 0.2",
           Scale::log};
  Real t_end{this, "t_end", 6, open_closed(0, 20), "last compared time", Scale::log};
  Real ode_tolerance{this, "ode_tolerance", 1e-30, closed(1e-44, 1e-6),
                     "ODE solver tolerance (50 digits: the solver accepts [5.3e-45, 1e-2])", Scale::log};
  Real resolution{this, "resolution", 0.02, open_closed(0, 1),
                  "detectable gradient-descent discrepancy, as a fraction of sqrt(s)", Scale::log};

  /// Gradient-descent steps to t_end, in double (refused long before a long long overflows).
  double steps() const { return std::round(t_end / eta); }

  void check(const Budget& budget) const override {
    const double largest_eta = theory::calib::largest_resolved_step(s, u0);
    if (eta > largest_eta) {
      throw ParamError("eta", fmt::format("parameter 'eta' must be in (0, {:g}] for s = {:g}, u0 = {:g}: eta * "
                                          "max|f'| along the path must stay <= 0.2 for the Euler bound to resolve "
                                          "gradient descent",
                                          largest_eta, s.value(), u0.value()));
    }
    if (steps() < compared_times) {
      throw ParamError("t_end", fmt::format("parameter 't_end' must be at least {} eta = {:g}, so that the {} compared "
                                            "times are distinct gradient-descent steps",
                                            compared_times, compared_times * eta, compared_times));
    }
    // Each step keeps three doubles (iterate, Euler and rounding bounds) and costs ~100 ns.
    const double limit = budget.pick(1e5, 2e6, 2e7);
    if (steps() > limit) {
      throw ParamError("eta", fmt::format("the {} budget affords at most {:g} gradient-descent steps, and t_end / eta "
                                          "= {:g}: raise eta or lower t_end",
                                          to_string(budget.level), limit, steps()));
    }
  }
};

/// The theory's knobs; the default is the claim's theory.
struct Settings {
  double rate = 1;  ///< the closed form evaluated at rate x t (rate 1: the logistic rate 2s)
};

struct Measured {
  std::vector<long long> compared_steps;
  theory::OdeSolution<mp50> ode;  ///< the 2-D flow at the compared times (states[0] = start)
  std::vector<double> u;          ///< gradient-descent iterates u_0 .. u_K
  std::vector<double> euler_bound, rounding_bound;
};

struct ClosedForm {
  mp100 value;
  double precision_error = 0;  ///< |50-digit - 100-digit|
  double error_as_double = 0;  ///< plus rounding the value to double
};

struct Predicted {
  std::vector<ClosedForm> compared;  ///< at the compared steps
  std::vector<double> plotted;       ///< at the plotted steps
};

long long plotted_step(const Measured& m, int index) {
  return static_cast<long long>(m.u.size() - 1) * index / plotted_times;
}

class BalancedFactorisationFlow final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  BalancedFactorisationFlow() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext&) const override {
    Measured m;
    const auto last_step = static_cast<long long>(std::round(p.t_end / p.eta));
    // Experiment 1: the unreduced 2-D flow through the ODE integrator, in 50 digits.
    std::vector<mp50> times{mp50(0)};
    for (int c = 1; c <= compared_times; ++c) {
      m.compared_steps.push_back(last_step * c / compared_times);
      times.push_back(mp50(p.eta.value()) * mp50(m.compared_steps.back()));
    }
    theory::Vector<mp50> x0(2);
    x0 << mp50(p.u0.value()), mp50(p.u0.value());
    m.ode = theory::integrate_with_error(theory::calib::FactorisationGradientFlow<mp50>{mp50(p.s.value())}, x0, times,
                                         mp50(p.ode_tolerance.value()));
    // Experiment 2: gradient descent in double.
    const auto iterates = sim::calib::factorisation_gradient_descent(p.s, p.u0, p.u0, p.eta, last_step);
    m.u.resize(iterates.size());
    for (std::size_t k = 0; k < iterates.size(); ++k) m.u[k] = iterates[k].first;
    m.euler_bound = theory::calib::euler_error_bound(m.u, p.s, p.eta);
    m.rounding_bound = theory::calib::euler_rounding_bound(m.u, p.s, p.eta);
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& settings, const RunContext&) const override {
    // The closed form in two precisions at time rate x eta x step.
    auto closed_form = [&](long long step) {
      const mp50 low = theory::calib::balanced_factor(mp50(p.s.value()), mp50(p.u0.value()),
                                                      mp50(settings.rate) * mp50(p.eta.value()) * mp50(step));
      const mp100 high = theory::calib::balanced_factor(mp100(p.s.value()), mp100(p.u0.value()),
                                                        mp100(settings.rate) * mp100(p.eta.value()) * mp100(step));
      const double precision_error = theory::to_double(abs(high - mp100(low.str(60, std::ios_base::scientific))));
      return ClosedForm{high, precision_error,
                        precision_error + theory::to_double(high) * std::numeric_limits<double>::epsilon() / 2};
    };
    Predicted predicted;
    for (const long long step : m.compared_steps) predicted.compared.push_back(closed_form(step));
    for (int i = 0; i <= plotted_times; ++i) {
      predicted.plotted.push_back(theory::to_double(closed_form(plotted_step(m, i)).value));
    }
    return predicted;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    Verdict verdict;
    const double gd_resolution = p.resolution * std::sqrt(p.s.value());
    for (int c = 0; c < compared_times; ++c) {
      const long long step = m.compared_steps[static_cast<std::size_t>(c)];
      const ClosedForm& exact = t.compared[static_cast<std::size_t>(c)];
      const double time = p.eta * static_cast<double>(step);
      const auto j = static_cast<std::size_t>(c + 1);
      const mp50 ode_minus_exact = m.ode.states[j][0] - mp50(exact.value.str(60, std::ios_base::scientific));
      verdict.comparisons.push_back(checks::compare(
          fmt::format("u_ODE(t = {:.4g}) - u(t)", time),
          {0.0, exact.precision_error, "closed form: |50-digit - 100-digit| (the difference is formed in 50 digits)"},
          Measurement{theory::to_double(ode_minus_exact), 0.0, "deterministic",
                      theory::to_double(m.ode.error_estimate[j]), m.ode.error_method},
          {0.0, "none: the ODE is the exact flow"},
          {1000 * p.ode_tolerance, "1000 x the requested ODE tolerance: a wider error estimate could not certify "
                                   "the integrator"}));
      const auto k = static_cast<std::size_t>(step);
      const bool bounded = std::isfinite(m.euler_bound[k]);
      const Bias euler =
          bounded ? Bias{m.euler_bound[k], "a-posteriori Euler bound: eps_{k+1} = eps_k max|1 + eta f'| + eta^2/2 "
                                           "max|f' f| on the enclosure, f(u) = (s - u^2) u"}
                  : Bias{10 * std::max(std::sqrt(p.s.value()), p.u0.value()),
                         "no bound: the Euler bound's enclosure could not be proved at an earlier step (the field "
                         "outruns it); 10 max(sqrt(s), u0), above any resolution"};
      verdict.comparisons.push_back(checks::compare(
          fmt::format("u_GD(t = {:.4g})", time),
          {theory::to_double(exact.value), exact.error_as_double,
           "closed form: |50-digit - 100-digit| + rounding to double"},
          Measurement{m.u[k], 0.0, "deterministic", m.rounding_bound[k],
                      "propagated rounding of the double iterates (4 eps per step, amplified by max|1 + eta f'|)"},
          euler,
          {gd_resolution, fmt::format("{} x sqrt(s): the mutants' rate errors move u(t) by far more over the "
                                      "transition",
                                      p.resolution.value())}));
    }

    Plot plot{"trajectory", "Balanced factorisation: closed form, ODE solver and gradient descent", "t", "u(t)",
              false, false, {}};
    Curve exact_curve = Curve::line("closed form u(t)");
    Curve gd_curve = Curve::band(fmt::format("gradient descent, eta = {:g}, +- Euler bound", p.eta.value()));
    Curve ode_curve = Curve::points("Bulirsch-Stoer ODE solution (50 digits)");
    for (int i = 0; i <= plotted_times; ++i) {
      const long long step = plotted_step(m, i);
      const double time = p.eta * static_cast<double>(step);
      const auto k = static_cast<std::size_t>(step);
      exact_curve.add(time, t.plotted[static_cast<std::size_t>(i)]);
      if (std::isfinite(m.euler_bound[k])) gd_curve.add_mean(time, m.u[k], m.euler_bound[k]);
    }
    for (std::size_t j = 1; j < m.ode.times.size(); ++j) {
      ode_curve.add(theory::to_double(m.ode.times[j]), theory::to_double(m.ode.states[j][0]));
    }
    plot.add(std::move(exact_curve)).add(std::move(gd_curve)).add(std::move(ode_curve));
    verdict.plots.push_back(std::move(plot));

    // The same comparisons on a log scale: each error against the bound or estimate that covers it.
    Plot errors{"errors", "Errors against their bounds", "t", "absolute error", false, true, {}};
    Curve gd_error = Curve::points("|u_GD - u| (gradient descent)");
    Curve gd_bound = Curve::line("a-posteriori Euler bound");
    Curve ode_error = Curve::points("|u_ODE - u| (50-digit solver)");
    Curve ode_estimate = Curve::line("ODE error estimate");
    constexpr double log_floor = 1e-300;  // an exact zero has no place on a log scale
    for (std::size_t c = 0; c < verdict.comparisons.size(); c += 2) {
      const Comparison& ode_comparison = verdict.comparisons[c];
      const Comparison& gd_comparison = verdict.comparisons[c + 1];
      const double time = p.eta * static_cast<double>(m.compared_steps[c / 2]);
      if (std::isfinite(m.euler_bound[static_cast<std::size_t>(m.compared_steps[c / 2])])) {  // no line where unbounded
        gd_error.add(time, std::max(gd_comparison.discrepancy(), log_floor));
        gd_bound.add(time, gd_comparison.tolerance.total());
      }
      ode_error.add(time, std::max(ode_comparison.discrepancy(), log_floor));
      ode_estimate.add(time, ode_comparison.tolerance.total());
    }
    errors.add(std::move(gd_error)).add(std::move(gd_bound)).add(std::move(ode_error)).add(std::move(ode_estimate));
    verdict.plots.push_back(std::move(errors));
    verdict.notes.push_back(fmt::format(
        "ODE: {} at tolerance {:g}, {} steps; reference solve at {} ({} steps); largest error estimate {}.",
        m.ode.method, p.ode_tolerance.value(), m.ode.steps, theory::to_string(m.ode.reference_tolerance, 3),
        m.ode.reference_steps, theory::to_string(m.ode.max_error_estimate, 3)));
    verdict.notes.push_back(
        "Gradient descent from u0 = v0 stays exactly balanced in floating point (both updates round the same "
        "numbers), so the 1-D bound on f(u) = (s - u^2) u applies to it.");
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "calib.balanced_factorisation_flow",
        .family = "calib",
        .paper = "calibration (known answer)",
        .source = "issue #2 (c); logistic closed form of the balanced factorisation",
        .tag = Provenance::derived,
        .statement = "From a balanced start, gradient flow on (uv - s)^2/2 has u(t)^2 = s u0^2 e^{2st}/(s + "
                     "u0^2(e^{2st} - 1)); the 50-digit ODE solver reproduces it within its error estimate and "
                     "gradient descent within its Euler bound.",
        .latex = R"(u(t)^2 = \frac{s\,u_0^2 e^{2st}}{s + u_0^2(e^{2st}-1)})",
        .simulation = "Bulirsch-Stoer integration of the 2-D flow (u, v) in 50 digits; gradient descent in double.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"rate_s_not_2s", "logistic rate s instead of 2s: d(u^2)/dt = u^2 (s - u^2)",
         [](Settings& s) { s.rate = 0.5; }},
        {"rate_1_percent", "logistic rate 1.01 x 2s", [](Settings& s) { s.rate = 1.01; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_balanced_factorisation_flow() { return std::make_unique<BalancedFactorisationFlow>(); }

}  // namespace dyncheck::checks::calib
