// Claim joma.linear_case_attention_sparsity  [code setup, derived numbers]  (specs/joma.md §3 Fig. 3, §7 claim 8)
//
// Theorem 2 (linear activation): attention turns sparse on the salient tokens and, unlike the nonlinear
// case, does not bounce back. In the draw_figure_2_3.py CE setup (gaussian X, 20 seeds in the reference):
//  - the mean attention entropy falls from ≈ 2.75 to ≈ 0.65 over 2000 steps;
//  - it is monotone up to 1e-3: its largest rebound above the running minimum is ≤ 3e-4 in the reference;
//    decided as a statement about instances (issue #10): the fraction of instances (seeds: X, z, W
//    drawn) whose rebound exceeds 1e-3 is at most 0.1. "Every seed ≤ 1e-3" (this claim until session
//    13) is not a property of the instance law: the per-instance rebound has a tail (max over 20
//    seeds 1.5e-4 to 7e-4 at seeds 1-20, 1.1e-3 at the fuzz's seed 16708358260196219985, which
//    FAILed), so a maximum over n seeds exceeds any fixed bound at some seeds.
//  - rich get richer: |v_0[0]| / max_{l=1..3} |v_0[l]| at t = 2000 has median ≈ 4.3 (> 2 in 19/20 seeds),
//    although X[0:4, 0] are nearly equal (.128, .124, .112, .095).
// The setup is the script's (figure_2_3_experiment.hpp) and the reference numbers are its numpy run's, so
// the claim has no parameters: any other setting has no reference.
// Tolerances: entropies: Student-t half-width of the difference of our seed mean and the reference's
// 20-seed mean (sd from our seeds) plus the reference's 2-digit rounding (0.005); rebound: the exceedance
// fraction k/n against 0.1 with its one-sided Clopper-Pearson half-width at the comparison's share (exact
// for iid instances; FAIL only when the lower bound of P(rebound > 1e-3) exceeds 0.1: at n = 20 and
// delta ~ 3e-6 that takes k >= 9); ratio: the sample median against 2, no
// statistics (if 19/20 of the population exceed 2, a sample median of n ≥ 16 falls below 2 with
// probability P(Bin(n, 0.05) ≥ n/2) < 1e-9).
// Mutants: rebound_like_nonlinear (a theory predicting the nonlinear drop-then-bounce: a rebound ≥ 0.05 in
// at least 90% of instances; measured 0 of 20, upper Clopper-Pearson bound 0.47 at ci)
// and start_entropy_3_percent (the step-0 entropy 3% too high, 2.83). Resolution: the step-0 entropy is
// resolved to its tolerance, about 0.03 nats at ci (1%); the final one to 0.25 nats (its seed spread).

#include <fmt/format.h>


#include "claims.hpp"
#include "quantiles.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/stats.hpp"
#include "figure_2_3_experiment.hpp"

namespace dyncheck::checks::joma {
namespace {

struct Params : ParamSet {};

/// The theory's knobs; the default is the claim's theory (the spec's numbers).
struct Settings {
  double start_entropy = 2.75, end_entropy = 0.65;
  double rebound = 1e-3;        ///< the largest rebound above the running minimum
  bool rebound_at_least = false;  ///< a theory predicting a bounce of at least `rebound`
  /// The fraction of instances for which the rebound bound holds is at least 1 - this (at_most) or,
  /// for a bounce theory, the fraction with a bounce of at least `rebound` is at least this.
  double rebound_fraction = 0.1;
  double median_ratio = 2;      ///< the median component ratio exceeds this
};

struct Measured {
  std::size_t seeds = 0;
  long long steps = 0;
  std::vector<Figure23Run> runs;
  std::vector<double> start, end, ratios;  ///< ratios sorted
  std::vector<double> rebounds;           ///< per seed
  double rebound = 0, median = 0;
};

using Predicted = Settings;

class LinearCaseAttentionSparsity final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  LinearCaseAttentionSparsity() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params&, const Settings&, const RunContext& context) const override {
    Measured m;
    m.seeds = context.budget.pick<std::size_t>(2, 20, 20);
    m.steps = context.budget.pick<long long>(100, 2000, 2000);
    m.runs = sim::run_replicates(replicate_options(context, "gaussian", m.seeds), [&](std::size_t, sim::Rng& rng) {
      Figure23Setting s;
      s.steps = m.steps;
      s.record_every = std::max<long long>(1, m.steps / 100);
      return run_figure_2_3(s, rng);
    });
    for (const Figure23Run& r : m.runs) {
      m.start.push_back(r.entropy_start);
      m.end.push_back(r.entropy_end);
      m.ratios.push_back(r.component_ratio);
      m.rebound = std::max(m.rebound, r.max_rebound);
      m.rebounds.push_back(r.max_rebound);
    }
    std::sort(m.ratios.begin(), m.ratios.end());
    const std::size_t n = m.seeds;
    m.median = n % 2 == 1 ? m.ratios[n / 2] : (m.ratios[n / 2 - 1] + m.ratios[n / 2]) / 2;
    return m;
  }

  Predicted predict(const Params&, const Measured&, const Settings& s, const RunContext&) const override { return s; }

  Verdict compare(const Params&, const Measured& m, const Predicted& t, const RunContext& context) const override {
    const bool full_length = m.steps == 2000;
    // Shares: the two entropy comparisons (one at smoke) and the rebound fraction.
    const double delta = context.false_failure_rate() / (full_length ? 3 : 2);
    Verdict verdict;
    auto entropy_comparison = [&](const std::string& label, const std::vector<double>& values, double reference,
                                  double resolution, const std::string& resolution_reason) {
      const stats::Summary summary = stats::summarize(values);
      const double n = static_cast<double>(summary.n);
      const double quantile = student_t_upper_quantile(std::max(1.0, n - 1), delta / 2);
      stats::HalfWidth half_width;
      half_width.value = quantile * std::sqrt(summary.variance * (1 / n + 1.0 / 20));
      half_width.method = stats::HalfWidthMethod::student_t;
      half_width.delta = delta;
      half_width.reason = fmt::format(
          "Student-t ({:.0f} dof, delta = {:.2g}) x sd sqrt(1/n + 1/20): our seed mean and the reference's "
          "20-seed mean",
          n - 1, delta);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("mean attention entropy {} ({} seeds)", label, m.seeds),
          {reference, 0.005, "numpy reference (20 seeds), rounded to 2 digits"},
          measured(summary.mean, half_width, "per-seed values are iid; the mean of n of them is close to normal"),
          {0.0, full_length ? "none: same setup and step count as the reference"
                            : "smoke: fewer steps than the reference, the value is not comparable"},
          {resolution, resolution_reason}));
    };
    entropy_comparison("at step 0", m.start, t.start_entropy, 0.05,
                       "detects a 0.05 nats (2%) shift of the step-0 entropy");
    if (full_length) {
      entropy_comparison(fmt::format("at step {}", m.steps), m.end, t.end_entropy, 0.25,
                         "detects a 0.25 nats shift of the final entropy");
    }
    {
      // The fraction of seeds whose rebound exceeds the bound (at_most theory) or reaches it (a bounce
      // theory), with its one-sided Clopper-Pearson half-width at delta (two-sided interval at 1 - 2 delta).
      std::size_t k = 0;
      for (const double r : m.rebounds) k += t.rebound_at_least ? (r >= t.rebound ? 1 : 0) : (r > t.rebound ? 1 : 0);
      const std::size_t n = m.rebounds.size();
      const double fraction = static_cast<double>(k) / static_cast<double>(n);
      const stats::Interval ci = stats::clopper_pearson(k, n, 1 - 2 * delta);
      const double half_width = t.rebound_at_least ? ci.upper - fraction : fraction - ci.lower;
      Measurement measurement{fraction, half_width,
                              fmt::format("one-sided Clopper-Pearson, delta = {:.2g}: {} of {} seeds; exact for iid "
                                          "instances (largest rebound {:.2e})",
                                          delta, k, n, m.rebound),
                              0.0, "", delta};
      verdict.comparisons.push_back(checks::compare(
          t.rebound_at_least
              ? fmt::format("fraction of seeds whose entropy rebounds by at least {:g} above its running minimum",
                            t.rebound)
              : fmt::format("fraction of seeds whose entropy rebounds by more than {:g} above its running minimum",
                            t.rebound),
          {t.rebound_fraction, 0.0,
           t.rebound_at_least ? "a theory predicting a nonlinear-style bounce in most instances"
                              : "spec §7 claim 8: monotone up to 1e-3, for all but a small fraction (0.1) of instances"},
          measurement, {0.0, "none"},
          {0.5, "tells a bound that fails in 10% of instances from one that fails in 60%"},
          t.rebound_at_least ? Relation::at_least : Relation::at_most));
    }
    if (full_length) {
      verdict.comparisons.push_back(checks::compare(
          "median over seeds of |v_0[0]| / max_{l=1..3} |v_0[l]| at the last step",
          {t.median_ratio, 0.0, "spec §7 claim 8 (reference median 4.3, > 2 in 19/20 seeds)"},
          measured_exactly(m.median, 0.0,
                           "sample median; P(median < 2 | 19/20 of the population > 2) < 1e-9 for n >= 16"),
          {0.0, "none"}, {0.0, "a threshold"}, Relation::at_least));
    }
    Plot plot{"attention_entropy", "Mean attention entropy over training (linear activation): no bounce", "step",
              "entropy (nats)", false, false, {}};
    for (std::size_t r = 0; r < std::min<std::size_t>(m.runs.size(), 5); ++r) {
      Curve curve = Curve::line(fmt::format("seed {}", r));
      for (std::size_t i = 0; i < m.runs[r].times.size(); ++i) curve.add(m.runs[r].times[i], m.runs[r].entropy[i]);
      plot.add(std::move(curve));
    }
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format("largest rebound {:.2e}; component ratio median {:.3f}, min {:.3f}, max {:.3f}",
                                        m.rebound, m.median, m.ratios.front(), m.ratios.back()));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "joma.linear_case_attention_sparsity",
        .family = "joma",
        .paper = "Tian et al., JoMA (ICLR 2024)",
        .source = "specs/joma.md §3 (Theorem 2, Fig. 3), §7 claim 8",
        .tag = Provenance::derived,
        .statement = "With linear activation the attention entropy falls monotonically (sparse attention, no "
                     "bounce) and the most salient component of v grows much faster than components of nearly "
                     "equal frequency.",
        .latex = R"(H(b_t)\ \text{non-increasing up to }10^{-3},\quad \mathrm{median}\,\frac{|v_0[0]|}{\max_{l\le3}|v_0[l]|} > 2)",
        .simulation = "draw_figure_2_3.py setup [code], gaussian X, n seeds, 2000 full-batch SGD steps.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"rebound_like_nonlinear", "predicts the nonlinear drop-then-bounce: a rebound of at least 0.05 in at least 90% of instances",
         [](Settings& s) {
           s.rebound = 0.05;
           s.rebound_at_least = true;
           s.rebound_fraction = 0.9;
         }},
        {"start_entropy_3_percent", "the step-0 entropy 3% too high (2.83 instead of 2.75)",
         [](Settings& s) { s.start_entropy = 2.75 * 1.03; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_linear_case_attention_sparsity() { return std::make_unique<LinearCaseAttentionSparsity>(); }

}  // namespace dyncheck::checks::joma
