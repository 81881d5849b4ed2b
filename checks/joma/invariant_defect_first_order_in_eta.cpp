// Claim joma.invariant_defect_first_order_in_eta  [derived]  (specs/joma.md §2, §7 claim 3)
//
// The continuous-time exp invariant z - (κ_z/2) Σ_k v_k^2 = c is violated under GD only through the
// sum of squared steps (claim 1): at fixed physical time t = η_w·steps
//   \f[ D(\eta) = |z_t - \tfrac{\kappa_z}{2}\textstyle\sum_k v_k^2 - c|
//       = \tfrac{\kappa_z}{2}\sum_s\sum_k(\Delta v_{k,s})^2 = \tfrac{\kappa_z}{2}\,\eta\,S(\eta), \f]
// with S(η) = η Σ_s |∂L/∂v(θ_s)|² a Riemann sum of ∫_0^t |∂L/∂v|² along the GD path. So the defect
// halves when η halves: r(η) = D(η)/D(η/2) = 2 S(η)/S(η/2) → 2.
// Simulated: full-batch GD on one fixed Dirichlet batch (deterministic, so the ratio carries no
// sampling noise), at η_0, η_0/2, ..., η_0/2^{J-1}, same physical time.
// Bias (general case): for a smooth loss (smooth activation, CE, exp attention) the GD path and the
// Riemann sum have expansions in η, S(η) = S_0 + a η + b η² + O(η³), so r_j = 2 + α η_j + β η_j² + O(η³).
// The compared quantity is the once-extrapolated ratio ρ_J = 2 r_J − r_{J−1} = 2 − 2β η_J² + O(η³)
// (the O(η) term cancels); its remainder is estimated from the next coarser extrapolation:
// ρ_{J−1} − ρ_J = 6 β η_J² + O(η³), so |ρ_J − 2| ≈ |ρ_{J−1} − ρ_J| / 3, charged at twice that (2/3 |ρ_{J−1} − ρ_J|)
// for the O(η³) part. That estimate holds only inside the asymptotic range of the ladder, which is checked
// on the measured numbers (the standard observed-order test of Richardson extrapolation): there the
// differences Δ_j = ρ_{j−1} − ρ_j shrink by q = Δ_{J−1}/Δ_J = 4 + O(η) per halving (measured 3.90–4.05 at the
// defaults, seeds 1–12 and the master seed), and the tail Σ_{i>J} Δ_i ≤ |Δ_J|/(q − 1) ≤ |Δ_J|/2 for q ≥ 3, below
// the (2/3)|Δ_J| charged. The check accepts when some Δ'_{J−1}, Δ'_J within the round-off of the ρ's (2× the
// numerical term of the three finest ρ's each) satisfy Δ'_{J−1} = q Δ'_J with q ∈ [3, 16/3] (observed order
// 1.58–2.42). Otherwise the remainder has no bound from these numbers: the bias is 10 (far above the resolution
// 0.2, and above any ratio discrepancy a convergent ladder shows) and the comparison is INCONCLUSIVE with the
// observed q as its reason (issue #10 fuzz, seed 14005: K = 23, init_scale = 1.57, where ρ_j − 2 = 1.48, 0.061,
// −0.057, −0.100 changes sign and q = 2.70; ρ_J = 1.90 against 2 ± 0.029 was a false FAIL). At `smoke` the
// ladder has 5 levels (3 ρ's), the fewest that give one q. A kinked activation (ReLU, leaky ReLU) makes ∂L/∂v jump where a pre-activation
// changes sign, so S(η) − S_0 is O(η) with an erratic coefficient and no expansion: the bias estimate
// does not hold there (issue #10: leaky ReLU failed at seeds 7, 8, 11 and at K = 15, t = 6.43), so the
// claim's activation is one of the smooth ones (identity, SiLU, tanh; default SiLU).
// Numerical: the round-off of the defects (a-priori bound / defect) times the ratios entering ρ_J.
// Mutants: coefficient_045 (the invariant with 0.45: its defect is O(1), ratio → 1), coefficient_1_percent
// (0.505: same, smaller), second_order (a theory claiming an O(η²) defect: ratio 4) and order_5_percent
// (a defect of order η^1.05: ratio 2.07).
// Resolution: 0.2 on the ratio (spec §7 claim 3: [1.8, 2.2]); the bias and round-off terms are ~1e-3
// at the defaults, so a defect exponent p with 2^p off 2 by more than the tolerance, |p − 1| ≳ 1e-3,
// is detected.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "dyncheck/portable/math.hpp"
#include "claims.hpp"
#include "identity_claim.hpp"

namespace dyncheck::checks::joma {
namespace {

/// Total work of the GD ladder in multiply-adds: steps x batch x d x (2 K + 2 M_C).
constexpr double ci_work_limit = 4e10;

struct Params : ParamSet {
  BlockTrainingParams model{this, 8, 0.3, "largest learning rate eta_0",
                            "standard deviation of the initial z and W entries"};
  Real t{this, "t", 10, open_closed(0, 100), "physical time eta_w x steps", Scale::log};
  Int smooth_activation{this, "smooth_activation", 1, closed(0, 2),
                        "0 identity, 1 SiLU, 2 tanh: smooth, as the bias term is an expansion in eta (kinked ReLU and "
                        "leaky ReLU have none)"};

  sim::joma::Activation activation() const {
    constexpr sim::joma::Activation smooth[] = {sim::joma::Activation::identity, sim::joma::Activation::silu,
                                                sim::joma::Activation::tanh};
    return smooth[smooth_activation.value()];
  }

  int levels(const Budget& budget) const { return budget.pick(5, 6, 7); }  // >= 5: three rho's give one q
  long long base_steps() const { return std::max<long long>(1, std::llround(t / model.eta_w)); }

  void check(const Budget& budget) const override {
    model.check_exp_range();
    const double steps = static_cast<double>(base_steps()) * static_cast<double>((1LL << levels(budget)) - 1);
    const double d = static_cast<double>(model.shape.M_C + 1 + model.shape.extra_d);
    const double work = steps * static_cast<double>(model.batch) * d *
                        (2.0 * static_cast<double>(model.shape.K) + 2.0 * static_cast<double>(model.shape.M_C));
    const double limit = budget.pick(ci_work_limit / 20, ci_work_limit, ci_work_limit * 20);
    if (work > limit) {
      throw ParamError("t", fmt::format("t: t / eta_w = {} steps at eta_0 ({} over the ladder of {} step sizes) with batch "
                                        "{}, d = {}, K = {}, M_C = {} costs {:.3g} multiply-adds, above this budget's "
                                        "limit {:.3g}: lower t or batch, or raise eta_w",
                                        base_steps(), steps, levels(budget), model.batch.value(), d,
                                        model.shape.K.value(), model.shape.M_C.value(), work, limit));
    }
  }
};

struct Settings {
  InvariantTheory invariant;
  double order = 1;  ///< the defect is O(eta^order): predicted ratio 2^order
};

struct Measured {
  std::vector<IdentitySetting> settings;
  std::vector<IdentityRun> runs;  ///< one per step size, eta_0 / 2^j
};

struct Predicted {
  double ratio = 2;
  std::vector<double> defects;  ///< D(eta_j) under the theory's invariant
};

class InvariantDefectFirstOrderInEta final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  InvariantDefectFirstOrderInEta() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    Measured m;
    const int levels = p.levels(context.budget);
    for (int j = 0; j < levels; ++j) {
      IdentitySetting s = p.model.setting(sim::joma::AttentionKernel::exp);
      s.activation = p.activation();
      s.loss = sim::joma::Loss::cross_entropy;
      s.full_batch = true;
      s.eta_w = p.model.eta_w / static_cast<double>(1LL << j);
      s.steps = p.base_steps() << j;
      m.settings.push_back(s);
      // The same stream for every eta: the same U, readout, batch and initial point.
      m.runs.push_back(sim::run_replicates(replicate_options(context, "full_batch_gd", 1),
                                           [&](std::size_t, sim::Rng& rng) { return run_identity_experiment(s, rng); })[0]);
    }
    return m;
  }

  Predicted predict(const Params&, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted t;
    t.ratio = portable::pow(2.0, s.order);
    for (std::size_t j = 0; j < m.runs.size(); ++j) {
      t.defects.push_back(predicted_final_defect(m.settings[j], m.runs[j], s.invariant));
    }
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    const std::size_t levels = t.defects.size();
    std::vector<double> ratios, extrapolated;
    for (std::size_t j = 0; j + 1 < levels; ++j) ratios.push_back(t.defects[j] / t.defects[j + 1]);
    for (std::size_t j = 0; j + 1 < ratios.size(); ++j) extrapolated.push_back(2 * ratios[j + 1] - ratios[j]);
    const double rho_last = extrapolated.back(), rho_prev = extrapolated[extrapolated.size() - 2];
    const double rho_prev2 = extrapolated[extrapolated.size() - 3];
    // rho = 2 r_J - r_{J-1}: each ratio carries 2 x relative round-off of its two defects.
    auto rho_roundoff = [&](std::size_t first_defect) {  // the rho built from defects first..first+2
      double relative_roundoff = 0;
      for (std::size_t j = first_defect; j < first_defect + 3; ++j) {
        relative_roundoff = std::max(relative_roundoff, m.runs[j].roundoff_bound / t.defects[j]);
      }
      return 2 * relative_roundoff * (2 * ratios[first_defect + 1] + ratios[first_defect]);
    };
    const double roundoff = rho_roundoff(levels - 3);
    const double eta_last = p.model.eta_w / static_cast<double>(1LL << (levels - 1));

    // Asymptotic range (header): Delta'_(J-1) = q Delta'_J for some q in [3, 16/3] and some differences within the
    // round-off boxes [Delta -+ 2 e] (e the largest round-off of the three finest rho's).
    const double e = std::max({rho_roundoff(levels - 5), rho_roundoff(levels - 4), roundoff});
    const double delta_prev = rho_prev2 - rho_prev, delta_last = rho_prev - rho_last;
    constexpr double q_min = 3, q_max = 16.0 / 3.0;
    const double reach_low = std::min(q_min * (delta_last - 2 * e), q_max * (delta_last - 2 * e));
    const double reach_high = std::max(q_min * (delta_last + 2 * e), q_max * (delta_last + 2 * e));
    const bool asymptotic = reach_low <= delta_prev + 2 * e && delta_prev - 2 * e <= reach_high;
    const double observed_q = delta_prev / delta_last;
    Bias bias{2.0 / 3.0 * std::abs(rho_prev - rho_last),
              fmt::format("O(eta^2) remainder of the extrapolated ratio: (2/3)|rho_(J-1) - rho_J| = (2/3)|{:.6f} - {:.6f}| "
                          "(the remainder is |rho_(J-1) - rho_J|/3 to leading order, doubled for O(eta^3)); asymptotic "
                          "range checked: q = Delta_(J-1)/Delta_J = {:.3g} in [3, 16/3] within round-off",
                          rho_prev, rho_last, observed_q)};
    if (!asymptotic) {
      bias = {10.0, fmt::format("no bound: the ladder is not in its asymptotic range (q = Delta_(J-1)/Delta_J = "
                                "({:.4g})/({:.4g}) = {:.3g}, outside [3, 16/3] beyond round-off {:.2g}; rho_j: {:.5g}, "
                                "{:.5g}, {:.5g}): lower eta_w or raise the budget's ladder",
                                delta_prev, delta_last, observed_q, 2 * e, rho_prev2, rho_prev, rho_last)};
    }

    Verdict verdict;
    verdict.comparisons.push_back(checks::compare(
        fmt::format("extrapolated defect ratio 2 r(eta_J) - r(2 eta_J), r(eta) = D(eta)/D(eta/2), eta_J = {:g}",
                    2 * eta_last),
        {t.ratio, 0.0, "exact: a defect of order eta^p has ratio 2^p"},
        measured_exactly(rho_last, roundoff,
                         "round-off of the three defects (a-priori bound / defect), through 2 r_J - r_{J-1}"),
        bias, {0.2, "spec §7 claim 3: ratio in [1.8, 2.2]"}));

    Plot plot{"defect_against_eta", "Invariant defect |z - kappa/2 sum v^2 - c| at fixed t against eta (log-log)",
              "eta_w", "defect", true, true, {}};
    Curve measured_curve = Curve::points("full-batch GD");
    Curve slope_one = Curve::line("slope 1 through the smallest eta");
    for (std::size_t j = 0; j < levels; ++j) {
      const double eta = m.settings[j].eta_w;
      measured_curve.add(eta, t.defects[j]);
      slope_one.add(eta, t.defects[levels - 1] * eta / m.settings[levels - 1].eta_w);
    }
    plot.add(std::move(slope_one)).add(std::move(measured_curve));
    verdict.plots.push_back(std::move(plot));
    std::string ratio_text, extrapolated_text;
    for (double r : ratios) ratio_text += fmt::format("{:.5f} ", r);
    for (double r : extrapolated) extrapolated_text += fmt::format("{:.5f} ", r);
    verdict.notes.push_back(fmt::format(
        "physical time t = {} ({} steps at eta_0 = {}, {} activation, CE); successive ratios r_j: {}; extrapolated "
        "2 r_(j+1) - r_j: {}",
        p.t.value(), p.base_steps(), p.model.eta_w.value(), sim::joma::to_string(m.settings[0].activation), ratio_text,
        extrapolated_text));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "joma.invariant_defect_first_order_in_eta",
        .family = "joma",
        .paper = "Tian et al., JoMA (ICLR 2024)",
        .source = "specs/joma.md §2, §7 claim 3",
        .tag = Provenance::derived,
        .statement = "Under SGD the exp-attention invariant of Theorem 1 holds up to a defect of order eta at fixed "
                     "physical time: the defect halves when the learning rate halves.",
        .latex = R"(\bigl|z_t-\tfrac{\kappa_z}{2}\sum_k v_k^2-c\bigr| = \tfrac{\kappa_z}{2}\sum_s\sum_k(\Delta v_{k,s})^2 = O(\eta))",
        .simulation = "Full-batch GD on one fixed Dirichlet batch (smooth activation, CE, random orthonormal U) at "
                      "eta_0 / 2^j, j = 0..J-1, to the same physical time.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"coefficient_045", "invariant z - 0.45 kappa_z sum_k v_k^2: its defect does not vanish with eta",
         [](Settings& s) { s.invariant.coefficient = 0.9; }},
        {"coefficient_1_percent", "invariant z - 0.505 kappa_z sum_k v_k^2: its defect does not vanish with eta",
         [](Settings& s) { s.invariant.coefficient = 1.01; }},
        {"second_order", "theory claiming a defect of order eta^2 (ratio 4)", [](Settings& s) { s.order = 2; }},
        {"order_5_percent", "theory claiming a defect of order eta^1.05 (ratio 2.07)", [](Settings& s) { s.order = 1.05; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_invariant_defect_first_order_in_eta() {
  return std::make_unique<InvariantDefectFirstOrderInEta>();
}

}  // namespace dyncheck::checks::joma
