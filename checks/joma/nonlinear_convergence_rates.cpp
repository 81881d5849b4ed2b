// Claim joma.nonlinear_convergence_rates  [derived]  (specs/joma.md §4 Th4 "Derived version", §7 claim 6)
//
// Exp attention, uniform x, v(0) = 0: the components of v̇ = (μ − v)∘e^{v²/2} decouple, and
//   \f[ \tfrac{d}{dt}\ln\delta_j \to -e^{\mu_j^2/2},\qquad
//       t_j(\varepsilon) = \int_0^{1-\varepsilon}\frac{e^{-\mu_j^2s^2/2}}{1-s}\,ds \ \text{(strictly decreasing in }|\mu_j|), \f]
// so salient components (large μ) converge first (Th4 [paper]: speed ∝ e^{μ²/2}).
// Computed: the ODE by theory::joma::solve_nonlinear_flow (chained Bulirsch–Stoer segments, 50 digits, tol
// 1e-18 at ci, segments doubling from 1/4, error from a 1000x tighter chain) per component; t_j(ε) by tanh-sinh in 50 and 100 digits.
// Compared per component: (a) the ODE's δ_j(t_j(ε)) converted to a time, against t_j(ε) (rel 1e-8);
// (b) the ODE's decay rate of ln δ_j over [t(1e-7), t(1e-7) + 2e^{−μ²/2}] against e^{μ_j²/2} (rel 1e-3),
// bias ≤ μ_j δ_j(t_1) relative since e^{(μ−δ)²/2} = e^{μ²/2}e^{−μδ+δ²/2}; (c) monotonicity in μ.
// Mutant exp_mu_squared: rate e^{μ²} and time integrand e^{−μ²s²}/(1−s).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "claims.hpp"
#include "dyncheck/checks/reference_value.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/theory/joma/nonlinear_flow.hpp"
#include "dyncheck/theory/joma/nonlinear_flow_solution.hpp"

namespace dyncheck::checks::joma {
namespace {

using theory::mp50;

class NonlinearConvergenceRates final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    const std::size_t components = context.budget.pick<std::size_t>(1, 5, 10);
    // δ ≈ 1e-7 μ at the late window and ε μ at t_j(ε): an absolute ODE error τ gives relative errors
    // τ/δ, far below the 1e-8 and 1e-3 the comparisons resolve at ci (1e-18) and full (1e-24).
    const mp50 ode_tolerance = context.budget.pick(mp50("1e-14"), mp50("1e-18"), mp50("1e-24"));
    const double epsilon = context.params.get("epsilon");
    const bool mutant = context.mutant_is("exp_mu_squared");
    // μ ~ U[0.2, 3], sorted (§7 claim 6).
    sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/mu", 0);
    std::vector<double> mu(components);
    for (double& m : mu) m = 0.2 + 2.8 * sim::uniform01(rng);
    std::sort(mu.begin(), mu.end());

    Verdict verdict;
    Plot plot{"log_delta", "ln(delta_j / mu_j) along the ODE; late slopes against -e^{mu_j^2/2}", "t",
              "ln(delta_j / mu_j)", false, false, {}};
    std::vector<double> times_to_eps;
    for (std::size_t j = 0; j < components; ++j) {
      const double m = mu[j];
      // The mutant's e^{μ²} replaces μ²/2 by μ² = (√2 μ)²/2 in every formula.
      const double effective = mutant ? std::sqrt(2.0) * m : m;
      const ReferenceVector t_eps = reference_vector([&]<class S>() {
        theory::Vector<S> out(1);
        out[0] = theory::joma::time_to_relative_precision(S(effective), S(epsilon)).value;
        return out;
      });
      const double late_eps = 1e-7;
      // The late window is placed by the true formula, so that the simulation is the same for every mutant.
      const double t1 = theory::to_double(theory::joma::time_to_relative_precision(mp50(m), mp50(late_eps)).value);
      const double t2 = t1 + 2 * portable::exp(-m * m / 2);
      const double t_q = t_eps.value[0];
      std::vector<mp50> times{mp50(0)};
      std::vector<double> ordered{t_q, t1, t2};
      std::sort(ordered.begin(), ordered.end());
      for (double t : ordered) {
        if (mp50(t) > times.back()) times.push_back(mp50(t));
      }
      for (int i = 1; i <= 20; ++i) {
        const double t = t2 * i / 20.0;
        if (std::find_if(times.begin(), times.end(), [&](const mp50& x) { return x == mp50(t); }) == times.end())
          times.push_back(mp50(t));
      }
      std::sort(times.begin(), times.end());
      theory::Vector<mp50> mu_vector(1), v0 = theory::Vector<mp50>::Zero(1);
      mu_vector[0] = mp50(m);
      const theory::joma::NonlinearFlowSolution<mp50> ode = theory::joma::solve_nonlinear_flow(mu_vector, v0, times, ode_tolerance, mp50("0.25"), mp50(2));
      auto delta_at = [&](double t) {
        const auto it = std::find(times.begin(), times.end(), mp50(t));
        const std::size_t i = static_cast<std::size_t>(it - times.begin());
        return std::pair<mp50, double>(mp50(m) - ode.states[i][0], theory::to_double(ode.error_estimate[i]));
      };
      // (a) time to relative precision: convert the ODE's δ at t_q into the time at which δ = εμ,
      // using d ln δ/dt = −e^{v²/2} (v ≈ μ(1 − ε) there).
      const auto [delta_q, error_q] = delta_at(t_q);
      const double rate_q = portable::exp(m * m * (1 - epsilon) * (1 - epsilon) / 2);
      const double time_shift = theory::to_double(log(delta_q / (mp50(epsilon) * mp50(m)))) / rate_q;
      const double delta_q_d = theory::to_double(delta_q);
      verdict.comparisons.push_back(compare(
          fmt::format("t_ODE(delta = eps mu) - t_j(eps), eps = {:g}, mu_j = {:.4f}, t_j = {:.6g}", epsilon, m, t_q),
          {0.0, t_eps.error[0], std::string(ReferenceVector::reason) + " (of t_j(eps))"},
          {time_shift, 0.0, "deterministic ODE", error_q / (delta_q_d * rate_q),
           "ODE error estimate / (delta rate) (converted to time)"},
          {std::abs(time_shift) * epsilon * m * m,
           "linearisation of ln delta over the shift: relative O(mu^2 eps) of the shift"},
          {1e-8 * t_q, "spec §7 claim 6: relative 1e-8"}));
      // (b) late-time rate.
      const auto [delta_1, error_1] = delta_at(t1);
      const auto [delta_2, error_2] = delta_at(t2);
      const double measured_rate = theory::to_double(log(delta_1 / delta_2)) / (t2 - t1);
      const double predicted_rate = portable::exp(effective * effective / 2);
      const double d1 = theory::to_double(delta_1), d2 = theory::to_double(delta_2);
      verdict.comparisons.push_back(compare(
          fmt::format("late decay rate of ln delta_j for mu_j = {:.4f}", m), {predicted_rate, 0.0, "closed form"},
          {measured_rate, 0.0, "deterministic ODE", (error_1 / d1 + error_2 / d2) / (t2 - t1),
           "relative ODE errors of delta at both ends / window length"},
          {portable::exp(m * m / 2) * m * d1, "e^{(mu-delta)^2/2} = e^{mu^2/2}(1 - O(mu delta)): relative bias <= mu delta(t_1)"},
          {1e-3 * predicted_rate, "spec §7 claim 6: relative 1e-3"}));
      times_to_eps.push_back(t_q);
      Curve curve{fmt::format("mu = {:.3f}", m), Curve::Style::line, {}, {}, {}, {}};
      for (std::size_t i = 1; i < times.size(); ++i) {
        curve.x.push_back(theory::to_double(times[i]));
        curve.y.push_back(theory::to_double(log((mp50(m) - ode.states[i][0]) / mp50(m))));
      }
      plot.curves.push_back(std::move(curve));
    }
    double smallest_gap = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j + 1 < components; ++j) smallest_gap = std::min(smallest_gap, times_to_eps[j] - times_to_eps[j + 1]);
    if (components > 1) {
      verdict.comparisons.push_back(compare(
          "min_j t_j(eps) - t_{j+1}(eps) over mu sorted ascending (must be > 0)", {0.0, 0.0, "strict monotonicity"},
          {smallest_gap, 0.0, "quadrature values"}, {0.0, "none"}, {0.0, "an inequality; the quadrature error is below 1e-40"}, Relation::at_least));
    }
    verdict.plots.push_back(std::move(plot));
    std::string mus;
    for (double m : mu) mus += fmt::format("{:.4f} ", m);
    verdict.notes.push_back("mu = " + mus + fmt::format("(uniform on [0.2, 3], sorted); v(0) = 0; ODE in 50 digits, tolerance {}.", ode_tolerance.str(3, std::ios_base::scientific)));
    return verdict;
  }

 private:
  ClaimInfo info_{
      .id = "joma.nonlinear_convergence_rates",
      .family = "joma",
      .paper = "Tian et al., JoMA (ICLR 2024)",
      .source = "specs/joma.md §4 (Theorem 4, derived version), §7 claim 6",
      .tag = Provenance::derived,
      .statement = "In the nonlinear JoMA dynamics v' = (mu - v) o exp(v^2/2) each component converges at the late rate "
                   "exp(mu_j^2/2), reaches relative precision eps at the quadrature time t_j(eps), and salient "
                   "components (larger mu) converge first (Theorem 4 [paper], constants [derived]).",
      .latex = R"(\tfrac{d}{dt}\ln\delta_j\to-e^{\mu_j^2/2},\quad t_j(\varepsilon)=\int_0^{1-\varepsilon}\frac{e^{-\mu_j^2s^2/2}}{1-s}ds)",
      .simulation = "The ODE integrated per component by Bulirsch-Stoer in 50 digits (theory::integrate_with_error); "
                    "mu drawn uniformly in [0.2, 3].",
      .params = {{"epsilon", 1e-6, 1e-12, 1e-2, false, false, "relative precision for t_j(eps)"}},
      .mutants = {{"exp_mu_squared", "rate e^{mu^2} and time integrand e^{-mu^2 s^2}/(1-s) instead of mu^2/2"}},
  };
};

}  // namespace

std::unique_ptr<Claim> make_nonlinear_convergence_rates() { return std::make_unique<NonlinearConvergenceRates>(); }

}  // namespace dyncheck::checks::joma
