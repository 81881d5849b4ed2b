// Claim scb.slow_phase_rate  [derived]  (specs/scb.md §4.3 "Slow phase", §8 claim 7)
//
// After the fast landing on αβ ≈ 1, only the 1/T drift moves the state, along αβ = 1, to the ground
// truth (α, β) = (1, 1); near it
//   −d ln|1 − α|/dt = (η/T) η_AK_P/(ηρ̄ + η_AK_P),
// so reaching (1, 1) takes O(T/η) steps.
// Measured: the sim layer's full-matrix population GD (double) from its initial_model; the rate
// ln(|1 − α_{t1}|/|1 − α_{t2}|)/(t2 − t1) between the first steps with |1 − α| below window_start
// and below window_end.
// Theory: slow_phase_rate.
// Tolerance (deterministic), bias from three derived terms:
//   1. the statement is the first-order term in ε = η/T of the slow eigenvalue λ_s of the GD map
//      linearised at (1, 1); the exact per-step rate −ln(1 + λ_s) (slow_phase_gd_rate) differs by
//      O(ε²);
//   2. away from (1, 1), on the slow manifold (1 − αβ = O(ε), β ≈ 1/α) the flow gives
//      −d ln|1−α|/dt = ε b α⁴/(a + bα⁴), a = ηρ̄, b = η_AK_P: its largest relative deviation from the
//      value at α = 1 over |1 − α| ≤ window_start (computed exactly);
//   3. the slow manifold's O(ε/(a + b)) relative correction, 2ε/(a + b), and the fast mode left at the window
//      start, measured: linearised at (1, 1), the fast eigenvector is (1, b/a) in (δα, δβ), so its α-part is at
//      most its part of δ(αβ); on the slow manifold αβ − 1 = −(α − 1) ε/(a + b) to first order. So the fast
//      part of α at t1 is at most F = |(1 − α_{t1}β_{t1}) − (α_{t1} − 1)ε/(a + b)| + |α_{t1} − 1| ε/(a + b) (the
//      manifold offset itself counted again for its higher orders); it contracts by |1 − a − b| per step and
//      moves ln|1 − α| by at most 2F/|1 − α| while F ≤ |1 − α|/2, so the rate by at most
//      2(F/|1 − α_{t1}| + F|1 − a − b|^{t2−t1}/|1 − α_{t2}|)/(t2 − t1).
//   (Before session 14 this term was |1 − a − b|^{t1}/(|1 − α_{t1}|(t2 − t1)), as if the fast mode had amplitude 1 at
//   t = 0 under the linear map; the landing is nonlinear, and where it overshoots α = 1 (Q = 1, or small η_AK_P:
//   issue #10 fuzz seed 14005, Q = 1; Q = 20 with η_AK_P = 0.05) the window opened during the fast phase and the
//   claim FAILed by 10³×.)
// The window: it opens at the first step with |1 − α| < window_start that has landed (F ≤ |1 − α|/2, the
// linearisation above) and reopens after any crossing of α = 1 (the slow mode approaches (1, 1) monotonically:
// 0 < 1 + λ_s < 1); it closes at the first later step with |1 − α| < window_end. When the landing is already below
// window_end there is no slow-phase window from window_start to window_end at this point: that instance's
// comparison is INCONCLUSIVE with the landing step and gap as its reason.
//   (a + b < 1.6 for every valid point: ρ̄ < 1, η ≤ 0.6, η_AK_P ≤ 1, so the fast mode is stable.)
// Numerical: double rounding of |1 − α| (≥ 1e-9 ≫ 1e-13 relative steps) is negligible; 1e-12
// relative allowed.
// Cost: about (T/η)((ηρ̄ + η_AK_P)/η_AK_P) ln(1/window_end) steps of O(N T) each; a point whose
// bound (with ρ̄ ≤ 1) exceeds the budget's work is refused up front (exit 2 naming T).
// Mutants (edits of Settings): no_rate_factor (rate η/T, without η_AK_P/(ηρ̄ + η_AK_P)) and the
// small rate_5_percent (the rate × 1.05).
// Resolution: `resolution` × the rate (10% at the defaults); the tolerance at the defaults is a
// few per cent of the rate, below the 5% mutant.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "claims.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/phases.hpp"
#include "params.hpp"
#include "theory_instance.hpp"

namespace dyncheck::checks::scb {
namespace {

namespace tscb = theory::scb;

struct Params : ParamSet {
  Vocabulary vocabulary{this};
  Int T{this, "T", 200, closed(8, 5000), "context length (at the smoke budget at most 60)", Scale::log};
  Support support{this};
  StepSizes steps{this, 0.5, 0.6, 0.5};
  Real window_start{this, "window_start", 0.01, closed(1e-6, 0.1), "rate measured from |1 - alpha| < window_start",
                    Scale::log};
  Real window_end{this, "window_end", 0.001, closed(1e-9, 0.05),
                  "... to |1 - alpha| < window_end; below window_start / 2", Scale::log};
  Real resolution{this, "resolution", 0.1, closed(1e-4, 0.5), "detectable relative error of the rate"};

  long long run_T(const Budget& budget) const {
    return budget.level == BudgetLevel::smoke ? std::min(T.value(), 60LL) : T.value();
  }

  /// Upper bound on the GD steps: escape and landing (< 1e4 here) plus the slow phase at rho_bar <= 1.
  double step_bound(const Budget& budget) const {
    const double Td = static_cast<double>(run_T(budget));
    const double a = steps.eta, b = steps.eta_A_K_P;
    return 1e4 + Td / a * (a + b) / b * portable::log(2 / window_end);
  }

  void check(const Budget& budget) const override {
    require(window_end <= window_start / 2, "window_end",
            fmt::format("must be at most window_start / 2 = {:g}", window_start / 2));
    require_sparsity(support.Q, run_T(budget));
    const double work = step_bound(budget) * static_cast<double>(vocabulary.N * (run_T(budget) + vocabulary.N)) *
                        static_cast<double>(budget.pick<std::size_t>(1, 2, 6));
    const double limit = budget.pick(1e8, 4e9, 4e10);
    require(work <= limit, "T",
            fmt::format("with eta = {:g}, eta_A_K_P = {:g}, window_end = {:g}, N = {}: the slow phase needs up to {:.3g} "
                        "steps of O(N T) work, {:.3g} in all, above the budget's {:.3g} (lower T or window_end, or "
                        "raise eta)",
                        steps.eta.value(), steps.eta_A_K_P.value(), window_end.value(), vocabulary.N.value(),
                        step_bound(budget), work, limit));
  }
};

struct Settings {
  double rate_factor = 1.0;       ///< multiplies the predicted rate
  bool attention_factor = true;  ///< the factor eta_A K_P/(eta rho_bar + eta_A K_P)
};

struct Slow {
  double rho_bar = 0, gap1 = 0, gap2 = 0, rate = 0, fast1 = 0;  ///< fast1: F at t1 (header, bias term 3)
  long long t1 = -1, t2 = -1, crossings = 0;
  std::string not_measurable;  ///< non-empty: the landing is below window_end (the reason)
  std::vector<double> path_t, path_gap;
};

struct Measured {
  long long T = 0;
  std::vector<Slow> instances;
};

struct Predicted {
  std::vector<double> rate;
};

class SlowPhaseRate final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  SlowPhaseRate() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    Measured m;
    m.T = p.run_T(context.budget);
    const long long N = p.vocabulary.N, T = m.T, Q = p.support.Q;
    const double eta = p.steps.eta, eta_A_K_P = p.steps.eta_A_K_P;
    const std::size_t instances = context.budget.pick<std::size_t>(1, 2, 6);
    const auto max_steps = static_cast<long long>(2 * p.step_bound(context.budget));
    for (std::size_t i = 0; i < instances; ++i) {
      // Instance 0 has q uniform on its support (rho_k = 1/Q - 1/T); the others Dirichlet(1) weights, so
      // that rho_bar, on which the symmetric dynamics depends, varies across instances.
      sim::scb::InstanceOptions options{static_cast<int>(N), static_cast<int>(T), static_cast<int>(Q)};
      options.q_uniform = i == 0;
      const sim::scb::Instance sim_inst = draw_instance(context, "slow", i, options);
      const auto inst_d = to_theory<double>(sim_inst);
      const auto c_d = tscb::constants(inst_d);
      sim::scb::LinearModel model = sim::scb::initial_model(sim_inst);
      Slow s;
      s.rho_bar = c_d.rho_bar;
      const double a = eta * c_d.rho_bar, b = eta_A_K_P, eps = eta / static_cast<double>(T);
      long long t = 0;
      bool below = true;  // 1 - alpha > 0 (alpha starts at 0)
      while (s.t2 < 0) {
        if (++t > max_steps) {
          throw std::runtime_error(fmt::format("scb.slow_phase_rate: window not reached within {} steps", max_steps));
        }
        sim::scb::population_stage1_step(model, sim_inst, eta, eta_A_K_P / c_d.K_P);
        const auto state = reduce_model(inst_d, model);
        const double gap = std::abs(1 - state.alpha);
        if ((1 - state.alpha > 0) != below) {  // crossed alpha = 1: the window (re)opens after it
          below = !below;
          ++s.crossings;
          s.t1 = -1;
        }
        const double manifold = (state.alpha - 1) * eps / (a + b);  // 1 - alpha beta on the slow manifold
        const double fast = std::abs((1 - state.alpha * state.beta.mean()) - manifold) + std::abs(manifold);
        if (s.t1 < 0 && gap < p.window_start && fast <= gap / 2) {
          s.t1 = t;
          s.gap1 = gap;
          s.fast1 = fast;
          if (gap < p.window_end) {
            s.not_measurable = fmt::format("landed on the slow manifold at step {} with |1 - alpha| = {:.3g}, already below "
                                           "window_end = {:g} ({} crossing(s) of alpha = 1 before): no slow-phase window "
                                           "from window_start to window_end at this point",
                                           t, gap, p.window_end.value(), s.crossings);
            break;
          }
        } else if (s.t1 >= 0 && gap < p.window_end) {
          s.t2 = t;
          s.gap2 = gap;
        }
        if (i == 0 && (t % 25 == 0)) {
          s.path_t.push_back(static_cast<double>(t));
          s.path_gap.push_back(gap);
        }
      }
      if (s.not_measurable.empty()) s.rate = portable::log(s.gap1 / s.gap2) / static_cast<double>(s.t2 - s.t1);
      m.instances.push_back(std::move(s));
    }
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted predicted;
    const double Td = static_cast<double>(m.T);
    for (const Slow& slow : m.instances) {
      const double rate = s.attention_factor ? tscb::slow_phase_rate(p.steps.eta.value(), Td, slow.rho_bar,
                                                                     p.steps.eta_A_K_P.value())
                                             : p.steps.eta / Td;
      predicted.rate.push_back(s.rate_factor * rate);
    }
    return predicted;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    const double eta = p.steps.eta, eta_A_K_P = p.steps.eta_A_K_P, w_start = p.window_start, w_end = p.window_end;
    const double Td = static_cast<double>(m.T), eps = eta / Td;
    Verdict verdict;
    Plot plot{"slow_phase", "Slow phase: |1 - alpha| against steps", "step", "|1 - alpha|", false, true, {}};
    for (std::size_t i = 0; i < m.instances.size(); ++i) {
      const Slow& s = m.instances[i];
      const double a = eta * s.rho_bar, b = eta_A_K_P;
      const double leading = tscb::slow_phase_rate(eta, Td, s.rho_bar, eta_A_K_P);
      const double exact = tscb::slow_phase_gd_rate(eta, Td, s.rho_bar, eta_A_K_P);
      auto shape = [&](double x) { return x * x * x * x / (a + b * x * x * x * x) * (a + b); };
      const double manifold = std::max(std::abs(shape(1 - w_start) - 1), std::abs(shape(1 + w_start) - 1)) * leading;
      const std::string quantity = fmt::format("instance {}: -d ln|1 - alpha|/dt for |1 - alpha| from {:g} to {:g}", i,
                                               w_start, w_end);
      if (!s.not_measurable.empty()) {  // INCONCLUSIVE, with a bias above any resolution and the reason
        verdict.comparisons.push_back(checks::compare(quantity, {0, 0, "not computed"},
                                                      measured_exactly(0, 0, "no window at this point"),
                                                      {1e3 * leading, s.not_measurable},
                                                      {p.resolution * leading, "not measured"}));
        continue;
      }
      const double window_steps = static_cast<double>(s.t2 - s.t1);
      const double fast =
          2 * (s.fast1 / s.gap1 + s.fast1 * portable::pow(std::abs(1 - a - b), window_steps) / s.gap2) / window_steps;
      const double correction = 2 * eps / (a + b) * leading;
      verdict.comparisons.push_back(checks::compare(
          fmt::format("{} (steps {}..{})", quantity, s.t1, s.t2),
          {t.rate[i], 1e-12 * leading, "closed form in double"},
          measured_exactly(s.rate, 1e-12 * leading, "double rounding of |1 - alpha| >= window_end"),
          {std::abs(exact - leading) + manifold + correction + fast,
           fmt::format("|exact linearised GD rate - leading term| = {:.2g}; slow-manifold shape over the window = {:.2g}; "
                       "manifold correction 2 eps/(a+b) = {:.2g} and fast mode left at the window start {:.2g}, measured "
                       "(relative to the rate {:.4g})",
                       std::abs(exact - leading) / leading, manifold / leading, correction / leading, fast / leading,
                       leading)},
          {p.resolution * leading, fmt::format("{:g} x the predicted rate", p.resolution.value())}));
      if (i == 0) {
        Curve path = Curve::points("instance 0: full-matrix GD");
        for (std::size_t k = 0; k < s.path_t.size(); ++k) path.add(s.path_t[k], s.path_gap[k]);
        Curve line = Curve::line("slope of the predicted rate through the window start");
        for (long long step = s.t1; step <= s.t2; step += std::max(1LL, (s.t2 - s.t1) / 20)) {
          line.add(static_cast<double>(step), s.gap1 * portable::exp(-leading * static_cast<double>(step - s.t1)));
        }
        plot.add(std::move(path)).add(std::move(line));
        verdict.notes.push_back(fmt::format("Instance 0: rho_bar = {:.4g}, eta/T = {:.3g}; predicted rate {:.5g}, "
                                            "measured {:.5g}; {} steps to |1 - alpha| < {:g}.",
                                            s.rho_bar, eps, leading, s.rate, s.t2, w_end));
      }
    }
    verdict.plots.push_back(std::move(plot));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "scb.slow_phase_rate",
        .family = "scb",
        .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
        .source = "specs/scb.md §4.3 (Slow phase), §8 claim 7",
        .tag = Provenance::derived,
        .statement = "Along alpha beta = 1 the 1/T drift alone moves the state to (1, 1) at the rate "
                     "-d ln|1 - alpha|/dt = (eta/T) eta_A K_P/(eta rho_bar + eta_A K_P): O(T/eta) steps.",
        .latex = R"(-\frac{d\ln|1-\alpha|}{dt} = \frac{\eta}{T}\,\frac{\eta_AK_P}{\eta\bar\rho + \eta_AK_P})",
        .simulation = "sim::scb full-matrix population GD in double from V = mu 1^T, a = 1/T through the slow phase.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"no_rate_factor", "rate eta/T, without the factor eta_A K_P/(eta rho_bar + eta_A K_P)",
         [](Settings& s) { s.attention_factor = false; }},
        {"rate_5_percent", "the predicted rate times 1.05", [](Settings& s) { s.rate_factor = 1.05; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_slow_phase_rate() { return std::make_unique<SlowPhaseRate>(); }

}  // namespace dyncheck::checks::scb
