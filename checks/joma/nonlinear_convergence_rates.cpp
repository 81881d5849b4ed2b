// Claim joma.nonlinear_convergence_rates  [derived]  (specs/joma.md §4 Th4 "Derived version", §7 claim 6)
//
// Exp attention, uniform x, v(0) = 0: the components of v̇ = (μ − v)∘e^{v²/2} decouple, and
//   \f[ \tfrac{d}{dt}\ln\delta_j \to -e^{\mu_j^2/2},\qquad
//       t_j(\varepsilon) = \int_0^{1-\varepsilon}\frac{e^{-\mu_j^2s^2/2}}{1-s}\,ds \ \text{(strictly decreasing in }|\mu_j|), \f]
// so salient components (large μ) converge first (Th4 [paper]: speed ∝ e^{μ²/2}).
// Measured: the ODE by theory::joma::solve_nonlinear_flow (chained Bulirsch–Stoer segments, 50 digits, tol
// 1e-18 at ci, error from a 1000x tighter chain) per component, μ_j uniform in [mu_min, mu_max], sorted;
// it is evaluated at t_j(ε) of the true theory (the placement does not depend on the mutant) and at a late
// window [t(1e-7), t(1e-7) + 2e^{−μ²/2}].
// Predicted: t_j(ε) by tanh-sinh in 50 and 100 digits; the late rate theory::joma::late_time_rate(μ_j).
// Compared per component: (a) the time at which the ODE's δ_j reaches εμ_j (from δ_j(t_j) through
// d ln δ/dt = −e^{v²/2}) against t_j(ε) (rel 1e-8); (b) the ODE's decay rate of ln δ_j over the late window
// against e^{μ_j²/2} (rel 1e-3), bias ≤ μ_j δ_j(t_1) relative since e^{(μ−δ)²/2} = e^{μ²/2}e^{−μδ+δ²/2};
// (c) the ODE's times to εμ_j decrease strictly with μ_j; (d) the asymptotic form
// t(ε) = e^{−μ²/2} ln(1/ε) + C(μ) + o(1) at ε = 1e-7, C by theory::joma::time_to_precision_offset,
// o(1) ≤ εμ²e^{−μ²/2}e^{μ²ε}, charged twice.
// Mutants: exp_mu_squared (rate e^{μ²} and time integrand e^{−μ²s²}/(1−s)); rate_2_percent (the late rate
// 2% too large). Resolution: (b) resolves a relative error of 1e-3 in the rate (its tolerance is below
// 1e-6 of it at ci), (a) a relative 1e-8 in t_j(ε).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "claims.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/reference_value.hpp"
#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/theory/joma/nonlinear_flow.hpp"
#include "dyncheck/theory/joma/nonlinear_flow_solution.hpp"

namespace dyncheck::checks::joma {
namespace {

using theory::mp50;

constexpr double late_eps = 1e-7;

struct Params : ParamSet {
  Real epsilon{this, "epsilon", 1e-6, closed(1e-12, 1e-2), "relative precision for t_j(eps)", Scale::log};
  Real mu_min{this, "mu_min", 0.2, closed(0.2, 3), "smallest mu_j drawn (spec §7 claim 6: mu in [0.2, 3])"};
  Real mu_max{this, "mu_max", 3, closed(0.2, 3), "largest mu_j drawn; above mu_min"};

  void check(const Budget&) const override {
    if (!(mu_max > mu_min)) {
      throw ParamError("mu_max", fmt::format("mu_max must exceed mu_min (got mu_min = {}, mu_max = {})",
                                             mu_min.value(), mu_max.value()));
    }
  }
};

/// The theory's knobs; the default is the claim's theory.
struct Settings {
  double mu_squared_coefficient = 0.5;  ///< e^{c μ²} in the rate and e^{−c μ² s²} in the time integrand
  double rate_factor = 1;               ///< the late rate times this
};

struct Component {
  double mu = 0, t_q = 0, t1 = 0, t2 = 0;
  mp50 delta_q, delta_1, delta_2;
  double error_q = 0, error_1 = 0, error_2 = 0;
  std::vector<double> plot_t, plot_log_delta;
};

struct Measured {
  std::vector<Component> components;
  mp50 ode_tolerance;
};

struct Predicted {
  std::vector<ReferenceVector> t_eps;  ///< per component
  std::vector<double> rate;            ///< per component
  std::vector<double> offset, offset_error, log_coefficient;  ///< C(μ), its quadrature error, e^{−μ²/2} (per component)
};

/// The time integrand e^{−c μ² s²} equals e^{−μ'² s²/2} with μ' = √(2c) μ.
double effective_mu(double mu, const Settings& s) { return std::sqrt(2 * s.mu_squared_coefficient) * mu; }

class NonlinearConvergenceRates final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  NonlinearConvergenceRates() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const std::size_t count = context.budget.pick<std::size_t>(1, 5, 10);
    // δ ≈ 1e-7 μ at the late window and ε μ at t_j(ε): an absolute ODE error τ gives relative errors
    // τ/δ, far below the 1e-8 and 1e-3 the comparisons resolve at ci (1e-18) and full (1e-24).
    Measured m;
    m.ode_tolerance = context.budget.pick(mp50("1e-14"), mp50("1e-18"), mp50("1e-24"));
    sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/mu", 0);
    std::vector<double> mu(count);
    for (double& value : mu) value = p.mu_min + (p.mu_max - p.mu_min) * sim::uniform01(rng);
    std::sort(mu.begin(), mu.end());
    for (const double value : mu) {
      Component c;
      c.mu = value;
      // Placed by the true theory, so that the measurement is the same for every mutant.
      c.t_q = theory::to_double(theory::joma::time_to_relative_precision(mp50(value), mp50(p.epsilon.value())).value);
      c.t1 = theory::to_double(theory::joma::time_to_relative_precision(mp50(value), mp50(late_eps)).value);
      c.t2 = c.t1 + 2 / theory::to_double(theory::joma::late_time_rate(mp50(value)));
      std::vector<mp50> times{mp50(0)};
      std::vector<double> ordered{c.t_q, c.t1, c.t2};
      for (int i = 1; i <= 20; ++i) ordered.push_back(c.t2 * i / 20.0);
      std::sort(ordered.begin(), ordered.end());
      for (const double t : ordered) {
        if (mp50(t) > times.back()) times.push_back(mp50(t));
      }
      theory::Vector<mp50> mu_vector(1), v0 = theory::Vector<mp50>::Zero(1);
      mu_vector[0] = mp50(value);
      const theory::joma::NonlinearFlowSolution<mp50> ode =
          theory::joma::solve_nonlinear_flow(mu_vector, v0, times, m.ode_tolerance, mp50("0.25"), mp50(2));
      auto at = [&](double t, mp50& delta, double& error) {
        const auto it = std::find(times.begin(), times.end(), mp50(t));
        const auto i = static_cast<std::size_t>(it - times.begin());
        delta = mp50(value) - ode.states[i][0];
        error = theory::to_double(ode.error_estimate[i]);
      };
      at(c.t_q, c.delta_q, c.error_q);
      at(c.t1, c.delta_1, c.error_1);
      at(c.t2, c.delta_2, c.error_2);
      for (std::size_t i = 1; i < times.size(); ++i) {
        c.plot_t.push_back(theory::to_double(times[i]));
        c.plot_log_delta.push_back(theory::to_double(log((mp50(value) - ode.states[i][0]) / mp50(value))));
      }
      m.components.push_back(std::move(c));
    }
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted predicted;
    for (const Component& c : m.components) {
      const double effective = effective_mu(c.mu, s);
      predicted.t_eps.push_back(reference_vector([&]<class S>() {
        theory::Vector<S> out(1);
        out[0] = theory::joma::time_to_relative_precision(S(effective), S(p.epsilon.value())).value;
        return out;
      }));
      predicted.rate.push_back(s.rate_factor * theory::to_double(theory::joma::late_time_rate(mp50(effective))));
      const auto offset = theory::joma::time_to_precision_offset(mp50(effective));
      predicted.offset.push_back(theory::to_double(offset.value));
      predicted.offset_error.push_back(theory::to_double(offset.error) + 1e-16 * std::abs(predicted.offset.back()));
      predicted.log_coefficient.push_back(portable::exp(-effective * effective / 2));
    }
    return predicted;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    Verdict verdict;
    const double epsilon = p.epsilon;
    Plot plot{"log_delta", "ln(delta_j / mu_j) along the ODE; late slopes against -e^{mu_j^2/2}", "t",
              "ln(delta_j / mu_j)", false, false, {}};
    std::vector<double> ode_times;
    for (std::size_t j = 0; j < m.components.size(); ++j) {
      const Component& c = m.components[j];
      // (a) time to relative precision: convert the ODE's δ at t_q into the time at which δ = εμ,
      // using d ln δ/dt = −e^{v²/2} (v ≈ μ(1 − ε) there).
      const double rate_q = portable::exp(c.mu * c.mu * (1 - epsilon) * (1 - epsilon) / 2);
      const double time_shift = theory::to_double(log(c.delta_q / (mp50(epsilon) * mp50(c.mu)))) / rate_q;
      const double delta_q = theory::to_double(c.delta_q);
      const double t_ode = c.t_q + time_shift;
      ode_times.push_back(t_ode);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("t_ODE(delta = eps mu) against t_j(eps), eps = {:g}, mu_j = {:.4f}", epsilon, c.mu),
          {t.t_eps[j].value[0], t.t_eps[j].error[0], std::string(ReferenceVector::reason) + " (of t_j(eps))"},
          measured_exactly(t_ode, c.error_q / (delta_q * rate_q) + 2e-16 * c.t_q,
                           "ODE error estimate / (delta rate) (converted to time), plus rounding t_j to double"),
          {std::abs(time_shift) * epsilon * c.mu * c.mu,
           "linearisation of ln delta over the shift: relative O(mu^2 eps) of the shift"},
          {1e-8 * c.t_q, "spec §7 claim 6: relative 1e-8"}));
      // (b) late-time rate.
      const double measured_rate = theory::to_double(log(c.delta_1 / c.delta_2)) / (c.t2 - c.t1);
      const double d1 = theory::to_double(c.delta_1), d2 = theory::to_double(c.delta_2);
      const double true_rate = portable::exp(c.mu * c.mu / 2);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("late decay rate of ln delta_j for mu_j = {:.4f}", c.mu),
          {t.rate[j], 0.0, "closed form late_time_rate(mu) = e^{mu^2/2}"},
          measured_exactly(measured_rate, (c.error_1 / d1 + c.error_2 / d2) / (c.t2 - c.t1),
                           "relative ODE errors of delta at both ends / window length"),
          {true_rate * c.mu * d1,
           "e^{(mu-delta)^2/2} = e^{mu^2/2}(1 - O(mu delta)): relative bias <= mu delta(t_1)"},
          {1e-3 * true_rate, "spec §7 claim 6: relative 1e-3"}));
      // (d) the asymptotic offset: t(ε) = e^{−μ²/2} ln(1/ε) + C(μ) − ∫_{1−ε}^1 g, at ε = 1e-7 (the late window's
      // start t_1), with the ODE's time there from δ_j(t_1) as in (a).
      {
        const double rate_1 = portable::exp(c.mu * c.mu * (1 - late_eps) * (1 - late_eps) / 2);
        const double shift_1 = theory::to_double(log(c.delta_1 / (mp50(late_eps) * mp50(c.mu)))) / rate_1;
        const double asymptotic = t.log_coefficient[j] * portable::log(1 / late_eps) + t.offset[j];
        verdict.comparisons.push_back(checks::compare(
            fmt::format("t_ODE(delta = 1e-7 mu) against e^(-mu^2/2) ln(1e7) + C(mu), mu_j = {:.4f}", c.mu),
            {asymptotic, t.offset_error[j] + 4e-16 * asymptotic,
             "tanh-sinh quadrature of C(mu) = int_0^1 g (its error estimate), plus rounding to double"},
            measured_exactly(c.t1 + shift_1, c.error_1 / (d1 * rate_1) + 2e-16 * c.t1,
                             "ODE error estimate / (delta rate), plus rounding t_1 to double"),
            {2 * late_eps * c.mu * c.mu * portable::exp(-c.mu * c.mu / 2) + std::abs(shift_1) * late_eps * c.mu * c.mu,
             "the o(1) rest int_{1-eps}^1 g <= eps mu^2 e^{-mu^2/2} e^{mu^2 eps} (expm1(x) <= x e^x), doubled; plus "
             "the shift's linearisation as in (a)"},
            {1e-6 * c.t1, "relative 1e-6 of the time"}));
      }
      Curve curve = Curve::line(fmt::format("mu = {:.3f}", c.mu));
      for (std::size_t i = 0; i < c.plot_t.size(); ++i) curve.add(c.plot_t[i], c.plot_log_delta[i]);
      plot.add(std::move(curve));
    }
    if (ode_times.size() > 1) {
      double smallest_gap = std::numeric_limits<double>::infinity();
      double gap_error = 0;
      for (std::size_t j = 0; j + 1 < ode_times.size(); ++j) {
        if (ode_times[j] - ode_times[j + 1] < smallest_gap) {
          smallest_gap = ode_times[j] - ode_times[j + 1];
          gap_error = 1e-8 * (ode_times[j] + ode_times[j + 1]);
        }
      }
      verdict.comparisons.push_back(checks::compare(
          "min_j t_ODE,j - t_ODE,j+1 over mu sorted ascending (must be > 0)", {0.0, 0.0, "strict monotonicity"},
          measured_exactly(smallest_gap, gap_error, "the two ODE times, each good to 1e-8 relative (comparison (a))"),
          {0.0, "none"}, {std::max(gap_error, 1e-6), "an inequality; resolves an inversion beyond the ODE times' error"},
          Relation::at_least));
    }
    verdict.plots.push_back(std::move(plot));
    std::string mus;
    for (const Component& c : m.components) mus += fmt::format("{:.4f} ", c.mu);
    verdict.notes.push_back("mu = " + mus +
                            fmt::format("(uniform on [{}, {}], sorted); v(0) = 0; ODE in 50 digits, tolerance {}.",
                                        p.mu_min.value(), p.mu_max.value(),
                                        m.ode_tolerance.str(3, std::ios_base::scientific)));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "joma.nonlinear_convergence_rates",
        .family = "joma",
        .paper = "Tian et al., JoMA (ICLR 2024)",
        .source = "specs/joma.md §4 (Theorem 4, derived version), §7 claim 6",
        .tag = Provenance::derived,
        .statement = "In the nonlinear JoMA dynamics v' = (mu - v) o exp(v^2/2) each component converges at the "
                     "late rate exp(mu_j^2/2), reaches relative precision eps at the quadrature time t_j(eps), and "
                     "salient components (larger mu) converge first (Theorem 4 [paper], constants [derived]).",
        .latex = R"(\tfrac{d}{dt}\ln\delta_j\to-e^{\mu_j^2/2},\quad t_j(\varepsilon)=\int_0^{1-\varepsilon}\frac{e^{-\mu_j^2s^2/2}}{1-s}ds)",
        .simulation = "The ODE integrated per component by Bulirsch-Stoer in 50 digits (theory::integrate_with_error); "
                      "mu drawn uniformly in [mu_min, mu_max].",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"exp_mu_squared", "rate e^{mu^2} and time integrand e^{-mu^2 s^2}/(1-s) instead of mu^2/2",
         [](Settings& s) { s.mu_squared_coefficient = 1; }},
        {"rate_2_percent", "late rate 1.02 e^{mu^2/2} (small error in one coefficient)",
         [](Settings& s) { s.rate_factor = 1.02; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_nonlinear_convergence_rates() { return std::make_unique<NonlinearConvergenceRates>(); }

}  // namespace dyncheck::checks::joma
