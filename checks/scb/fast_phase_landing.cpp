// Claim scb.fast_phase_landing  [derived]  (specs/scb.md §4.3 "Fast phase", §8 claim 6)
//
// From zero correlation, once the 1/T drift has seeded the growth, I_c = η_AK_Pα² − ηρ̄β² is
// (nearly) conserved at 0, so the fast phase lands on αβ = 1 at
//   α* = (ηρ̄/(η_AK_P))^{1/4}.
// Measured: α at the first step with αβ ≥ p (p = 0.99) of the sim layer's full-matrix population GD
// (double) from its initial_model; β the common β_k.
// Theory: landing_alpha.
// Tolerance (deterministic; no statistical term):
//   bias, a posteriori along the measured path: GD changes I_c exactly by
//     I⁺ = I (1 − r²(1 − αβ)²) + η_AK_P d (2α⁺ − d),   d = η(1 − α)/T,  r² = ηρ̄η_AK_P
//   (expand η_AK_P(α⁺² − α²) − ηρ̄(β⁺² − β²) with α⁺ = α + ηρ̄β(1−αβ) + d, β⁺ = β + η_AK_Pα(1−αβ)),
//   so |I| ≤ Σ_s |I-factor| … + η_AK_P d_s|2α_{s+1} − d_s| =: I_max; where αβ = p' (the measured
//   product at landing), η_AK_Pα⁴ − Iα² − ηρ̄p'² = 0 gives α(I, p') = √((I + √(I² + 4ηρ̄η_AK_P p'²))/(2η_AK_P)),
//   so |α_land − α*| ≤ max_{±} |α(±I_max, p') − α*| (this covers both the threshold p' ≠ 1 and I ≠ 0);
//   numerical: 1e-12 (double rounding of ≈ 100 steps of full-matrix GD; the bias is ≥ 1e-4).
// Mutant: exponent_half: α* = (ηρ̄/(η_AK_P))^{1/2}.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "claims.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/linearised.hpp"
#include "dyncheck/theory/scb/phases.hpp"
#include "theory_instance.hpp"

namespace dyncheck::checks::scb {
namespace {

namespace tscb = theory::scb;

class FastPhaseLanding final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    const long long N = context.params.get_int("N"), T = context.params.get_int("T"), Q = context.params.get_int("Q");
    require_sparsity(Q, T);
    const double eta = context.params.get("eta"), eta_A_K_P = context.params.get("eta_A_K_P");
    const double p = context.params.get("threshold"), resolution = context.params.get("resolution");
    const std::size_t instances = context.budget.pick<std::size_t>(1, 3, 10);
    const double Td = static_cast<double>(T);
    Verdict verdict;
    Plot plot{"landing", "Fast phase: (alpha, beta) from zero correlation, landing on alpha beta = 1", "alpha", "beta",
              false, false, {}};
    for (std::size_t i = 0; i < instances; ++i) {
      // Instance 0 has q uniform on its support (rho_k = 1/Q - 1/T); the others Dirichlet(1) weights, so
      // that rho_bar, on which the symmetric dynamics depends, varies across instances.
      sim::scb::InstanceOptions options{static_cast<int>(N), static_cast<int>(T), static_cast<int>(Q)};
      options.q_uniform = i == 0;
      const sim::scb::Instance sim_inst = draw_instance(context, "landing", i, options);
      const auto inst_d = to_theory<double>(sim_inst);
      const auto c_d = tscb::constants(inst_d);
      const double a = eta * c_d.rho_bar, b = eta_A_K_P;
      const double r2 = a * b;
      sim::scb::LinearModel model = sim::scb::initial_model(sim_inst);
      double alpha = 0, beta = 0, I_max = 0;
      Curve path{fmt::format("instance {}: full-matrix GD", i), Curve::Style::points, {}, {}, {}, {}};
      long long t = 0;
      while (alpha * beta < p) {
        if (++t > 1000000) throw std::runtime_error("scb.fast_phase_landing: no landing within 1e6 steps");
        sim::scb::population_stage1_step(model, sim_inst, eta, eta_A_K_P / c_d.K_P);
        const auto state = reduce_model(inst_d, model);
        const double d = eta * (1 - alpha) / Td;
        const double gap = 1 - alpha * beta;
        I_max = I_max * std::abs(1 - r2 * gap * gap) + b * d * std::abs(2 * state.alpha - d);
        alpha = state.alpha;
        beta = state.beta.mean();
        path.x.push_back(alpha);
        path.y.push_back(beta);
      }
      const double product = alpha * beta;
      auto alpha_of = [&](double I) { return std::sqrt((I + std::sqrt(I * I + 4 * a * b * product * product)) / (2 * b)); };
      const double landing = tscb::landing_alpha(eta, c_d.rho_bar, eta_A_K_P);
      const double theory_value = context.mutant_is("exponent_half") ? std::sqrt(a / b) : landing;
      const double bias = std::max(std::abs(alpha_of(I_max) - landing), std::abs(alpha_of(-I_max) - landing));
      verdict.comparisons.push_back(compare(
          fmt::format("instance {}: alpha at the first alpha beta >= {:g} (step {})", i, p, t),
          {theory_value, 1e-15, "closed form in double"},
          {alpha, 0.0, "deterministic", 1e-12, "double rounding of full-matrix GD"},
          {bias, fmt::format("landing at alpha beta = {:.5f} with |I_c| <= {:.3g} (a-posteriori bound of the exact GD "
                             "recursion of I_c): alpha in [alpha(-I), alpha(+I)]",
                             product, I_max)},
          {resolution * landing, fmt::format("{:g} x alpha*", resolution)}));
      if (i < 3) plot.curves.push_back(std::move(path));
      if (i == 0) {
        Curve hyperbola{"alpha beta = 1", Curve::Style::line, {}, {}, {}, {}};
        Curve conserved{"I_c = 0: beta = alpha sqrt(eta_A K_P/(eta rho_bar))", Curve::Style::line, {}, {}, {}, {}};
        for (int k = 1; k <= 60; ++k) {
          const double x = 1.5 * landing * k / 60;
          if (x > 0.3 * landing) {
            hyperbola.x.push_back(x);
            hyperbola.y.push_back(1 / x);
          }
          conserved.x.push_back(x);
          conserved.y.push_back(x * std::sqrt(b / a));
        }
        plot.curves.push_back(hyperbola);
        plot.curves.push_back(conserved);
        verdict.notes.push_back(fmt::format("Instance 0: rho_bar = {:.4g}, K_P = {:.4g}, alpha* = {:.5f}, landed at "
                                            "alpha = {:.5f} after {} steps.",
                                            c_d.rho_bar, c_d.K_P, landing, alpha, t));
      }
    }
    verdict.plots.push_back(std::move(plot));
    return verdict;
  }

 private:
  ClaimInfo info_{
      .id = "scb.fast_phase_landing",
      .family = "scb",
      .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
      .source = "specs/scb.md §4.3 (Fast phase), §8 claim 6",
      .tag = Provenance::derived,
      .statement = "From zero correlation the fast phase conserves eta_A K_P alpha^2 - eta rho_bar beta^2 and lands "
                   "on alpha beta = 1 at alpha* = (eta rho_bar/(eta_A K_P))^(1/4).",
      .latex = R"(\alpha^* = \Bigl(\frac{\eta\bar\rho}{\eta_AK_P}\Bigr)^{1/4})",
      .simulation = "sim::scb full-matrix population GD in double from V = mu 1^T, a = 1/T until alpha beta >= p.",
      .params =
          {
              {"N", 3, 2, 20, true, false, "vocabulary size"},
              {"T", 10000, 1000, 1000000, true, false, "context length (the statement is for 1/T -> 0)"},
              {"Q", 2, 1, 20, true, false, "support size of q^(k), <= T/4"},
              {"eta", 0.2, 0, 0.6, false, true, "V step size"},
              {"eta_A_K_P", 0.5, 0, 1, false, true, "attention step size times K_P"},
              {"threshold", 0.99, 0.9, 1, false, true, "landing: first alpha beta >= threshold"},
              {"resolution", 0.02, 1e-4, 0.5, false, false, "detectable relative error of alpha*"},
          },
      .mutants = {{"exponent_half", "alpha* = (eta rho_bar/(eta_A K_P))^(1/2) instead of ^(1/4)"}},
  };
};

}  // namespace

std::unique_ptr<Claim> make_fast_phase_landing() { return std::make_unique<FastPhaseLanding>(); }

}  // namespace dyncheck::checks::scb
