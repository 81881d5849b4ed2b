// Claim joma.softmax_invariant_normalised_correlation  [code setup, derived numbers]
// (specs/joma.md §2 "How well softmax holds (Fig. 2)" and "Softmax, exact decomposition", §7 claim 4)
//
// Theorem 1 (softmax, approximate): z ≈ ẑ + c with \f$\hat z = \tfrac{\kappa_z}{2}\sum_k(v_k^2 - \|v_k\|^2\bar b)\f$.
// Two checks in the draw_figure_2_3.py setup (M_C = 10 + 10, K = 20, d = 30, T = 0.5, lr 0.1, 2000
// full-batch steps, init N(0,1)/100, CE, linear φ; b̄ = x̄ as in the script):
//  (a) exact: the per-step change of z − ẑ equals
//      \f$\frac{\eta_z}{TN}\sum_s(b_s-\bar b)r_s - \frac{\kappa_z}{2}\sum_k(\Delta v_k)^2 + \frac{\kappa_z}{2}\bar b\sum_k\|\Delta v_k\|^2\f$
//      to round-off (a-priori bound as in claim 1);
//  (b) statistical: the mean over n seeds of NC(z, ẑ) at the last step is at least 0.97 (gaussian X) /
//      0.92 (random X), the spec's thresholds ≈ 3 sd/√n below the numpy reference means 0.989 / 0.951.
//      Tolerance: the Student-t half-width of the seed mean (seeds independent; NC is bounded, so the CLT
//      interval is an approximation, said so in the report).
// Never absolute |z − ẑ|: the mismatch is a near-uniform shift that NC ignores by design (§2).
// Mutants (edits of Settings::norm_term_factor, the factor of ẑ's −‖v_k‖² b̄ term; ẑ is evaluated inside the
// shared figure_2_3 experiment, so both re-measure, changes_experiment): dropped_norm_term (factor 0: the
// decomposition then fails) and norm_term_3_percent (factor 0.97, a small error in one term). A common
// rescaling of ẑ is invisible to NC (affine invariance), but a change of one term's weight is not: it moves NC
// (measured at ci: gaussian X 0.99385 → 0.99412, far below the NC comparisons' resolution) and breaks the
// exact decomposition, which keeps the theorem's term.
// Resolution: the decomposition (a) detects a relative error ε in the norm term's coefficient once
// ε · κ_z/2 · max_t |‖V_t‖² − ‖V_0‖²| · max b̄ exceeds its round-off tolerance (≈ 4e-12 at ci); measured, the
// 3% error leaves a residual of 0.149 (≈ 5 per unit ε), so ε ≳ 1e-12 is resolved. The NC comparisons (b)
// resolve a mean NC 0.05 below the threshold; they cannot resolve a coefficient error of a few percent.

#include <fmt/format.h>

#include "claims.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/stats.hpp"
#include "figure_2_3_experiment.hpp"

namespace dyncheck::checks::joma {
namespace {

/// The draw_figure_2_3.py setup is fixed by the script; the claim takes no parameters.
struct Params : ParamSet {};

struct Settings {
  double norm_term_factor = 1;  ///< z_hat's -|v_k|^2 b_bar term times this (evaluated inside the experiment)
};

struct Measured {
  long long steps = 0;
  std::size_t seeds = 0;
  std::vector<Figure23Run> gaussian, random;
};

struct Predicted {
  double gaussian_threshold = 0.97, random_threshold = 0.92;
};

class SoftmaxInvariantNormalisedCorrelation final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  SoftmaxInvariantNormalisedCorrelation() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params&, const Settings& settings, const RunContext& context) const override {
    Measured m;
    m.seeds = context.budget.pick<std::size_t>(2, 32, 64);
    m.steps = context.budget.pick<long long>(100, 2000, 2000);
    for (bool gaussian : {true, false}) {
      (gaussian ? m.gaussian : m.random) = sim::run_replicates(
          replicate_options(context, gaussian ? "gaussian" : "random", m.seeds), [&](std::size_t, sim::Rng& rng) {
            Figure23Setting s;
            s.gaussian = gaussian;
            s.steps = m.steps;
            s.record_every = std::max<long long>(1, m.steps / 100);
            s.norm_term_factor = settings.norm_term_factor;
            return run_figure_2_3(s, rng);
          });
    }
    return m;
  }

  Predicted predict(const Params&, const Measured&, const Settings&, const RunContext&) const override { return {}; }

  Verdict compare(const Params&, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    Plot nc_plot{"normalised_correlation", "NC(z, z_hat) over training (mean over seeds), softmax attention",
                 "step", "NC(z, z_hat)", false, false, {}};
    Plot scatter{"z_against_z_hat", "Final z against z_hat (seed 0, gaussian X)", "z_hat", "z", false, false, {}};
    double worst_ratio = -1;
    const Figure23Run* worst_run = nullptr;
    const double delta = context.false_failure_rate() / 2;  // the two NC means; the decomposition is deterministic
    for (bool gaussian : {true, false}) {
      const std::vector<Figure23Run>& runs = gaussian ? m.gaussian : m.random;
      std::vector<double> nc, nc1, nc2;
      for (const Figure23Run& r : runs) {
        nc.push_back(r.nc_final);
        nc1.push_back(r.nc1_final);
        nc2.push_back(r.nc2_final);
        const double ratio = r.decomposition_bound > 0 ? r.decomposition_residual / r.decomposition_bound : 0.0;
        if (ratio > worst_ratio) {
          worst_ratio = ratio;
          worst_run = &r;
        }
      }
      const stats::Summary summary = stats::summarize(nc);
      const double threshold = gaussian ? t.gaussian_threshold : t.random_threshold;
      verdict.comparisons.push_back(checks::compare(
          fmt::format("mean NC(z, z_hat) at step {} over {} seeds, {} X", m.steps, m.seeds,
                      gaussian ? "gaussian" : "random"),
          {threshold, 0.0,
           fmt::format("spec §7 threshold (numpy reference mean {} +- {} per-seed sd, 20 seeds)",
                       gaussian ? 0.989 : 0.951, gaussian ? 0.014 : 0.037)},
          measured(summary.mean, stats::student_t_half_width(summary, delta),
                   "seeds are independent; NC is bounded in [-1, 1], the CLT is an approximation"),
          {0.0, "none: the threshold already sits about 3 sd/sqrt(n) below the reference mean"},
          {0.05, "detects a mean NC 0.05 below the threshold"}, Relation::at_least));
      Curve mean_curve = Curve::line(fmt::format("{} X (mean of {} seeds)", gaussian ? "gaussian" : "random", m.seeds));
      for (std::size_t i = 0; i < runs[0].times.size(); ++i) {
        double mean = 0;
        for (const Figure23Run& r : runs) mean += r.nc[i] / static_cast<double>(runs.size());
        mean_curve.add(runs[0].times[i], mean);
      }
      nc_plot.add(std::move(mean_curve));
      if (gaussian) {
        Curve points = Curve::points("tokens");
        for (Eigen::Index l = 0; l < runs[0].z_final.size(); ++l) points.add(runs[0].z_hat_final[l], runs[0].z_final[l]);
        scatter.add(std::move(points));
      }
      verdict.notes.push_back(fmt::format(
          "{} X: mean NC(z, z_hat) = {:.4f} (sd {:.4f}), NC(z, z_hat_1) = {:.4f}, NC(z, z_hat_2) = {:.4f}; numpy "
          "reference (20 seeds): {}.",
          gaussian ? "gaussian" : "random", summary.mean, std::sqrt(summary.variance), stats::summarize(nc1).mean,
          stats::summarize(nc2).mean, gaussian ? "0.989 +- 0.014, 0.982, 0.00" : "0.951 +- 0.037, 0.939, 0.41"));
    }
    verdict.comparisons.insert(
        verdict.comparisons.begin(),
        checks::compare(
            "max_t |(z - z_hat)_t - (z - z_hat)_0 - sum of predicted changes|_inf, worst seed",
            {0.0, 0.0, "exact decomposition"},
            measured_exactly(worst_run->decomposition_residual, worst_run->decomposition_bound,
                             "a-priori round-off bound gamma_n (|z| + kappa |V|^2 + sum_s step magnitudes), n = 2(d + "
                             "M_C + K) + 8"),
            {0.0, "none: exact per step"}, {1e-10, "spec §7 claim 4: the decomposition to 1e-10"}, Relation::at_most));
    verdict.notes.push_back(
        "z_hat follows the theorem (sum_k |v_k|^2 with v_k = U_C^T w_k, b_bar = x_bar); the official script uses "
        "|W|_F^2 (including the u_q and null directions) and x_bar, which the spec found to agree in NC to 4 decimals. "
        "C = z(0) - z_hat(0) as in the script.");
    verdict.plots.push_back(std::move(nc_plot));
    verdict.plots.push_back(std::move(scatter));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "joma.softmax_invariant_normalised_correlation",
        .family = "joma",
        .paper = "Tian et al., JoMA (ICLR 2024)",
        .source = "specs/joma.md §2 (Theorem 1 softmax, Fig. 2, exact decomposition), §7 claim 4",
        .tag = Provenance::derived,
        .statement = "With softmax attention the logits stay highly correlated with z_hat = (kappa/2) sum_k (v_k^2 - "
                     "|v_k|^2 b_bar) (Fig. 2 'largely holds' [paper]), and the change of z - z_hat obeys an exact "
                     "per-step decomposition whose leading term is the one JoMA's b_bar approximation drops.",
        .latex = R"(\mathrm{NC}\bigl(z,\ \tfrac{\kappa_z}{2}\textstyle\sum_k(v_k^2-\|v_k\|^2\bar b)+c\bigr)\approx 1)",
        .simulation = "draw_figure_2_3.py setup [code]: M_C = 20 (10 distinct + 10 common), K = 20, d = 30, T = 0.5, "
                      "SGD lr 0.1 on z and W, 2000 full-batch steps, CE, linear phi; n seeds for each X variant.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"dropped_norm_term", "z_hat without the -|v_k|^2 b_bar term (evaluated inside the experiment: re-measured)",
         [](Settings& s) { s.norm_term_factor = 0; }, true},
        {"norm_term_3_percent",
         "z_hat's -|v_k|^2 b_bar term 3% too small (a small error in one term; not an affine map of z_hat, so it "
         "changes NC; re-measured)",
         [](Settings& s) { s.norm_term_factor = 0.97; }, true},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_softmax_invariant_normalised_correlation() {
  return std::make_unique<SoftmaxInvariantNormalisedCorrelation>();
}

}  // namespace dyncheck::checks::joma
