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
//   3. the slow manifold's O(ε/(a + b)) relative correction and the fast mode, which contracts by
//      |1 − a − b| per step: 2ε/(a + b) + |1 − a − b|^{t1}/(|1 − α_{t1}|(t2 − t1)).
// Numerical: double rounding of |1 − α| (≥ 1e-3 ≫ 1e-13) is negligible; 1e-12 relative allowed.
// Mutant: no_rate_factor: rate η/T, without η_AK_P/(ηρ̄ + η_AK_P).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "claims.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/phases.hpp"
#include "theory_instance.hpp"

namespace dyncheck::checks::scb {
namespace {

namespace tscb = theory::scb;

class SlowPhaseRate final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    const long long N = context.params.get_int("N"), Q = context.params.get_int("Q");
    const long long T = context.budget.level == BudgetLevel::smoke ? std::min(context.params.get_int("T"), 60LL)
                                                                    : context.params.get_int("T");
    require_sparsity(Q, T);
    const double eta = context.params.get("eta"), eta_A_K_P = context.params.get("eta_A_K_P");
    const double w_start = context.params.get("window_start"), w_end = context.params.get("window_end");
    require(w_end < w_start, "window_end", "must be below window_start");
    const double resolution = context.params.get("resolution");
    const std::size_t instances = context.budget.pick<std::size_t>(1, 2, 6);
    const double Td = static_cast<double>(T);
    Verdict verdict;
    Plot plot{"slow_phase", "Slow phase: |1 - alpha| against steps", "step", "|1 - alpha|", false, true, {}};
    for (std::size_t i = 0; i < instances; ++i) {
      // Instance 0 has q uniform on its support (rho_k = 1/Q - 1/T); the others Dirichlet(1) weights, so
      // that rho_bar, on which the symmetric dynamics depends, varies across instances.
      sim::scb::InstanceOptions options{static_cast<int>(N), static_cast<int>(T), static_cast<int>(Q)};
      options.q_uniform = i == 0;
      const sim::scb::Instance sim_inst = draw_instance(context, "slow", i, options);
      const auto inst_d = to_theory<double>(sim_inst);
      const auto c_d = tscb::constants(inst_d);
      const double a = eta * c_d.rho_bar, b = eta_A_K_P, eps = eta / Td;
      require(a + b < 2, "eta_A_K_P", "must keep eta rho_bar + eta_A K_P < 2 (stability of the fast mode at (1, 1))");
      sim::scb::LinearModel model = sim::scb::initial_model(sim_inst);
      long long t = 0, t1 = -1, t2 = -1;
      double gap1 = 0, gap2 = 0;
      Curve path{fmt::format("instance {}: full-matrix GD", i), Curve::Style::points, {}, {}, {}, {}};
      const long long max_steps = 50'000'000;
      while (t2 < 0) {
        if (++t > max_steps) throw std::runtime_error("scb.slow_phase_rate: window not reached within 5e7 steps");
        sim::scb::population_stage1_step(model, sim_inst, eta, eta_A_K_P / c_d.K_P);
        const double gap = std::abs(1 - reduce_model(inst_d, model).alpha);
        if (t1 < 0 && gap < w_start) {
          t1 = t;
          gap1 = gap;
        }
        if (t1 >= 0 && gap < w_end) {
          t2 = t;
          gap2 = gap;
        }
        if (i == 0 && (t % 25 == 0)) {
          path.x.push_back(static_cast<double>(t));
          path.y.push_back(gap);
        }
      }
      const double measured = portable::log(gap1 / gap2) / static_cast<double>(t2 - t1);
      const double leading = tscb::slow_phase_rate(eta, Td, c_d.rho_bar, eta_A_K_P);
      const double theory_value = context.mutant_is("no_rate_factor") ? eta / Td : leading;
      const double exact = tscb::slow_phase_gd_rate(eta, Td, c_d.rho_bar, eta_A_K_P);
      auto shape = [&](double x) { return x * x * x * x / (a + b * x * x * x * x) * (a + b); };
      const double manifold = std::max(std::abs(shape(1 - w_start) - 1), std::abs(shape(1 + w_start) - 1)) * leading;
      const double fast = portable::pow(std::abs(1 - a - b), static_cast<double>(t1)) / (gap1 * static_cast<double>(t2 - t1));
      const double correction = 2 * eps / (a + b) * leading;
      verdict.comparisons.push_back(compare(
          fmt::format("instance {}: -d ln|1 - alpha|/dt for |1 - alpha| from {:g} to {:g} (steps {}..{})", i, w_start,
                      w_end, t1, t2),
          {theory_value, 1e-12 * leading, "closed form in double"},
          {measured, 0.0, "deterministic", 1e-12 * leading, "double rounding of |1 - alpha| >= window_end"},
          {std::abs(exact - leading) + manifold + correction + fast,
           fmt::format("|exact linearised GD rate - leading term| = {:.2g}; slow-manifold shape over the window = {:.2g}; "
                       "manifold correction 2 eps/(a+b) = {:.2g} and fast mode {:.2g} (relative to the rate {:.4g})",
                       std::abs(exact - leading) / leading, manifold / leading, correction / leading, fast / leading,
                       leading)},
          {resolution * leading, fmt::format("{:g} x the predicted rate", resolution)}));
      if (i == 0) {
        Curve line{"slope of the predicted rate through the window start", Curve::Style::line, {}, {}, {}, {}};
        for (long long s = t1; s <= t2; s += std::max(1LL, (t2 - t1) / 20)) {
          line.x.push_back(static_cast<double>(s));
          line.y.push_back(gap1 * portable::exp(-leading * static_cast<double>(s - t1)));
        }
        plot.curves = {path, line};
        verdict.notes.push_back(fmt::format("Instance 0: rho_bar = {:.4g}, eta/T = {:.3g}; predicted rate {:.5g}, "
                                            "measured {:.5g}; {} steps to |1 - alpha| < {:g}.",
                                            c_d.rho_bar, eps, leading, measured, t2, w_end));
      }
    }
    verdict.plots.push_back(std::move(plot));
    return verdict;
  }

 private:
  ClaimInfo info_{
      .id = "scb.slow_phase_rate",
      .family = "scb",
      .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
      .source = "specs/scb.md §4.3 (Slow phase), §8 claim 7",
      .tag = Provenance::derived,
      .statement = "Along alpha beta = 1 the 1/T drift alone moves the state to (1, 1) at the rate "
                   "-d ln|1 - alpha|/dt = (eta/T) eta_A K_P/(eta rho_bar + eta_A K_P): O(T/eta) steps.",
      .latex = R"(-\frac{d\ln|1-\alpha|}{dt} = \frac{\eta}{T}\,\frac{\eta_AK_P}{\eta\bar\rho + \eta_AK_P})",
      .simulation = "sim::scb full-matrix population GD in double from V = mu 1^T, a = 1/T through the slow phase.",
      .params =
          {
              {"N", 3, 2, 20, true, false, "vocabulary size"},
              {"T", 200, 8, 5000, true, false, "context length (at the smoke budget at most 60)"},
              {"Q", 2, 1, 20, true, false, "support size of q^(k), <= T/4"},
              {"eta", 0.5, 0, 0.6, false, true, "V step size"},
              {"eta_A_K_P", 0.5, 0, 1, false, true, "attention step size times K_P"},
              {"window_start", 0.01, 1e-6, 0.1, false, true, "rate measured from |1 - alpha| < window_start"},
              {"window_end", 0.001, 1e-9, 0.05, false, true, "... to |1 - alpha| < window_end"},
              {"resolution", 0.1, 1e-4, 0.5, false, false, "detectable relative error of the rate"},
          },
      .mutants = {{"no_rate_factor", "rate eta/T, without the factor eta_A K_P/(eta rho_bar + eta_A K_P)"}},
  };
};

}  // namespace

std::unique_ptr<Claim> make_slow_phase_rate() { return std::make_unique<SlowPhaseRate>(); }

}  // namespace dyncheck::checks::scb
