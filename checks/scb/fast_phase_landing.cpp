// Claim scb.fast_phase_landing  [derived]  (specs/scb.md §4.3 "Fast phase", §8 claim 6)
//
// From zero correlation, once the 1/T drift has seeded the growth, I_c = η_AK_Pα² − ηρ̄β² is
// (nearly) conserved at 0, so the fast phase lands on αβ = 1 at
//   α* = (ηρ̄/(η_AK_P))^{1/4}.
// Measured: α at the first step with αβ ≥ p (p = threshold) of the sim layer's full-matrix
// population GD (double) from its initial_model; β the common β_k.
// Theory: landing_alpha.
// Tolerance (deterministic; no statistical term):
//   bias, a posteriori along the measured path: GD changes I_c exactly by
//     I⁺ = I (1 − r²(1 − αβ)²) + η_AK_P d (2α⁺ − d),   d = η(1 − α)/T,  r² = ηρ̄η_AK_P
//   (expand η_AK_P(α⁺² − α²) − ηρ̄(β⁺² − β²) with α⁺ = α + ηρ̄β(1−αβ) + d, β⁺ = β + η_AK_Pα(1−αβ)),
//   so |I| ≤ Σ_s |I-factor| … + η_AK_P d_s|2α_{s+1} − d_s| =: I_max; where αβ = p' (the measured
//   product at landing), η_AK_Pα⁴ − Iα² − ηρ̄p'² = 0 gives α(I, p') = √((I + √(I² + 4ηρ̄η_AK_P p'²))/(2η_AK_P)),
//   so |α_land − α*| ≤ max_{±} |α(±I_max, p') − α*| (this covers both the threshold p' ≠ 1 and I ≠ 0);
//   numerical: 1e-12 (double rounding of ≈ 100 steps of full-matrix GD; the bias is ≥ 1e-4).
// Valid region: every instance the claim draws (the bound uses only the exact recursion of I_c);
// the run is refused up front (exit 2, naming eta) when the escape from zero correlation could
// need more than 1e4 steps even for the slowest instance (ρ̄ ≥ 1/Q − 1/T). The threshold is at most
// 0.99: after the fast phase |1 − αβ| = O(η/T) with αβ < 1 when α* > 1 (the slow drift then needs
// β to grow), so a threshold of 1 might never be crossed.
// Mutants (edits of Settings): exponent_half (α* = (ηρ̄/(η_AK_P))^{1/2}) and the small one
// rho_bar_10_percent (α* with ρ̄ → 1.1ρ̄: α* moves by 1.1^{1/4} − 1 = 2.4%).
// Resolution: `resolution` × α* (2% at the defaults); at the defaults the tolerance is about 0.5% of
// α* (the threshold 0.99), so a relative error of α* above about 0.6% is detected.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

constexpr long long max_escape_steps = 100000;

struct Params : ParamSet {
  Vocabulary vocabulary{this};
  Int T{this, "T", 10000, closed(1000, 1000000), "context length (the statement is for 1/T -> 0)", Scale::log};
  Support support{this};
  StepSizes steps{this, 0.2, 0.6, 0.5};
  Real threshold{this, "threshold", 0.99, closed(0.9, 0.99),
                 "landing: first alpha beta >= threshold; at most 0.99, since the fast phase ends within O(eta/T) of "
                 "alpha beta = 1, below it when alpha* > 1, so a threshold of 1 may never be reached"};
  Real resolution{this, "resolution", 0.02, closed(1e-4, 0.5), "detectable relative error of alpha*"};

  void check(const Budget&) const override {
    require_sparsity(support.Q, T);
    // The slowest instance has rho_bar = 1/Q - 1/T (q uniform on its support); its linear escape
    // from 1/T to O(1) takes about ln(2T)/ln(1 + r) steps.
    const double rho_min = 1.0 / static_cast<double>(support.Q.value()) - 1.0 / static_cast<double>(T.value());
    const double r = std::sqrt(steps.eta * rho_min * steps.eta_A_K_P);
    const double escape = portable::log(2.0 * static_cast<double>(T.value())) / portable::log1p(r);
    // After the fast phase the state sits on the slow manifold, where |1 - alpha beta| = (eta/T) |1/alpha* - 1| /
    // (2 r) at alpha* (from d(alpha beta)/dt = 0 with a beta*^2 = b alpha*^2 = r): the threshold must lie well
    // inside that gap's complement for every rho_bar in [1/Q - 1/T, 1).
    auto gap_at = [&](double rho_bar) {
      const double landing = portable::pow(steps.eta * rho_bar / steps.eta_A_K_P, 0.25);
      return steps.eta / static_cast<double>(T.value()) * std::abs(1 / landing - 1) / (2 * r);
    };
    const double gap = std::max(gap_at(rho_min), gap_at(1.0));
    require(gap <= (1 - threshold) / 4, "threshold",
            fmt::format("must leave 1 - threshold >= 4 x the slow-manifold gap |1 - alpha beta| = (eta/T)|1/alpha* - 1|/(2r) "
                        "<= {:.3g} (eta = {:g}, eta_A_K_P = {:g}, T = {}): alpha beta may never reach {:g} otherwise",
                        gap, steps.eta.value(), steps.eta_A_K_P.value(), T.value(), threshold.value()));
    require(escape <= static_cast<double>(max_escape_steps) / 10, "eta",
            fmt::format("times eta_A_K_P must make the escape ln(2T)/ln(1 + sqrt(eta (1/Q - 1/T) eta_A_K_P)) <= {} "
                        "steps (got {:.3g}: eta = {:g}, eta_A_K_P = {:g})",
                        max_escape_steps / 10, escape, steps.eta.value(), steps.eta_A_K_P.value()));
  }
};

struct Settings {
  double exponent = 0.25;   ///< alpha* = (eta rho_bar / (eta_A K_P))^exponent
  double rho_factor = 1.0;  ///< rho_bar as used by the formula
};

struct Landing {
  double rho_bar = 0, K_P = 0, alpha = 0, beta = 0, I_max = 0;
  long long steps = 0;
  std::vector<double> path_alpha, path_beta;
};

struct Measured {
  std::vector<Landing> instances;
};

struct Predicted {
  std::vector<double> alpha_star;
};

class FastPhaseLanding final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  FastPhaseLanding() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const long long N = p.vocabulary.N, T = p.T, Q = p.support.Q;
    const double eta = p.steps.eta, eta_A_K_P = p.steps.eta_A_K_P;
    const std::size_t instances = context.budget.pick<std::size_t>(1, 3, 10);
    const double Td = static_cast<double>(T);
    Measured m;
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
      Landing l;
      l.rho_bar = c_d.rho_bar;
      l.K_P = c_d.K_P;
      while (l.alpha * l.beta < p.threshold) {
        if (++l.steps > max_escape_steps) throw std::runtime_error("scb.fast_phase_landing: no landing within 1e5 steps");
        sim::scb::population_stage1_step(model, sim_inst, eta, eta_A_K_P / c_d.K_P);
        const auto state = reduce_model(inst_d, model);
        const double d = eta * (1 - l.alpha) / Td;
        const double gap = 1 - l.alpha * l.beta;
        l.I_max = l.I_max * std::abs(1 - r2 * gap * gap) + b * d * std::abs(2 * state.alpha - d);
        l.alpha = state.alpha;
        l.beta = state.beta.mean();
        l.path_alpha.push_back(l.alpha);
        l.path_beta.push_back(l.beta);
      }
      m.instances.push_back(std::move(l));
    }
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted predicted;
    for (const Landing& l : m.instances) {
      predicted.alpha_star.push_back(
          portable::pow(p.steps.eta * s.rho_factor * l.rho_bar / p.steps.eta_A_K_P, s.exponent));
    }
    return predicted;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    const double eta = p.steps.eta, b = p.steps.eta_A_K_P;
    Verdict verdict;
    Plot plot{"landing", "Fast phase: (alpha, beta) from zero correlation, landing on alpha beta = 1", "alpha", "beta",
              false, false, {}};
    for (std::size_t i = 0; i < m.instances.size(); ++i) {
      const Landing& l = m.instances[i];
      const double a = eta * l.rho_bar;
      const double product = l.alpha * l.beta;
      auto alpha_of = [&](double I) { return std::sqrt((I + std::sqrt(I * I + 4 * a * b * product * product)) / (2 * b)); };
      const double landing = tscb::landing_alpha(eta, l.rho_bar, b);
      const double bias = std::max(std::abs(alpha_of(l.I_max) - landing), std::abs(alpha_of(-l.I_max) - landing));
      verdict.comparisons.push_back(checks::compare(
          fmt::format("instance {}: alpha at the first alpha beta >= {:g} (step {})", i, p.threshold.value(), l.steps),
          {t.alpha_star[i], 1e-15, "closed form in double"},
          measured_exactly(l.alpha, 1e-12, "double rounding of full-matrix GD"),
          {bias, fmt::format("landing at alpha beta = {:.5f} with |I_c| <= {:.3g} (a-posteriori bound of the exact GD "
                             "recursion of I_c): alpha in [alpha(-I), alpha(+I)]",
                             product, l.I_max)},
          {p.resolution * landing, fmt::format("{:g} x alpha*", p.resolution.value())}));
      if (i < 3) {
        Curve path = Curve::points(fmt::format("instance {}: full-matrix GD", i));
        for (std::size_t k = 0; k < l.path_alpha.size(); ++k) path.add(l.path_alpha[k], l.path_beta[k]);
        plot.add(std::move(path));
      }
      if (i == 0) {
        Curve hyperbola = Curve::line("alpha beta = 1");
        Curve conserved = Curve::line("I_c = 0: beta = alpha sqrt(eta_A K_P/(eta rho_bar))");
        for (int k = 1; k <= 60; ++k) {
          const double x = 1.5 * landing * k / 60;
          if (x > 0.3 * landing) hyperbola.add(x, 1 / x);
          conserved.add(x, x * std::sqrt(b / a));
        }
        plot.add(std::move(hyperbola)).add(std::move(conserved));
        verdict.notes.push_back(fmt::format("Instance 0: rho_bar = {:.4g}, K_P = {:.4g}, alpha* = {:.5f}, landed at "
                                            "alpha = {:.5f} after {} steps.",
                                            l.rho_bar, l.K_P, landing, l.alpha, l.steps));
      }
    }
    verdict.plots.push_back(std::move(plot));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "scb.fast_phase_landing",
        .family = "scb",
        .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
        .source = "specs/scb.md §4.3 (Fast phase), §8 claim 6",
        .tag = Provenance::derived,
        .statement = "From zero correlation the fast phase conserves eta_A K_P alpha^2 - eta rho_bar beta^2 and lands "
                     "on alpha beta = 1 at alpha* = (eta rho_bar/(eta_A K_P))^(1/4).",
        .latex = R"(\alpha^* = \Bigl(\frac{\eta\bar\rho}{\eta_AK_P}\Bigr)^{1/4})",
        .simulation = "sim::scb full-matrix population GD in double from V = mu 1^T, a = 1/T until alpha beta >= p.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"exponent_half", "alpha* = (eta rho_bar/(eta_A K_P))^(1/2) instead of ^(1/4)",
         [](Settings& s) { s.exponent = 0.5; }},
        {"rho_bar_10_percent", "alpha* with rho_bar replaced by 1.1 rho_bar (alpha* 2.4% too large)",
         [](Settings& s) { s.rho_factor = 1.1; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_fast_phase_landing() { return std::make_unique<FastPhaseLanding>(); }

}  // namespace dyncheck::checks::scb
