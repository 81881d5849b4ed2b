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
// Mutant: rate_s_not_2s, the logistic equation d(u²)/dt = u²(s − u²) (forgetting the chain-rule
// factor 2 of d(u²)/dt = 2u u̇).

#include <fmt/format.h>

#include <cmath>

#include "claims.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/sim/calib/factorisation_gradient_descent.hpp"
#include "dyncheck/theory/calib/balanced_factorisation.hpp"
#include "dyncheck/theory/numeric/ode.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"

namespace dyncheck::checks::calib {
namespace {

constexpr int compared_times = 8;
constexpr int plotted_times = 96;

class BalancedFactorisationFlow final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    using theory::mp100;
    using theory::mp50;
    const double s = context.params.get("s"), u0 = context.params.get("u0");
    const double eta = context.params.get("eta"), t_end = context.params.get("t_end");
    const double ode_tolerance = context.params.get("ode_tolerance");
    const double largest_eta = theory::calib::largest_resolved_step(s, u0);
    if (eta > largest_eta) {
      throw ParamError("eta", fmt::format("parameter 'eta' must be in (0, {:g}] for s = {:g}, u0 = {:g}: eta * "
                                          "max|f'| along the path must stay <= 0.2 for the Euler bound to resolve "
                                          "gradient descent",
                                          largest_eta, s, u0));
    }
    const long long last_step = std::llround(t_end / eta);
    const double time_scale = context.mutant_is("rate_s_not_2s") ? 0.5 : 1.0;

    // Closed form in two precisions (a mutant evaluates it at t/2: rate s instead of 2s).
    struct ClosedForm {
      mp100 value;
      double precision_error;  // |50-digit − 100-digit|
      double error_as_double;  // plus rounding the value to double
    };
    auto closed_form = [&](long long step) {
      const mp50 low = theory::calib::balanced_factor(mp50(s), mp50(u0), mp50(time_scale) * mp50(eta) * mp50(step));
      const mp100 high = theory::calib::balanced_factor(mp100(s), mp100(u0), mp100(time_scale) * mp100(eta) * mp100(step));
      const double precision_error = theory::to_double(abs(high - mp100(low.str(60, std::ios_base::scientific))));
      return ClosedForm{high, precision_error,
                        precision_error + theory::to_double(high) * std::numeric_limits<double>::epsilon() / 2};
    };

    // Experiment 1: the unreduced 2-D flow through the ODE integrator, in 50 digits.
    std::vector<long long> compared_steps;
    std::vector<mp50> times{mp50(0)};
    for (int c = 1; c <= compared_times; ++c) {
      compared_steps.push_back(last_step * c / compared_times);
      times.push_back(mp50(eta) * mp50(compared_steps.back()));
    }
    theory::Vector<mp50> x0(2);
    x0 << mp50(u0), mp50(u0);
    const auto ode = theory::integrate_with_error(theory::calib::FactorisationGradientFlow<mp50>{mp50(s)}, x0, times,
                                                  mp50(ode_tolerance));

    // Experiment 2: gradient descent in double.
    const auto iterates = sim::calib::factorisation_gradient_descent(s, u0, u0, eta, last_step);
    std::vector<double> u(iterates.size());
    for (std::size_t k = 0; k < iterates.size(); ++k) u[k] = iterates[k].first;
    const std::vector<double> euler_bound = theory::calib::euler_error_bound(u, s, eta);
    const std::vector<double> rounding_bound = theory::calib::euler_rounding_bound(u, s, eta);

    Verdict verdict;
    const double gd_resolution = context.params.get("resolution") * std::sqrt(s);
    for (int c = 0; c < compared_times; ++c) {
      const long long step = compared_steps[static_cast<std::size_t>(c)];
      const ClosedForm exact = closed_form(step);
      const double t = eta * static_cast<double>(step);
      const auto j = static_cast<std::size_t>(c + 1);
      const mp50 ode_minus_exact = ode.states[j][0] - mp50(exact.value.str(60, std::ios_base::scientific));
      verdict.comparisons.push_back(compare(
          fmt::format("u_ODE(t = {:.4g}) - u(t)", t), {0.0, exact.precision_error, "closed form: |50-digit - 100-digit| (the difference is formed in 50 digits)"},
          {theory::to_double(ode_minus_exact), 0.0, "deterministic", theory::to_double(ode.error_estimate[j]),
           ode.error_method},
          {0.0, "none: the ODE is the exact flow"},
          {1000 * ode_tolerance, "1000 x the requested ODE tolerance: a wider error estimate could not certify "
                                 "the integrator"}));
      const auto k = static_cast<std::size_t>(step);
      verdict.comparisons.push_back(compare(
          fmt::format("u_GD(t = {:.4g})", t), {theory::to_double(exact.value), exact.error_as_double, "closed form: |50-digit - 100-digit| + rounding to double"},
          {u[k], 0.0, "deterministic", rounding_bound[k],
           "propagated rounding of the double iterates (4 eps per step, amplified by max|1 + eta f'|)"},
          {euler_bound[k], "a-posteriori Euler bound: eps_{k+1} = eps_k max|1 + eta f'| + eta^2/2 max|f' f| on the "
                           "enclosure, f(u) = (s - u^2) u"},
          {gd_resolution, fmt::format("{} x sqrt(s): the mutant's rate error moves u(t) by far more over the "
                                      "transition",
                                      context.params.get("resolution"))}));
    }

    Plot plot{"trajectory", "Balanced factorisation: closed form, ODE solver and gradient descent", "t", "u(t)",
              false, false, {}};
    Curve exact_curve{"closed form u(t)", Curve::Style::line, {}, {}, {}, {}};
    Curve gd_curve{fmt::format("gradient descent, eta = {:g}, +- Euler bound", eta), Curve::Style::band, {}, {}, {}, {}};
    Curve ode_curve{"Bulirsch-Stoer ODE solution (50 digits)", Curve::Style::points, {}, {}, {}, {}};
    for (int p = 0; p <= plotted_times; ++p) {
      const long long step = last_step * p / plotted_times;
      const double t = eta * static_cast<double>(step);
      exact_curve.x.push_back(t);
      exact_curve.y.push_back(theory::to_double(closed_form(step).value));
      const auto k = static_cast<std::size_t>(step);
      gd_curve.x.push_back(t);
      gd_curve.y.push_back(u[k]);
      gd_curve.lower.push_back(u[k] - euler_bound[k]);
      gd_curve.upper.push_back(u[k] + euler_bound[k]);
    }
    for (std::size_t j = 1; j < ode.times.size(); ++j) {
      ode_curve.x.push_back(theory::to_double(ode.times[j]));
      ode_curve.y.push_back(theory::to_double(ode.states[j][0]));
    }
    plot.curves = {exact_curve, gd_curve, ode_curve};
    verdict.plots.push_back(std::move(plot));

    // The same comparisons on a log scale: each error against the bound or estimate that covers it.
    Plot errors{"errors", "Errors against their bounds", "t", "absolute error", false, true, {}};
    Curve gd_error{"|u_GD - u| (gradient descent)", Curve::Style::points, {}, {}, {}, {}};
    Curve gd_bound{"a-posteriori Euler bound", Curve::Style::line, {}, {}, {}, {}};
    Curve ode_error{"|u_ODE - u| (50-digit solver)", Curve::Style::points, {}, {}, {}, {}};
    Curve ode_estimate{"ODE error estimate", Curve::Style::line, {}, {}, {}, {}};
    constexpr double log_floor = 1e-300;  // an exact zero has no place on a log scale
    for (std::size_t c = 0; c < verdict.comparisons.size(); c += 2) {
      const Comparison& ode_comparison = verdict.comparisons[c];
      const Comparison& gd_comparison = verdict.comparisons[c + 1];
      const double t = eta * static_cast<double>(compared_steps[c / 2]);
      for (Curve* curve : {&gd_error, &gd_bound, &ode_error, &ode_estimate}) curve->x.push_back(t);
      gd_error.y.push_back(std::max(gd_comparison.discrepancy(), log_floor));
      gd_bound.y.push_back(gd_comparison.tolerance.total());
      ode_error.y.push_back(std::max(ode_comparison.discrepancy(), log_floor));
      ode_estimate.y.push_back(ode_comparison.tolerance.total());
    }
    errors.curves = {gd_error, gd_bound, ode_error, ode_estimate};
    verdict.plots.push_back(std::move(errors));
    verdict.notes.push_back(fmt::format(
        "ODE: {} at tolerance {:g}, {} steps; reference solve at {} ({} steps); largest error estimate {}.",
        ode.method, ode_tolerance, ode.steps, theory::to_string(ode.reference_tolerance, 3), ode.reference_steps,
        theory::to_string(ode.max_error_estimate, 3)));
    verdict.notes.push_back(
        "Gradient descent from u0 = v0 stays exactly balanced in floating point (both updates round the same "
        "numbers), so the 1-D bound on f(u) = (s - u^2) u applies to it.");
    return verdict;
  }

 private:
  ClaimInfo info_{
      .id = "calib.balanced_factorisation_flow",
      .family = "calib",
      .paper = "calibration (known answer)",
      .source = "issue #2 (c); logistic closed form of the balanced factorisation",
      .tag = Provenance::derived,
      .statement = "From a balanced start, gradient flow on (uv - s)^2/2 has u(t)^2 = s u0^2 e^{2st}/(s + u0^2(e^{2st} "
                   "- 1)); the 50-digit ODE solver reproduces it within its error estimate and gradient descent "
                   "within its Euler bound.",
      .latex = R"(u(t)^2 = \frac{s\,u_0^2 e^{2st}}{s + u_0^2(e^{2st}-1)})",
      .simulation = "Bulirsch-Stoer integration of the 2-D flow (u, v) in 50 digits; gradient descent in double.",
      .params =
          {
              {"s", 1, 0, 10, false, true, "target product"},
              {"u0", 0.1, 0, 10, false, true, "balanced initial factor u0 = v0"},
              {"eta", 0.01, 0, 0.1, false, true, "gradient-descent step; also eta * max(2s, |3 u0^2 - s|) <= 0.2"},
              {"t_end", 6, 0, 20, false, true, "last compared time"},
              {"ode_tolerance", 1e-30, 1e-45, 1e-6, false, false, "ODE solver tolerance (50-digit floor 1e-47)"},
              {"resolution", 0.02, 0, 1, false, true, "detectable gradient-descent discrepancy, as a fraction of sqrt(s)"},
          },
      .mutants = {{"rate_s_not_2s", "logistic rate s instead of 2s: d(u^2)/dt = u^2 (s - u^2)"}},
  };
};

}  // namespace

std::unique_ptr<Claim> make_balanced_factorisation_flow() { return std::make_unique<BalancedFactorisationFlow>(); }

}  // namespace dyncheck::checks::calib
