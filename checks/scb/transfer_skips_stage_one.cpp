// Claim scb.transfer_skips_stage_one  [reconstructed/derived]  (specs/scb.md §4.3 "Transfer", §6
// Thm 4.1, §8 claim 9)
//
// [reconstructed] reading of Theorem 4.1: initialised from a pretrained V with correlation
// α_0 = ⟨V_pre,P⟩_Σ/K_P > 0 (and a = 1/T), β̇ = η_AK_Pα_0 > 0 at once: no 1/T drift is needed and
// the steps to αβ ≥ ½ do not grow with T, while from scratch they grow by ln 10/ln(1+r) per decade.
// Measured: the sim layer's full-matrix population GD (double) for T = 10^d: from V = μ1ᵀ + α_0(P − μ1ᵀ)
// (transfer, α_0 ∈ {alpha0_small, alpha0_large}) and from V = μ1ᵀ (scratch), a = 1/T; steps to
// αβ ≥ threshold (β the common β_k).
// Theory: transfer: the same count for T → ∞ (the 2-D recurrence without drift, ρ̄_∞ = Σ_k μ_k‖q_k‖²),
//   steps_to_product(threshold, ∞, …). Scratch: the escape to α = α*√threshold (on I_c = 0,
//   αβ = α²/α*²), t_lin + δ as in scb.escape_time_log_T, compared as the growth from T_min to T_max.
// Tolerance:
//   transfer: bias = 1 (integer count) + 2 δ(αβ)/Δ(αβ), where δ(αβ) bounds, to first order, the change
//   of the product at the crossing caused by the finite-T terms (the drift η(1−α)/T and the change of
//   ρ̄ by 1/T perturb α by at most η(1 + |α| + |β|)/T per step; propagated with the absolute
//   Jacobians of the T = ∞ trajectory) and Δ(αβ) is the product's last increment before the
//   crossing (factor 2 for the second order); computed from the theory trajectory, not the run;
//   scratch: bias = 1 (two roundings) + the delay's phase errors + Δ(T_min) + Δ(T_max) (as in
//   scb.escape_time_log_T).
// Valid region (checked up front, exit 2): log10_T_max ≥ log10_T_min + 1 (so log10_T_min ≤ 5),
// Q ≤ 10^log10_T_min / 4, the escape from scratch within 5e4 steps (ρ̄ = 1/Q − 1/T is known before
// any draw: q is uniform on its support) and the total work within the budget. A tiny alpha0 makes
// the finite-T shift bound large: that comparison is then INCONCLUSIVE with its reason.
// Mutants (edits of Settings): count_grows_with_log_T: the transfer count of T_min plus
// ln(T/T_min)/ln(1+r) (a stage 1 that transfer did not skip); and the small growth_rate_8_percent:
// the scratch escape's growth rate r 8% too large (about 8% fewer steps per decade: 1.8 steps over
// T = 10^2..10^5 at the defaults, against a tolerance of about 1.1).
// Resolution: half a decade's growth for each transfer count; 0.3 x the predicted growth for the
// scratch difference (its tolerance, about one step, is the smallest error it detects: a growth rate
// off by about 5% at the defaults).
// Where a mutant moves a compared value by less than that comparison's tolerance, the comparison is
// INCONCLUSIVE for it (resolution.hpp): e.g. growth_rate_8_percent at eta_A K_P = 0.42, threshold =
// 0.75 (fuzz seed 12654415402137675319) moves the scratch difference by 1.6 steps against a
// tolerance of 1.83 (the phase errors grow with the threshold).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "claims.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/phases.hpp"
#include "dyncheck/theory/scb/symmetric_2d.hpp"
#include "params.hpp"
#include "resolution.hpp"
#include "theory_instance.hpp"

namespace dyncheck::checks::scb {
namespace {

namespace tscb = theory::scb;

constexpr long long max_steps = 100000;

/// Steps of full-matrix GD until alpha beta >= threshold, from V = mu 1^T + alpha0 (P - mu 1^T), a = 1/T.
long long simulated_steps(const sim::scb::Instance& sim_inst, const tscb::Instance<double>& inst_d, double K_P,
                          double eta, double eta_A_K_P, double alpha0, double threshold) {
  sim::scb::LinearModel model = sim::scb::initial_model(sim_inst);
  model.V += alpha0 * (sim_inst.P - sim_inst.mu * Eigen::RowVectorXd::Ones(sim_inst.N()));
  long long t = 0;
  while (true) {
    const auto state = reduce_model(inst_d, model);
    if (state.alpha * state.beta.mean() >= threshold) return t;
    if (++t > max_steps) throw std::runtime_error("scb.transfer_skips_stage_one: threshold not reached in 1e5 steps");
    sim::scb::population_stage1_step(model, sim_inst, eta, eta_A_K_P / K_P);
  }
}

struct TransferPrediction {
  long long steps;
  double shift_bound;  // 2 delta(alpha beta) / Delta(alpha beta), in steps
};

/// The T -> infinity count and the first-order bound of the finite-T shift (see the header comment).
TransferPrediction transfer_prediction(double threshold, double eta, double rho_bar_inf, double b, double alpha0,
                                       double T) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto steps = tscb::steps_to_product(threshold, inf, eta, rho_bar_inf, b, alpha0, 0.0, 100000);
  if (!steps) throw std::runtime_error("scb.transfer_skips_stage_one: no crossing without drift");
  const auto path = tscb::symmetric_2d_trajectory(tscb::Symmetric2D<double>{alpha0, 0.0}, *steps, eta, rho_bar_inf, b, inf);
  double e_alpha = 0, e_beta = 0;  // first-order bound on |alpha_T - alpha_inf|, |beta_T - beta_inf|
  for (long long s = 0; s < *steps; ++s) {
    const auto& p = path[static_cast<std::size_t>(s)];
    const double g = 1 - p.alpha * p.beta;
    // Jacobian of (alpha, beta) -> step, T = infinity.
    const double j11 = 1 - eta * rho_bar_inf * p.beta * p.beta, j12 = eta * rho_bar_inf * (g - p.alpha * p.beta);
    const double j21 = b * (g - p.alpha * p.beta), j22 = 1 - b * p.alpha * p.alpha;
    const double na = std::abs(j11) * e_alpha + std::abs(j12) * e_beta + eta * (1 + std::abs(p.alpha) + std::abs(p.beta)) / T;
    const double nb = std::abs(j21) * e_alpha + std::abs(j22) * e_beta;
    e_alpha = na;
    e_beta = nb;
  }
  const auto& last = path.back();
  const auto& before = path[path.size() - 2];
  const double product_error = std::abs(last.beta) * e_alpha + std::abs(last.alpha) * e_beta;
  const double increment = last.alpha * last.beta - before.alpha * before.beta;
  return {*steps, 2 * product_error / increment};
}

struct Params : ParamSet {
  Vocabulary vocabulary{this};
  Support support{this, "support size of q^(k), <= T/4 for every T (so <= 10^log10_T_min / 4)"};
  StepSizes steps{this, 0.5, 0.6, 0.5};
  Real threshold{this, "threshold", 0.5, closed(0.05, 0.9), "target product alpha beta"};
  Real alpha0_small{this, "alpha0_small", 0.1, open_closed(0, 1), "smaller pretrained correlation", Scale::log};
  Real alpha0_large{this, "alpha0_large", 0.3, open_closed(0, 1), "larger pretrained correlation", Scale::log};
  Int log10_T_min{this, "log10_T_min", 2, closed(1, 5), "smallest T = 10^log10_T_min; at most log10_T_max - 1"};
  Int log10_T_max{this, "log10_T_max", 5, closed(2, 6),
                  "largest T; at least log10_T_min + 1 (at the smoke budget at most 10 T_min)"};

  long long run_max(const Budget& budget) const {
    return budget.level == BudgetLevel::smoke ? std::min(log10_T_max.value(), log10_T_min + 1) : log10_T_max.value();
  }

  void check(const Budget& budget) const override {
    require(log10_T_max >= log10_T_min + 1, "log10_T_max",
            fmt::format("must be >= log10_T_min + 1 = {}", log10_T_min + 1));
    require_sparsity(support.Q, std::llround(portable::pow(10.0, static_cast<double>(log10_T_min.value()))));
    double work = 0;
    for (long long d = log10_T_min; d <= run_max(budget); ++d) {
      const double T = portable::pow(10.0, static_cast<double>(d));
      const double rho_bar = 1.0 / static_cast<double>(support.Q.value()) - 1.0 / T;
      const double r = tscb::growth_rate(steps.eta.value(), rho_bar, steps.eta_A_K_P.value());
      const double escape = 2 * portable::log(2 * T + 1) / portable::log1p(r) + 10;
      require(escape <= static_cast<double>(max_steps) / 2, "eta",
              fmt::format("times eta_A_K_P must make the escape from scratch at T = {:g}, about 2 ln(2T)/ln(1 + r) = "
                          "{:.3g} steps, at most {} (r = sqrt(eta rho_bar eta_A K_P) = {:.3g})",
                          T, escape, max_steps / 2, r));
      work += 3 * escape * static_cast<double>(vocabulary.N) * (T + static_cast<double>(vocabulary.N));
    }
    const double limit = budget.pick(1e8, 4e9, 4e10);
    require(work <= limit, "log10_T_max",
            fmt::format("with N = {}: the runs need about {:.3g} operations, above the budget's {:.3g}",
                        vocabulary.N.value(), work, limit));
  }
};

struct Settings {
  bool transfer_grows = false;  ///< the transfer count grows like ln T / ln(1 + r) (a stage 1 not skipped)
  double growth_factor = 1.0;   ///< multiplies r in the scratch escape's linear time
  bool operator==(const Settings&) const = default;
};

struct Row {
  double T = 0, rho_bar = 0, K_P = 0;
  std::vector<long long> transfer;
  long long scratch = 0;
};

struct Measured {
  std::vector<double> alpha0s;
  std::vector<Row> rows;
};

struct RowPrediction {
  double rho_bar_inf = 0, r = 0, scratch_linear = 0, scratch_delay = 0, phase = 0, slack = 0;
  std::vector<TransferPrediction> transfer;
  std::vector<double> transfer_value;
};

struct Predicted {
  std::vector<RowPrediction> rows;
  std::shared_ptr<const Predicted> claim;  ///< the claim's theory, when the settings are another's (resolution.hpp)
};

class TransferSkipsStageOne final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  TransferSkipsStageOne() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const long long N = p.vocabulary.N, Q = p.support.Q;
    const double eta = p.steps.eta, b = p.steps.eta_A_K_P;
    Measured m;
    m.alpha0s = {p.alpha0_small, p.alpha0_large};
    for (long long d = p.log10_T_min; d <= p.run_max(context.budget); ++d) {
      const long long T = std::llround(portable::pow(10.0, static_cast<double>(d)));
      const sim::scb::Instance sim_inst = draw_instance(context, "transfer", 0,
                                                        {static_cast<int>(N), static_cast<int>(T), static_cast<int>(Q)});
      const auto inst_d = to_theory<double>(sim_inst);
      const auto c_d = tscb::constants(inst_d);
      Row row;
      row.T = static_cast<double>(T);
      row.rho_bar = c_d.rho_bar;
      row.K_P = c_d.K_P;
      for (double alpha0 : m.alpha0s) {
        row.transfer.push_back(simulated_steps(sim_inst, inst_d, c_d.K_P, eta, b, alpha0, p.threshold));
      }
      row.scratch = simulated_steps(sim_inst, inst_d, c_d.K_P, eta, b, 0.0, p.threshold);
      m.rows.push_back(std::move(row));
    }
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext& context) const override {
    const double eta = p.steps.eta, b = p.steps.eta_A_K_P, threshold = p.threshold;
    Predicted predicted;
    for (const Row& row : m.rows) {
      RowPrediction q;
      q.rho_bar_inf = row.rho_bar + 1 / row.T;
      for (double alpha0 : m.alpha0s) q.transfer.push_back(transfer_prediction(threshold, eta, q.rho_bar_inf, b, alpha0, row.T));
      const double landing = tscb::landing_alpha(eta, row.rho_bar, b);
      const double c = landing * std::sqrt(threshold);
      q.r = tscb::growth_rate(eta, row.rho_bar, b);
      const double r = s.growth_factor * q.r;
      q.scratch_linear = portable::log(2 * c * row.T * r / eta) / portable::log1p(r);
      const auto delay = tscb::escape_delay_discrete(c, eta, row.rho_bar, b);
      q.scratch_delay = delay.delay;
      q.phase = delay.phase_error;
      q.slack = 2 * eta * (1 + q.r) / (q.r * row.T * portable::log1p(q.r) * (1 - threshold));
      predicted.rows.push_back(std::move(q));
    }
    for (std::size_t k = 0; k < predicted.rows.size(); ++k) {
      RowPrediction& q = predicted.rows[k];
      for (std::size_t j = 0; j < m.alpha0s.size(); ++j) {
        q.transfer_value.push_back(
            s.transfer_grows ? static_cast<double>(predicted.rows.front().transfer[j].steps) +
                                   portable::log(m.rows[k].T / m.rows.front().T) / portable::log1p(q.r)
                             : static_cast<double>(q.transfer[j].steps));
      }
    }
    if (!(s == Settings{})) predicted.claim = std::make_shared<const Predicted>(predict(p, m, Settings{}, context));
    return predicted;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    const double threshold = p.threshold;
    Verdict verdict;
    for (std::size_t j = 0; j < m.alpha0s.size(); ++j) {
      for (std::size_t k = 0; k < m.rows.size(); ++k) {
        const Row& row = m.rows[k];
        const RowPrediction& q = t.rows[k];
        verdict.comparisons.push_back(checks::compare(
            fmt::format("transfer from alpha0 = {:g}: steps to alpha beta >= {:g} at T = {:g}", m.alpha0s[j], threshold,
                        row.T),
            {q.transfer_value[j], 0.0, "T-independent count of the drift-free 2-D recurrence (an integer)"},
            measured_exactly(static_cast<double>(row.transfer[j]), 0.0, "an integer step count"),
            {1 + q.transfer[j].shift_bound,
             fmt::format("1 (integer count) + {:.2g} (first-order shift of the crossing by the 1/T terms, x 2)",
                         q.transfer[j].shift_bound)},
            against_claim({0.5 * portable::log(10.0) / portable::log1p(q.r),
                           "half a decade's growth ln 10 / (2 ln(1+r)): a count growing like ln T moves by that much "
                           "per half decade"},
                          shift(t, [&](const Predicted& x) { return x.rows[k].transfer_value[j]; }))));
      }
    }
    const Row &first = m.rows.front(), &last = m.rows.back();
    const RowPrediction &tf = t.rows.front(), &tl = t.rows.back();
    verdict.comparisons.push_back(checks::compare(
        fmt::format("from scratch: steps(T = {:g}) - steps(T = {:g})", last.T, first.T),
        {scratch_growth(t), 1e-12,
         "closed form in double (escape to alpha* sqrt(threshold) on I_c = 0)"},
        measured_exactly(static_cast<double>(last.scratch - first.scratch), 0.0, "integer step counts"),
        {1 + tf.phase + tl.phase + tf.slack + tl.slack,
         "1 (two integer roundings) + phase errors of both delays + Delta(T) terms (see scb.escape_time_log_T)"},
        against_claim({0.3 * portable::log(last.T / first.T) / portable::log1p(tl.r), "0.3 x the predicted growth"},
                      shift(t, [](const Predicted& x) { return scratch_growth(x); }))));

    Plot plot{"transfer", "Steps to alpha beta >= threshold: transfer vs from scratch", "log10 T", "steps", false, false, {}};
    Curve scratch_points = Curve::points("from scratch (full-matrix GD)");
    Curve scratch_line = Curve::line("from scratch: t_lin + delay + 1/2 (theory)");
    std::vector<Curve> transfer_points, transfer_lines;
    for (double alpha0 : m.alpha0s) {
      transfer_points.push_back(Curve::points(fmt::format("transfer, alpha0 = {:g} (full-matrix GD)", alpha0)));
      transfer_lines.push_back(Curve::line(fmt::format("transfer, alpha0 = {:g}: T-independent theory", alpha0)));
    }
    for (std::size_t k = 0; k < m.rows.size(); ++k) {
      const double x = portable::log10(m.rows[k].T);
      scratch_points.add(x, static_cast<double>(m.rows[k].scratch));
      scratch_line.add(x, t.rows[k].scratch_linear + t.rows[k].scratch_delay + 0.5);
      for (std::size_t j = 0; j < m.alpha0s.size(); ++j) {
        transfer_points[j].add(x, static_cast<double>(m.rows[k].transfer[j]));
        transfer_lines[j].add(x, t.rows[k].transfer_value[j]);
      }
    }
    plot.add(std::move(scratch_line)).add(std::move(scratch_points));
    for (std::size_t j = 0; j < m.alpha0s.size(); ++j) {
      plot.add(std::move(transfer_lines[j])).add(std::move(transfer_points[j]));
    }
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(
        "[reconstructed]: Theorem 4.1's statement is not public; the transfer start V = mu 1^T + alpha0 (P - mu 1^T), "
        "a = 1/T is the spec's natural candidate (alpha0 = <V_pre, P>_Sigma / K_P).");
    return verdict;
  }

 private:
  static double scratch_growth(const Predicted& t) {
    const RowPrediction &tf = t.rows.front(), &tl = t.rows.back();
    return (tl.scratch_linear + tl.scratch_delay) - (tf.scratch_linear + tf.scratch_delay);
  }

  /// How far the settings move a compared theory value from the claim's (none for the claim's own).
  template <class Value>
  static std::optional<double> shift(const Predicted& t, Value value) {
    if (!t.claim) return std::nullopt;
    return value(t) - value(*t.claim);
  }

  static ClaimInfo claim_info() {
    return {
        .id = "scb.transfer_skips_stage_one",
        .family = "scb",
        .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
        .source = "specs/scb.md §4.3 (Transfer), §6 (Thm 4.1), §8 claim 9",
        .tag = Provenance::reconstructed,
        .statement = "From a pretrained V with correlation alpha0 > 0 the steps to alpha beta >= 1/2 do not grow with T "
                     "(stage 1 is skipped), while from scratch they grow by ln 10/ln(1 + r) per decade of T.",
        .latex = R"(t_{\alpha\beta\ge 1/2}(\alpha_0 > 0) = O\Bigl(\frac{1}{\eta_AK_P\alpha_0} + \frac{1}{\eta\bar\rho}\Bigr)\ \text{independent of } T)",
        .simulation = "sim::scb full-matrix population GD in double for T = 10^d from V = mu 1^T + alpha0 (P - mu 1^T), "
                      "a = 1/T, and from V = mu 1^T.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"count_grows_with_log_T", "transfer count growing like ln T / ln(1 + r), as from scratch",
         [](Settings& s) { s.transfer_grows = true; }},
        {"growth_rate_8_percent", "the scratch escape's growth rate r 8% too large",
         [](Settings& s) { s.growth_factor = 1.08; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_transfer_skips_stage_one() { return std::make_unique<TransferSkipsStageOne>(); }

}  // namespace dyncheck::checks::scb
