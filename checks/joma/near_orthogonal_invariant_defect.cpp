// Claim joma.near_orthogonal_invariant_defect  [derived]  (issue #4; specs/joma.md §1 Assumption 1)
//
// Theorem 1 needs orthonormal embeddings. With near-orthogonal U, ∂ℓ/∂v_k = U_C^T f δ_k =
// (b + E b + U_C^T u_q) δ_k with E = U_C^T U_C − I, so the per-step identity of claim 1 acquires an
// error linear in the off-diagonal Gram entries, whose typical size is the mean absolute cosine c:
//   \f[ R(c) := \frac{\max_t |I_t - I_0 - P_t|_\infty}{|\tfrac{\kappa_z}{2}\sum_k(v_k^2(T) - v_k^2(0))|_\infty}
//       = A\,c + O(c^2). \f]
// Checked: the mean over replicates of each replicate's least-squares log-log slope of R against c over
// the lowest levels is 1.
// The paper (OpenReview, App. B.1) reports c ≤ 0.1 for Pythia, < 0.05 for BERT/OPT/ViT-H, < 0.17 for
// LLaMA-2-7B; the report gives R at those levels from the measured curve.
// Simulated: minibatch SGD with exp attention (claim 1's setting) on U = normalise(Q + εG) for a
// ladder of ε, R replicates (the independent unit: Q, G, data, initial point). Paired levels: a replicate
// reuses its draws at every ε (common random numbers), so its own slope is a smooth-curve slope and the
// spread of the constant A between replicates cancels.
// The ladder reaches down to ε = 0.000625 at ci (c ≈ 0.0007): the O(c²) curvature moves the slope by
// about b·c over the fit window, so the window sits at the smallest c where the defect is still far above
// round-off (R ≈ 0.02 there against a round-off bound ~1e-12).
// Tolerance on the slope: statistical (Student-t on the mean of the replicates' slopes) + bias (the O(c²)
// curvature: the change of the mean slope when the fit window moves up one level, i.e. twice the c).
// Mutants (edits of Settings::slope): quadratic_in_cosine (a defect growing like c²: slope 2) and
// slope_20_percent (slope 1.2). Resolution 0.1: the comparison is INCONCLUSIVE unless its tolerance is at
// most 0.1, so whenever the claim PASSes the exponent 1.2 lies outside the tolerance and FAILs. Measured
// at ci (96 replicates, lowest 4 levels c in [0.0007, 0.0056]): tolerance 0.04-0.07 at the defaults and at
// the fuzz points (seed 20261122) of eta_w in [3.6e-4, 0.94] and extra_d in [2, 37], i.e. an exponent off by
// about 7% is resolved; smaller errors in the exponent are not.

#include <fmt/format.h>

#include <cmath>

#include "claims.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/checks/stats.hpp"
#include "identity_claim.hpp"

namespace dyncheck::checks::joma {
namespace {

std::vector<double> epsilon_ladder(const Budget& budget) {
  return budget.pick<std::vector<double>>({0.0025, 0.005, 0.01}, {0.000625, 0.00125, 0.0025, 0.005, 0.01, 0.04, 0.08, 0.16},
                                          {0.0003125, 0.000625, 0.00125, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32});
}
std::size_t replicate_count(const Budget& budget) { return budget.pick<std::size_t>(4, 96, 256); }
long long step_count(const Budget& budget) { return budget.pick<long long>(100, 500, 2000); }

struct Params : ParamSet {
  BlockShapeParams shape{this};
  Real eta_w{this, "eta_w", 0.1, open_closed(0, 1), "learning rate of W (eta_z = 1.5 eta_w)", Scale::log};

  /// Refuses shapes whose work (multiply-adds of forward, backward and V = U_C^T W, batch 4, over every level
  /// and replicate) exceeds the budget's limit (2e10 at ci: about a minute on one core).
  void check(const Budget& budget) const override {
    const double m = static_cast<double>(shape.M_C), k = static_cast<double>(shape.K);
    const double d = m + 1 + static_cast<double>(shape.extra_d);
    const double runs = static_cast<double>(epsilon_ladder(budget).size() * replicate_count(budget));
    const double work = runs * static_cast<double>(step_count(budget)) * (4 * d * (2 * k + 2 * m) + m * d * k);
    const double limit = budget.pick(1e9, 2e10, 4e11);
    if (work > limit) {
      throw ParamError("M_C", fmt::format("M_C, K, extra_d: {} runs of {} steps with d = {}, K = {}, M_C = {} cost {:.3g} "
                                          "multiply-adds, above this budget's limit {:.3g}: lower K, M_C or extra_d",
                                          runs, step_count(budget), d, k, m, work, limit));
    }
  }
};

struct Settings {
  double slope = 1;  ///< the relative defect grows like c^slope
};

struct Measured {
  std::vector<double> epsilons, cosine, mean_defect;
  std::size_t replicates = 0;
  long long steps = 0;
  std::vector<std::vector<double>> log_c, log_r;  ///< per level, per replicate
};

struct Predicted {
  double slope = 1;
};

/// Replicate r's least-squares slope of ln R on ln c over levels [first, first + count).
double replicate_slope(const Measured& m, std::size_t r, std::size_t first, std::size_t count) {
  const double n = static_cast<double>(count);
  double mx = 0, my = 0;
  for (std::size_t e = first; e < first + count; ++e) {
    mx += m.log_c[e][r] / n;
    my += m.log_r[e][r] / n;
  }
  double sxx = 0, sxy = 0;
  for (std::size_t e = first; e < first + count; ++e) {
    sxx += (m.log_c[e][r] - mx) * (m.log_c[e][r] - mx);
    sxy += (m.log_c[e][r] - mx) * (m.log_r[e][r] - my);
  }
  return sxy / sxx;
}

/// The replicates' slopes over levels [first, first + count): independent, one per replicate.
stats::Summary slopes(const Measured& m, std::size_t first, std::size_t count) {
  std::vector<double> values;
  for (std::size_t r = 0; r < m.replicates; ++r) values.push_back(replicate_slope(m, r, first, count));
  return stats::summarize(values);
}

class NearOrthogonalInvariantDefect final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  NearOrthogonalInvariantDefect() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    Measured m;
    m.epsilons = epsilon_ladder(context.budget);
    m.replicates = replicate_count(context.budget);
    m.steps = step_count(context.budget);
    const std::size_t levels = m.epsilons.size();
    // Paired levels (common random numbers): replicate r draws Q, G, readout, initial point and every batch
    // from one stream and reuses it at every eps, so its points (ln c_e, ln R_e) lie on one smooth curve
    // and the replicate-to-replicate spread of the constant A cancels in its own slope.
    const std::vector<std::vector<IdentityRun>> runs = sim::run_replicates(
        replicate_options(context, "paired_levels", m.replicates), [&](std::size_t, sim::Rng& rng) {
          std::vector<IdentityRun> per_level;
          for (std::size_t e = 0; e < levels; ++e) {
            sim::Rng level_rng = rng;  // the same draws at every level
            IdentitySetting s;
            s.kernel = sim::joma::AttentionKernel::exp;
            s.tokens = p.shape.M_C.value();
            s.hidden = p.shape.K.value();
            s.extra_dimensions = p.shape.extra_d.value();
            s.eta_w = p.eta_w;
            s.steps = m.steps;
            s.embedding_perturbation = m.epsilons[e];
            per_level.push_back(run_identity_experiment(s, level_rng));
          }
          return per_level;
        });
    for (std::size_t e = 0; e < levels; ++e) {
      std::vector<double> logs, cosines;
      m.log_c.emplace_back();
      m.log_r.emplace_back();
      for (const std::vector<IdentityRun>& replicate : runs) {
        const IdentityRun& r = replicate[e];
        logs.push_back(portable::log(r.worst_residual / r.final_balance));
        cosines.push_back(r.mean_abs_cosine);
        m.log_c.back().push_back(portable::log(r.mean_abs_cosine));
        m.log_r.back().push_back(logs.back());
      }
      m.cosine.push_back(stats::summarize(cosines).mean);
      m.mean_defect.push_back(portable::exp(stats::summarize(logs).mean));
    }
    return m;
  }

  Predicted predict(const Params&, const Measured&, const Settings& s, const RunContext&) const override {
    return {s.slope};
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    const std::size_t fit_levels_count = context.budget.pick<std::size_t>(2, 4, 5);
    const stats::Summary low = slopes(m, 0, fit_levels_count), shifted = slopes(m, 1, fit_levels_count);
    stats::HalfWidth half_width = stats::student_t_half_width(low, context.false_failure_rate());
    half_width.reason = "the replicates' own log-log slopes: " + half_width.reason;

    Verdict verdict;
    verdict.comparisons.push_back(checks::compare(
        fmt::format("mean over replicates of the log-log slope of the relative defect against mean |cos|, lowest {} "
                    "levels (c in [{:.3g}, {:.3g}])",
                    fit_levels_count, m.cosine[0], m.cosine[fit_levels_count - 1]),
        {t.slope, 0.0, "exact: first order in the Gram perturbation"},
        measured(low.mean, half_width,
                 "replicates (own U, data, init; the same draws at every level) are independent"),
        {std::abs(shifted.mean - low.mean),
         fmt::format("O(c) curvature: |mean slope of the fit shifted one level up ({:.4f}) - mean slope|",
                     shifted.mean)},
        {0.1, "half the difference between the claimed slope 1 and the small mutant's slope 1.2"}));

    Plot plot{"defect_against_cosine", "Relative invariant defect against mean |cos| of the embeddings (log-log)",
              "mean |cos|", "max_t |I_t - I_0 - P_t| / |kappa/2 sum_k (v_k^2(T) - v_k^2(0))|", true, true, {}};
    Curve measured_curve = Curve::points(fmt::format("SGD, geometric mean of {} replicates", m.replicates));
    Curve line = Curve::line("slope 1 through the lowest level");
    for (std::size_t e = 0; e < m.cosine.size(); ++e) {
      measured_curve.add(m.cosine[e], m.mean_defect[e]);
      line.add(m.cosine[e], m.mean_defect[0] * m.cosine[e] / m.cosine[0]);
    }
    plot.add(std::move(line)).add(std::move(measured_curve));
    // R at the paper's cosine levels: log-log interpolation between measured levels; beyond the ladder,
    // the slope of the top pair carries it on (said so in the note).
    auto at = [&](double c) {
      std::size_t i = 0;
      while (i + 2 < m.cosine.size() && m.cosine[i + 1] < c) ++i;
      const double slope_here =
          portable::log(m.mean_defect[i + 1] / m.mean_defect[i]) / portable::log(m.cosine[i + 1] / m.cosine[i]);
      return m.mean_defect[i] * portable::pow(c / m.cosine[i], slope_here);
    };
    Curve paper = Curve::points("interpolated at the paper's mean |cos| levels 0.05, 0.1, 0.17");
    for (double c : {0.05, 0.1, 0.17}) paper.add(c, at(c));
    plot.add(std::move(paper));
    verdict.plots.push_back(std::move(plot));
    std::string table;
    for (std::size_t e = 0; e < m.epsilons.size(); ++e) {
      table += fmt::format("eps {:g}: c = {:.4f}, R = {:.3g}; ", m.epsilons[e], m.cosine[e], m.mean_defect[e]);
    }
    verdict.notes.push_back(table);
    const long long d = p.shape.M_C + 1 + p.shape.extra_d;
    verdict.notes.push_back(fmt::format(
        "R is the identity's worst residual over the run divided by the change it balances, |kappa/2 sum_k (v_k^2(T) - "
        "v_k^2(0))|_inf: R ~ 1 means the exact invariant is violated by as much as it moves. [paper] OpenReview App. "
        "B.1: mean |cos| <= 0.1 (Pythia), < 0.05 (BERT, OPT-6.7B, ViT-H), < 0.17 (LLaMA-2-7B). Interpolated on the "
        "measured curve ({} steps, M_C = {}, d = {}): R = {:.3g} at c = 0.05, {:.3g} at c = 0.1, and {:.3g} at c = 0.17 "
        "({}).",
        m.steps, p.shape.M_C.value(), d, at(0.05), at(0.1), at(0.17),
        m.cosine.back() < 0.17
            ? fmt::format("extrapolated: random perturbations in d = {} saturate at mean |cos| = {:.3f}", d, m.cosine.back())
            : std::string("interpolated")));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "joma.near_orthogonal_invariant_defect",
        .family = "joma",
        .paper = "Tian et al., JoMA (ICLR 2024)",
        .source = "issue #4; specs/joma.md §1 Assumption 1 (OpenReview App. B.1)",
        .tag = Provenance::derived,
        .statement = "With near-orthogonal embeddings the exact exp-invariant identity fails by a relative defect "
                     "proportional to the mean absolute cosine similarity of the embeddings.",
        .latex = R"(R(c) = A\,c + O(c^2),\quad c = \overline{|\cos(u_i,u_j)|})",
        .simulation = "Minibatch SGD with exp attention on U = normalise(Q + eps G) for a ladder of eps; R replicates "
                      "per level.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"quadratic_in_cosine", "defect proportional to c^2 (slope 2)", [](Settings& s) { s.slope = 2; }},
        {"slope_20_percent", "defect proportional to c^1.2 (slope 1.2)", [](Settings& s) { s.slope = 1.2; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_near_orthogonal_invariant_defect() {
  return std::make_unique<NearOrthogonalInvariantDefect>();
}

}  // namespace dyncheck::checks::joma
