// Claim scb.proximal_beats_sgd_at_small_batch  [paper]  (specs/scb.md §7: Fig. p.8, OpenReview)
//
// Statement [paper]: with real batched gradients at the paper's batch sizes (64, 128, 256), the
//   l1-proximal two-stage method converges fast and accurately while vanilla SGD has high variance
//   with a large step and is slow with a small one; "l1 is necessary and beats SGD when the batch is
//   small" (N in [3, 20], T <= 5000, each method at the largest step size that does not diverge).
// Quantified here (the paper gives no number): after the same number of samples, the proximal
//   method's distance to the ground truth is at most 1/advantage of SGD's (advantage = 2 by default:
//   "beats" as at least a factor 2), for the attention and for P, after the final normalisation:
//     d_A = (sum_k |a_k/1'a_k - q_k|^2)^(1/2),   d_P = |V diag(1'V)^-1 - P|_F.
//   Per replicate r the paired difference D_r = d^SGD_r - advantage x d^prox_r of the early-stopped
//   distances (below); claimed E D >= 0.
// Experiment (one cell = N, T, B): a random instance (spec §8: P columns ~ Dirichlet(1), q uniform
//   on Q random positions). Both methods start from the paper's initialisation (V = mu 1', a_k = 1/T)
//   and draw their batches from the same stream (replicate r of "<cell>/runs" for both: the examples
//   are drawn independently of the model, so both see the same samples in the same order) for
//   `steps` steps of B samples.
//   - proximal: spec §3's two-stage algorithm: preconditioned projected SGD (stage 1) for the first
//     stage_one_fraction of the steps, then the stage-1 step followed by the soft threshold
//     a <- sign(a) max(|a| - eta_A lambda/mu_k, 0) (stage 2, sim::scb::stage2_prox_sgd_step);
//     lambda = kappa K_P mu_min/(2Q), the shape of Lemma E.4's lambda (spec §4.5: lambda ~ eps K_P
//     mu_min/Q), kappa = lambda_fraction; eta = eta_A = s.
//   - SGD: vanilla minibatch SGD on V and A (sim::scb::plain_sgd_step), eta = eta_A = s.
//   Step size (the paper's rule, "the largest learning rate without divergence"): s is the largest
//   value of the grid 2^j, j = 4, 3, ..., -12, for which a pilot of 4 replicates (their own stream,
//   independent of the compared replicates) of the whole run does not diverge; divergence: a
//   non-finite entry, or an entry of V or A larger than 10 in absolute value, at any step (the ground
//   truth and the initialisation have entries in [0, 1]; normalised columns sum to 1).
//   Early stopping (the paper's: "the loss converges while the distance to the ground truth eventually
//   increases ... hence early stopping plus final normalization"; its criterion is not known): each
//   run's distance is the smallest over 41 evenly spaced checkpoints, for both methods alike (an
//   oracle stopping time, the same rule for both); the last step's means are reported beside it, and
//   the curves against samples are plotted (mean and Student-t band, both methods).
// Tolerance: one-sided. D-bar >= -h with h the one-sided Student-t bound of the mean of R paired
//   differences at the comparison's share (two-sided half-width at 2 x share); no bias term (the
//   statement is about the finite-sample methods themselves, nothing is approximated).
// Resolution: a quarter of the mean SGD distance (an advantage smaller by that much must show).
// Mutant: lambda_zero (changes the experiment: lambda = 0 on the proximal side, spec §7 "l1 is
//   necessary"); without the threshold the off-support noise stays and the factor is lost, so the
//   comparison must FAIL.
// Budgets: ci runs one small cell (N = 3, T = 100, B = 64, 1000 steps, 24 replicates); full runs the
//   paper's grid N in {3, 10, 20} x T in {100, 1000, 5000} x B in {64, 128, 256} (27 cells, 16
//   replicates each, the share split over the cells); the verdict notes list the cells where the
//   statement holds and where it does not (a finding, not a failure to hide). smoke: one cell,
//   20 steps, 3 replicates (plumbing).
// Cost: refused up front (ParamError on steps) when the cell's runs (replicates x 2 methods + the
//   pilots, at most 2 x 17 x 4) x steps x B x (T + N^2) exceed 2e10 at ci or 2e8 at smoke.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "claims.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/sim/replicates.hpp"
#include "dyncheck/sim/scb/optimizers.hpp"
#include "dyncheck/sim/scb/sampler.hpp"
#include "finite_sample_support.hpp"
#include "params.hpp"

namespace dyncheck::checks::scb {
namespace {

constexpr int grid_top = 4, grid_bottom = -12;  // step sizes 2^j
constexpr std::size_t pilot_replicates = 4;
constexpr double divergence_bound = 10;
constexpr int checkpoints = 40;
constexpr int extra_halvings = 3;  // step-downs after a compared run diverges

struct Params : ParamSet {
  Vocabulary vocabulary{this};
  Int T{this, "T", 100, closed(8, 5000), "context length"};
  Support support{this, "support size of every q^(k), at most T/4", 2};
  Int B{this, "B", 64, closed(1, 4096), "batch size (the paper's: 64, 128, 256)"};
  Int steps{this, "steps", 1000, closed(10, 100000), "steps of both methods (samples = steps x B)"};
  Real stage_one_fraction{this, "stage_one_fraction", 0.5, closed(0.1, 0.9),
                          "fraction of the proximal method's steps spent in stage 1 (no threshold)"};
  Real lambda_fraction{this, "lambda_fraction", 0.25, open_closed(0, 1),
                       "kappa: lambda = kappa K_P mu_min / (2 Q) (as scb.stage_two_l1_error_flat_in_T)"};
  Real advantage{this, "advantage", 2, closed(1, 10),
                 "claimed factor: proximal distance x advantage <= SGD distance (the paper's 'beats')"};

  static double work_max(const Budget& budget) {
    return budget.pick<double>(2e8, 2e10, std::numeric_limits<double>::infinity());
  }
  static std::size_t replicates(const Budget& budget) { return budget.pick<std::size_t>(3, 24, 16); }
  long long steps_at(const Budget& budget) const {
    return budget.level == BudgetLevel::smoke ? std::min<long long>(20, steps) : steps.value();
  }
  /// The cell's largest cost: replicates x 2 methods plus every pilot of the grid for both.
  double cell_work(const Budget& budget, int N, int T_cell, long long B_cell) const {
    const double runs = 2.0 * static_cast<double>(extra_halvings + 1) * static_cast<double>(replicates(budget)) +
                        2.0 * static_cast<double>(grid_top - grid_bottom + 1) * static_cast<double>(pilot_replicates);
    return runs * static_cast<double>(steps_at(budget)) * static_cast<double>(B_cell) *
           (static_cast<double>(T_cell) + static_cast<double>(N) * N);
  }

  void check(const Budget& budget) const override {
    require_sparsity(support.Q, T);
    if (budget.level == BudgetLevel::full) {
      require(4 * support.Q <= 100, "Q", "must be at most 25 at the full budget (the grid's smallest T is 100)");
      return;
    }
    const double work = cell_work(budget, vocabulary.N.as_int(), T.as_int(), B);
    if (work > work_max(budget)) {
      throw ParamError("steps", fmt::format("this cell can need (2 x 4 x replicates + 2 x 17 x 4 pilots) x steps x B x (T + "
                                            "N^2) = {:.3g} sample-token units, more than the {} budget's limit {:.3g}; "
                                            "use fewer steps or a smaller B, T or N",
                                            work, to_string(budget.level), work_max(budget)));
    }
  }
};

/// The experiment's knob (the mutant is a control that changes the experiment).
struct Settings {
  double lambda_scale = 1;  ///< lambda x this on the proximal side (0: no l1)
};

/// d_A and d_P after the final normalisation (a column with zero mass counts as the zero vector).
struct Distances {
  double attention = 0, value = 0;
};

Distances distances(const sim::scb::Instance& instance, const Eigen::MatrixXd& q, const sim::scb::LinearModel& model) {
  Distances d;
  double attention_sq = 0;
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) {
    const double mass = model.A.col(k).sum();
    attention_sq += mass != 0 && std::isfinite(mass) ? (model.A.col(k) / mass - q.col(k)).squaredNorm()
                                                      : q.col(k).squaredNorm();
  }
  d.attention = std::sqrt(attention_sq);
  double value_sq = 0;
  for (Eigen::Index j = 0; j < model.V.cols(); ++j) {
    const double mass = model.V.col(j).sum();
    value_sq += mass != 0 && std::isfinite(mass) ? (model.V.col(j) / mass - instance.P.col(j)).squaredNorm()
                                                  : instance.P.col(j).squaredNorm();
  }
  d.value = std::sqrt(value_sq);
  return d;
}

enum class Method { proximal, sgd };

/// The early-stopped distance of a run: the smallest over its checkpoints.
double early_stopped(const std::vector<double>& trace) { return *std::min_element(trace.begin(), trace.end()); }

/// One run's distances at the checkpoints (checkpoints + 1 values each, the last after the last step),
/// or diverged = true.
struct Trace {
  std::vector<double> attention, value;
  bool diverged = false;
};

struct Cell {
  int N = 0, T = 0;
  long long B = 0, steps = 0;
  double lambda = 0, K_P = 0, mu_min = 0;
  double step_proximal = 0, step_sgd = 0;
  std::vector<Trace> proximal, sgd;  // the compared replicates
  std::vector<long long> checkpoint_steps;
};

struct Measured {
  std::vector<Cell> cells;
  double lambda_scale = 1;  // 0 for the lambda_zero control
};

struct Predicted {};

class ProximalBeatsSgdAtSmallBatch final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  ProximalBeatsSgdAtSmallBatch() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings& settings, const RunContext& context) const override {
    Measured m;
    m.lambda_scale = settings.lambda_scale;
    struct CellSpec {
      int N, T;
      long long B;
    };
    std::vector<CellSpec> specs;
    if (context.budget.level == BudgetLevel::full) {
      for (int N : {3, 10, 20}) {
        for (int T : {100, 1000, 5000}) {
          for (long long B : {64LL, 128LL, 256LL}) specs.push_back({N, T, B});
        }
      }
    } else {
      specs.push_back({p.vocabulary.N.as_int(), p.T.as_int(), p.B.value()});
    }
    for (const CellSpec& spec : specs) m.cells.push_back(run_cell(p, context, spec.N, spec.T, spec.B, m.lambda_scale));
    return m;
  }

  Predicted predict(const Params&, const Measured&, const Settings&, const RunContext&) const override { return {}; }

  Verdict compare(const Params& p, const Measured& m, const Predicted&, const RunContext& context) const override {
    Verdict verdict;
    const double delta = context.false_failure_rate() / (2.0 * static_cast<double>(m.cells.size()));
    const double advantage = p.advantage;
    std::vector<std::string> holds, fails, undecided;
    for (const Cell& c : m.cells) {
      const std::string cell = fmt::format("N = {}, T = {}, B = {}", c.N, c.T, c.B);
      bool all_pass = true, any_fail = false;
      for (const bool attention : {true, false}) {
        std::vector<double> diff, sgd_final, prox_final, final_sgd, final_prox;
        for (std::size_t r = 0; r < c.proximal.size(); ++r) {
          const Trace& a = c.proximal[r];
          const Trace& b = c.sgd[r];
          // Early stopping: the smallest distance over the checkpoints (of each run and quantity).
          const double dp = early_stopped(attention ? a.attention : a.value);
          const double ds = early_stopped(attention ? b.attention : b.value);
          final_sgd.push_back(attention ? b.attention.back() : b.value.back());
          final_prox.push_back(attention ? a.attention.back() : a.value.back());
          require_finite(dp, "proximal distance");
          require_finite(ds, "SGD distance");
          diff.push_back(ds - advantage * dp);
          sgd_final.push_back(ds);
          prox_final.push_back(dp);
        }
        const stats::Summary s = stats::summarize(diff);
        const stats::Summary s_sgd = stats::summarize(sgd_final);
        const stats::Summary s_prox = stats::summarize(prox_final);
        // One-sided at delta: the two-sided half-width at 2 delta.
        stats::HalfWidth h = stats::student_t_half_width(s, 2 * delta);
        h.delta = delta;
        h.reason = fmt::format("one-sided Student-t bound of the mean of {} paired differences at {:.3g} (two-sided "
                               "half-width at twice that)",
                               s.n, delta);
        Comparison comparison = checks::compare(
            fmt::format("{}: E[d_SGD - {} d_prox] of {}, early-stopped within {} samples (means: SGD {:.4g}, proximal "
                        "{:.4g}; at the last step {:.4g}, {:.4g})",
                        cell, advantage, attention ? "the attention" : "P", c.steps * c.B, s_sgd.mean, s_prox.mean,
                        stats::summarize(final_sgd).mean, stats::summarize(final_prox).mean),
            {0, 0, "the claim: SGD's distance is at least advantage x the proximal method's"}, measured(s.mean, h),
            {0, "none: the statement is about the finite-sample methods themselves"},
            {0.25 * s_sgd.mean, "a quarter of SGD's mean distance"}, Relation::at_least);
        const Outcome o = comparison.outcome();
        all_pass = all_pass && o == Outcome::pass;
        any_fail = any_fail || o == Outcome::fail;
        verdict.comparisons.push_back(std::move(comparison));
      }
      (any_fail ? fails : all_pass ? holds : undecided).push_back(cell);
    }
    auto join = [](const std::vector<std::string>& v) {
      std::string out;
      for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
      return out.empty() ? std::string("none") : out;
    };
    verdict.notes.push_back(fmt::format("The statement (advantage {}) holds at: {}. It does not hold at: {}. Undecided at "
                                        "this budget: {}.",
                                        advantage, join(holds), join(fails), join(undecided)));
    for (const Cell& c : m.cells) {
      verdict.notes.push_back(fmt::format(
          "Cell N = {}, T = {}, B = {}: {} steps; K_P = {:.4g}, mu_min = {:.3g}, lambda = {:.4g}; step sizes (largest "
          "non-diverging of 2^j, j = {}..{}): proximal {:g}, SGD {:g}; {} replicates.",
          c.N, c.T, c.B, c.steps, c.K_P, c.mu_min, c.lambda * m.lambda_scale, grid_top, grid_bottom, c.step_proximal,
          c.step_sgd, c.proximal.size()));
    }
    // Curves of the first cell (ci: the only one): mean distance and Student-t band vs samples.
    for (const Cell& c : m.cells) {
      for (const bool attention : {true, false}) {
        Plot plot{fmt::format("distance_{}_N{}_T{}_B{}", attention ? "attention" : "P", c.N, c.T, c.B),
                  fmt::format("distance to the ground truth of {} (N = {}, T = {}, B = {})",
                              attention ? "the attention" : "P", c.N, c.T, c.B),
                  "samples", attention ? "d_A" : "d_P", false, true, {}};
        for (const Method method : {Method::proximal, Method::sgd}) {
          const std::vector<Trace>& runs = method == Method::proximal ? c.proximal : c.sgd;
          Curve curve = Curve::band(method == Method::proximal ? "proximal (l1)" : "SGD");
          for (std::size_t i = 0; i < c.checkpoint_steps.size(); ++i) {
            std::vector<double> values;
            for (const Trace& t : runs) values.push_back(attention ? t.attention[i] : t.value[i]);
            const stats::Summary s = stats::summarize(values);
            const double h = s.n >= 2 && s.variance > 0 ? stats::student_t_half_width(s, 0.05).value : 0.0;
            curve.add_mean(static_cast<double>(c.checkpoint_steps[i] * c.B), s.mean, h);
          }
          plot.add(std::move(curve));
        }
        verdict.plots.push_back(std::move(plot));
      }
      if (context.budget.level != BudgetLevel::full) break;
    }
    verdict.notes.push_back("Bands: 95% Student-t intervals of the mean over the replicates (for reading only).");
    return verdict;
  }

 private:
  static Trace run_method(const sim::scb::Instance& instance, const sim::scb::Sampler& sampler, const Eigen::MatrixXd& q,
                          Method method, double step, long long steps, long long B, long long stage_one_steps,
                          double lambda, const std::vector<long long>& checkpoint_steps, sim::Rng rng) {
    Trace trace;
    sim::scb::LinearModel model = sim::scb::initial_model(instance);
    sim::scb::SgdWorkspace workspace(instance.N(), instance.T);
    std::size_t next = 0;
    auto record = [&] {
      const Distances d = distances(instance, q, model);
      trace.attention.push_back(d.attention);
      trace.value.push_back(d.value);
    };
    if (checkpoint_steps[next] == 0) record(), ++next;
    for (long long t = 1; t <= steps; ++t) {
      if (method == Method::sgd) {
        sim::scb::plain_sgd_step(model, sampler, B, step, step, rng, workspace);
      } else if (t <= stage_one_steps) {
        sim::scb::stage1_sgd_step(model, instance, sampler, B, step, step, rng, workspace);
      } else {
        sim::scb::stage2_prox_sgd_step(model, instance, sampler, B, step, step, lambda, rng, workspace);
      }
      const double largest = std::max(model.V.cwiseAbs().maxCoeff(), model.A.cwiseAbs().maxCoeff());
      if (!std::isfinite(largest) || largest > divergence_bound) {
        trace.diverged = true;
        return trace;
      }
      if (next < checkpoint_steps.size() && checkpoint_steps[next] == t) record(), ++next;
    }
    return trace;
  }

  Cell run_cell(const Params& p, const RunContext& context, int N, int T, long long B, double lambda_scale) const {
    Cell c;
    c.N = N, c.T = T, c.B = B;
    c.steps = p.steps_at(context.budget);
    const int Q = std::min(p.support.Q.as_int(), T / 4);
    const std::string name = fmt::format("N={}/T={}/B={}", N, T, B);
    const sim::scb::Instance instance = draw_instance(context, {.N = N, .T = T, .Q = Q}, name + "/instance");
    const MeasurementConstants mc = measurement_constants(instance);
    c.K_P = mc.K_P;
    c.mu_min = instance.mu.minCoeff();
    c.lambda = p.lambda_fraction * mc.K_P * c.mu_min / (2.0 * Q);
    const double lambda = c.lambda * lambda_scale;
    const Eigen::MatrixXd q = sim::scb::dense_q(instance);
    const sim::scb::Sampler sampler(instance);
    const auto stage_one_steps = static_cast<long long>(std::llround(p.stage_one_fraction * static_cast<double>(c.steps)));
    for (int i = 0; i <= checkpoints; ++i) c.checkpoint_steps.push_back(c.steps * i / checkpoints);
    c.checkpoint_steps.erase(std::unique(c.checkpoint_steps.begin(), c.checkpoint_steps.end()), c.checkpoint_steps.end());
    // Step sizes: the largest grid value whose pilot does not diverge.
    auto pick_step = [&](Method method) {
      for (int j = grid_top; j >= grid_bottom; --j) {
        const double step = std::ldexp(1.0, j);
        const auto pilots = sim::run_replicates(
            replicate_options(context, fmt::format("{}/pilot/{}/{}", name, method == Method::proximal ? "prox" : "sgd", j),
                              pilot_replicates),
            [&](std::size_t, sim::Rng& rng) {
              return run_method(instance, sampler, q, method, step, c.steps, B, stage_one_steps, lambda,
                                c.checkpoint_steps, rng)
                  .diverged;
            });
        if (std::none_of(pilots.begin(), pilots.end(), [](bool d) { return d; })) return step;
      }
      throw std::runtime_error(fmt::format("{}: every step size of the grid down to 2^{} diverges", name, grid_bottom));
    };
    // The compared replicates: both methods on the same stream "<cell>/runs" (replicate r's generator
    // is the same for both, and the examples are drawn independently of the model). A compared run
    // that diverges at the pilot's step (the pilot's 4 replicates are a finite check) lowers that
    // method's step by one grid point, at most extra_halvings times.
    auto compared = [&](Method method, double& step) {
      for (int halving = 0;; ++halving) {
        const auto runs = sim::run_replicates(
            replicate_options(context, name + "/runs", Params::replicates(context.budget)),
            [&](std::size_t, sim::Rng& rng) {
              return run_method(instance, sampler, q, method, step, c.steps, B, stage_one_steps, lambda,
                                c.checkpoint_steps, rng);
            });
        if (std::none_of(runs.begin(), runs.end(), [](const Trace& t) { return t.diverged; })) return runs;
        if (halving == extra_halvings) {
          throw std::runtime_error(fmt::format("{}: compared runs of the {} method still diverge at step {:g}", name,
                                               method == Method::proximal ? "proximal" : "SGD", step));
        }
        step /= 2;
      }
    };
    c.step_proximal = pick_step(Method::proximal);
    c.step_sgd = pick_step(Method::sgd);
    c.proximal = compared(Method::proximal, c.step_proximal);
    c.sgd = compared(Method::sgd, c.step_sgd);
    return c;
  }

  static ClaimInfo claim_info() {
    return {
        .id = "scb.proximal_beats_sgd_at_small_batch",
        .family = "scb",
        .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
        .source = "specs/scb.md §7 (Fig. p.8; OpenReview: N in [3, 20], T <= 5000, batches 64/128/256, the largest "
                  "non-diverging step)",
        .tag = Provenance::paper,
        .statement = "At small batches the l1-proximal two-stage method ends closer to the ground truth than vanilla "
                     "SGD (by the factor 'advantage'), for the attention and for P, each method at the largest "
                     "non-diverging step size, from the same initialisation on the same samples.",
        .latex = R"(\mathbb E\big[d^{\mathrm{SGD}} - c\, d^{\mathrm{prox}}\big] \ge 0,\quad d \in \{d_A, d_P\})",
        .simulation = "Per cell: one random instance; pilots pick each method's step on the grid 2^j; R replicates "
                      "of both methods on the same sample streams; distances after the final normalisation.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"lambda_zero", "lambda = 0 on the proximal side (no l1: spec §7 says l1 is necessary)", [](Settings& s) { s.lambda_scale = 0; },
         true},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_proximal_beats_sgd_at_small_batch() {
  return std::make_unique<ProximalBeatsSgdAtSmallBatch>();
}

}  // namespace dyncheck::checks::scb
