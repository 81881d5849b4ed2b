// Claim topic.two_stage_value_before_attention  [paper] qualitative, [derived] mechanism  (specs/topic.md §7, §9 C8)
//
// Trained jointly from a small initialisation (W^K, W^Q, W^V ~ init N(0, 1) entrywise; one-hot embedding and
// identity decoder frozen; key set (C); squared loss under Adam, CE under plain SGD), the one-layer model learns in
// two stages: first W^V forms its block pattern while the attention stays uniform, then the attention becomes
// topic-biased; for both optimizers (spec §7: "SGD and Adam").
//   t_V = first step with c_s - c_d >= 0.9 (its value at the last step)      (block contrast of W^V)
//   t_A = first step with E_hat >= 1.2,  E_hat = mean_b [mean_{c in t(b)} e^{B(c,b)} / mean_{c not in t(b)} e^{B(c,b)}]
// (B = W^K^T W^Q / sqrt(d) the logits of key token c for query word b), and the claim is t_V < t_A in every run.
// This is a QUALITATIVE claim (spec §7): the comparison is an ordering, not a value.
// Mechanism [derived]: dL/dW^K = W^Q G^T / sqrt(d) with G = dL/dB itself proportional to W^V, so at init eps the
// attention gradients are O(eps^2) while dL/dW^V = O(1): the ratio r(eps) = ||grad W^K|| / ||grad W^V|| scales as
// eps^2 (the spec's C8 writes the looser O(eps)); checked as r(eps/256) / r(eps/1024) = 16 on the first batch with
// the initial parameters rescaled (same direction).
// Measured: R runs with their own streams (documents, masks, init), K Adam steps of B documents; c_s - c_d and
// E_hat every 10 steps; the gradient-norm ratio at init eps, eps/4, ..., eps/1024 on run 0's first batch.
// Plain SGD (stream "sgd"): R_S runs (0 smoke, 2 ci, 10 full) of K_S plain-SGD steps (800 ci, 1200 full) with the CE
// loss at the figure setting (T = v = 10, Dir(0.1), N ~ U{100..150}, p_m = 0.15, p_c = p_r = 0.1, batch 40, init
// 0.01); only the step size sgd_lr in [120, 180] and the seeds vary; t_V and t_A read as for Adam. Why CE and why
// only there (session 16, one run each, 1.8 ms per step, CPU time):
//   squared loss: the attention does not move (spec §7): lr 20, E_hat = 1.0000 at step 600; lr 80, init 0.05:
//     E_hat = 1.0017 at step 1500, growing linearly (the flat landscape, Delta L ~ 5e-3);
//   CE (W^V's block grows to c_s - c_d ~ 5.6, so the attention gradient, proportional to W^V, is ~5.6/0.1 times the
//     squared loss's): lr 20: E_hat 1.0003 at step 1000; lr 100: t_V ~ 310, t_A ~ 720; lr 120: t_V ~ 260, t_A
//     ~ 600; lr 150: t_V ~ 210, t_A ~ 480; lr 180: t_V ~ 170, t_A ~ 400, stable to step 1200; lr 200: t_V ~ 160,
//     t_A ~ 360 (read every 50 steps, by interpolation);
//     lr 250: diverges after t_A in one of two seeds (E_hat 519 at step 700: plain SGD on the factorised
//     B = W^K^T W^Q has a step size growing with ||W^K||^2, and the 0.9 x final contrast is then read off a
//     wrecked W^V);
//   away from the figure setting one step size does not serve: T = v = 12, alpha = 0.3, p_c = 0.05, p_r = 0.15,
//     init 0.005, lr 150: t_A > 1200; T = v = 8, alpha = 0.05, p_c = 0.15, p_r = 0.05, p_m = 0.25, init 0.02,
//     lr 250: E_hat overflows at step 200 (t_A ~ 150). So the SGD half is claimed at the figure setting,
//     across seeds and step sizes, and the Adam half over the declared neighbourhood.
//   At ci (session 16, the claim linked into a one-claim driver, not yet through dyncheck): seeds 1, 2 at sgd_lr 150:
//     SGD t_V = 210, t_A = 470-480; seed 3 at 120: 260 / 590-610; seed 4 at 180: 170-180 / 400-420; PASS (the Adam
//     runs and the gradient ratio bit-identical to before); mutants FAIL (margins 33, 4.2e4, 1.4e4). Added cost
//     ~2.3 CPU s (3.2-3.7 -> 5.7-6.1 s for the claim and its mutants, machine load ~12).
// Tolerance:
//   ordering: numerical = 10 steps (both times are read every 10 steps); no statistical term (a per-run
//     statement, checked in every run); resolution 20 steps;
//   scaling: r(eps) = c eps^2 (1 + a eps + b eps^2 + ...), so q_k = r(eps 4^-k) / r(eps 4^-(k+1)) = 16 + x 4^-k +
//     y 16^-k + ...: compared q_4 = r(eps/256)/r(eps/1024); bias = 2 |q_3 - q_4| / 3 (Richardson: the first-order
//     term shrinks 4-fold per pair, |q_4 - 16| = |q_3 - q_4|/3 when it dominates; factor 2 for the rest). That bound
//     fails when the second-order term is comparable (y ~ -0.8 x at the compared level): session 13's fuzz found it at
//     alpha = 0.052, init = 0.0174 with the earlier pair q_2 (q_1, q_2 = 15.9976, 15.9989: bias 8.3e-4 < |q_2 - 16| =
//     1.1e-3); two levels deeper y/x is 16 times smaller (there q_3, q_4 = 15.99968, 15.99992); numerical 1e-9
//     relative (the gradients, down to ~1e-12 against 5e-2, are products without cancellation; measured: q_k - 16
//     keeps shrinking 4-fold down to eps/65536); resolution 10% of 16.
// Mutants: attention_first (t_A < t_V predicted; gross), first_order_attention_gradient (r ~ eps: ratio 4;
// gross) and exponent_1_8 (r ~ eps^1.8: ratio 12.1; small).
// Not checked here: plain SGD with the squared loss (the landscape is flat, the attention does not move within 1e4
// steps at lr 10-30: spec §7; above), plain SGD away from the figure setting (above), and the spec's "t_V ~ 200-400,
// t_A ~ 500" (not a derived value).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include <tuple>

#include "claims.hpp"
#include "adam_runs.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/topic/documents.hpp"
#include "dyncheck/sim/topic/model.hpp"

namespace dyncheck::checks::topic {
namespace {

namespace st = sim::topic;
constexpr long long record_every = 10;

// The ordering is claimed near the authors' figure setting only: the paper calls the two stages sensitive to
// hyperparameters, and far from it they do fail (the fuzz found t_A = 150 < t_V = 190 at p_c = 0.74, where the
// optimal attention ratio 1 + T p_c/p_r = 75 pulls the attention early). The ranges below are that neighbourhood.
struct Params : ParamSet {
  Int T{this, "T", 10, closed(8, 12), "number of topics (near the figure setting)"};
  Int v{this, "v", 10, closed(8, 12), "words per topic (near the figure setting)"};
  Real alpha{this, "alpha", 0.1, closed(0.05, 0.3), "Dirichlet concentration of theta", Scale::log};
  Real p_m{this, "p_m", 0.15, closed(0.1, 0.25), "probability that a position is selected"};
  Real p_c{this, "p_c", 0.1, closed(0.05, 0.15), "probability that a selected position keeps its word"};
  Real p_r{this, "p_r", 0.1, closed(0.05, 0.15), "probability that a selected position becomes a random word"};
  Int N_min{this, "N_min", 100, closed(80, 150), "shortest document"};
  Int N_max{this, "N_max", 150, closed(150, 200), "longest document"};
  // lr up to 1.5e-2 includes the figure setting's Adam lr 0.01 (session 13, ci, seeds 1 and 2: t_V = 40, t_A = 120-130
  // at lr 0.004; t_V = 20, t_A = 50-60 at 0.01; t_V = 10, t_A = 40-50 at 0.015; and the fuzz at three seeds).
  Real lr{this, "lr", 1e-3, closed(7e-4, 1.5e-2), "Adam step size (1e-3: spec §7's reference runs; 1e-2: the figure setting)", Scale::log};
  Real init{this, "init", 0.01, closed(5e-3, 0.02), "initial scale of W^K, W^Q, W^V (times N(0,1))", Scale::log};
  Int batch{this, "batch", 40, closed(20, 60), "documents per step"};
  // The plain-SGD runs (CE, at the figure setting: header) take only their step size from the user.
  Real sgd_lr{this, "sgd_lr", 150, closed(120, 180), "plain-SGD step size (CE loss, figure setting)", Scale::log};

  static std::size_t runs(const Budget& budget) { return budget.pick<std::size_t>(1, 3, 10); }
  static long long steps(const Budget& budget) { return budget.pick<long long>(250, 700, 3000); }
  static std::size_t sgd_runs(const Budget& budget) { return budget.pick<std::size_t>(0, 2, 10); }
  static long long sgd_steps(const Budget& budget) { return budget.pick<long long>(800, 800, 1200); }

  void check(const Budget& budget) const override {
    require(N_min.value() <= N_max.value(), "N_max", fmt::format("must be >= N_min = {}", N_min.value()));
    // Cost per step ~ B (N_max + 5 x 3 V x 40) + 3 D^3, measured ~3 ms at the defaults (4e7 of these per second... ).
    const double V = static_cast<double>(T.value() * v.value()), D = V + 1;
    const double per_step = static_cast<double>(batch.value()) * (static_cast<double>(N_max.value()) * 40 + 600 * V) + 3 * D * D * D;
    // The Adam runs only: the SGD runs are at the figure setting whatever the parameters (a fixed ~1.8 ms per step).
    const double work = per_step * static_cast<double>(steps(budget)) * static_cast<double>(runs(budget));
    const double limit = budget.pick(2e9, 1.5e10, 2e11);
    require(work <= limit, "batch", fmt::format("about {:.3g} operations, above the budget's {:.3g}", work, limit));
  }
};

struct Settings {
  double order_sign = 1;  ///< +1: t_V < t_A; -1: t_A < t_V
  double exponent = 2;    ///< r(eps) ~ eps^exponent
};

struct Run {
  std::vector<long long> step;
  std::vector<double> contrast, attention;
  long long t_V = -1, t_A = -1;
  auto exchange_fields() { return std::tie(step, contrast, attention, t_V, t_A); }  // sim::ReplicateExchange
};

struct Measured {
  std::vector<Run> runs;      ///< Adam, squared loss
  std::vector<Run> sgd_runs;  ///< plain SGD, CE
  double ratio[6] = {0, 0, 0, 0, 0, 0};  ///< r(eps 4^-i), i = 0..5
};

struct Predicted {
  double order_sign = 1;
  double scaling = 16;
};

double attention_ratio(const Eigen::MatrixXd& B, int T, int v) {
  const int V = T * v;
  double total = 0;
  for (int b = 0; b < V; ++b) {
    double same = 0, diff = 0;
    for (int c = 0; c < V; ++c) (c / v == b / v ? same : diff) += portable::exp(B(c, b));
    total += (same / v) / (diff / (V - v));
  }
  return total / V;
}

/// Records c_s - c_d of W^V and E_hat every record_every steps into `run`.
auto recorder(Run& run, const st::Structure& s, int T, int v) {
  return [&run, &s, T, v](long long k, const st::Parameters& params) {
    if (k % record_every != 0) return;
    run.step.push_back(k);
    run.contrast.push_back(block_contrast(params.WV, T, v));
    run.attention.push_back(attention_ratio(st::attention_logits(s, params), T, v));
  };
}

/// t_V = first step with c_s - c_d >= 0.9 x its last value; t_A = first step with E_hat >= 1.2 (-1: not reached).
void read_times(Run& run) {
  const double final_contrast = run.contrast.back();
  for (std::size_t i = 0; i < run.step.size(); ++i) {
    if (run.t_V < 0 && run.contrast[i] >= 0.9 * final_contrast) run.t_V = run.step[i];
    if (run.t_A < 0 && run.attention[i] >= 1.2) run.t_A = run.step[i];
  }
}

class TwoStageValueBeforeAttention final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  TwoStageValueBeforeAttention() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const int T = p.T.as_int(), v = p.v.as_int(), V = T * v;
    const st::DocumentLaw law{.T = T, .v = v, .prior = st::TopicPrior::dirichlet, .alpha = p.alpha, .tau = 1,
                              .N_min = p.N_min.as_int(), .N_max = p.N_max.as_int()};
    const st::MaskingLaw masking{.p_m = p.p_m, .p_c = p.p_c, .p_r = p.p_r,
                                 .redraw_if_none = true, .random_over_all_ids = false};
    AdamRunSetup setup{.law = law, .masking = masking, .structure = attention_structure(V, st::Loss::squared),
                       .optimizer = Optimizer::adam, .lr = p.lr, .init = p.init, .batch = p.batch,
                       .steps = Params::steps(context.budget)};
    const st::Structure& s = setup.structure;
    Measured m;
    double ratios[6] = {0, 0, 0, 0, 0, 0};
    m.runs = sim::run_replicates(replicate_options(context, "adam", Params::runs(context.budget)), [&](std::size_t r, sim::Rng& rng) {
      Run run;
      auto gradient_ratios = [&](long long k, const st::Parameters& params, const std::vector<st::MaskedDocument>& docs) {
        if (k != 1 || r != 0) return;
        // The gradient-norm ratio at init eps 4^-i, i = 0..5 (parameters rescaled, same batch).
        double factor = 1;
        for (int i = 0; i < 6; ++i, factor /= 4) {
          st::Parameters scaled = params;
          scaled.WK *= factor;
          scaled.WQ *= factor;
          scaled.WV *= factor;
          const st::Evaluation e = st::evaluate(s, scaled, docs, {}, true);
          ratios[i] = e.gradient.WK.norm() / e.gradient.WV.norm();
        }
      };
      run_adam(setup, {&st::Parameters::WK, &st::Parameters::WQ, &st::Parameters::WV}, rng, gradient_ratios,
               recorder(run, s, T, v));
      read_times(run);
      return run;
    });
    std::copy(std::begin(ratios), std::end(ratios), std::begin(m.ratio));
    // Plain SGD, CE, at the figure setting (T = v = 10, Dir(0.1), N ~ U{100..150}, p_m = 0.15, p_c = p_r = 0.1,
    // batch 40, init 0.01): only the step size and the seeds vary (header).
    const int sgd_T = 10, sgd_v = 10;
    const st::DocumentLaw figure_law{.T = sgd_T, .v = sgd_v, .prior = st::TopicPrior::dirichlet, .alpha = 0.1, .tau = 1,
                                     .N_min = 100, .N_max = 150};
    const st::MaskingLaw figure_masking{.p_m = 0.15, .p_c = 0.1, .p_r = 0.1, .redraw_if_none = true, .random_over_all_ids = false};
    AdamRunSetup sgd_setup{.law = figure_law, .masking = figure_masking,
                           .structure = attention_structure(sgd_T * sgd_v, st::Loss::cross_entropy),
                           .optimizer = Optimizer::sgd, .lr = p.sgd_lr, .init = 0.01, .batch = 40,
                           .steps = Params::sgd_steps(context.budget)};
    m.sgd_runs = sim::run_replicates(replicate_options(context, "sgd", Params::sgd_runs(context.budget)), [&](std::size_t, sim::Rng& rng) {
      Run run;
      run_adam(sgd_setup, {&st::Parameters::WK, &st::Parameters::WQ, &st::Parameters::WV}, rng,
               [](long long, const st::Parameters&, const std::vector<st::MaskedDocument>&) {},
               recorder(run, sgd_setup.structure, sgd_T, sgd_v));
      read_times(run);
      return run;
    });
    return m;
  }

  Predicted predict(const Params&, const Measured&, const Settings& s, const RunContext&) const override {
    return {s.order_sign, portable::pow(4.0, s.exponent)};
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    Verdict verdict;
    auto order = [&](const std::vector<Run>& runs, const char* label) {
      for (std::size_t r = 0; r < runs.size(); ++r) {
        const Run& run = runs[r];
        if (run.t_A < 0) {
          // t_A not reached within K steps: the ordering cannot be read; the comparison is left undecided.
          Comparison c = checks::compare(fmt::format("{}run {}: t_A - t_V (t_A not reached in {} steps)", label, r, run.step.back()),
                                         {0, 0, "ordering"}, measured_exactly(0, 1e9, "t_A undefined"), {0, "none"},
                                         {2 * record_every, "two recording intervals"}, Relation::at_least);
          verdict.comparisons.push_back(c);
          continue;
        }
        const double gap = static_cast<double>(run.t_A - run.t_V);
        verdict.comparisons.push_back(checks::compare(
            fmt::format("{}run {}: sign x (t_A - t_V), t_V = {}, t_A = {}", label, r, run.t_V, run.t_A),
            {0, 0, "the ordering t_V < t_A (sign +1; the mutant's -1)"},
            measured_exactly(t.order_sign * gap, static_cast<double>(record_every),
                             "t_V and t_A are read every 10 steps"),
            {0, "none: a per-run statement"}, {2 * record_every, "two recording intervals"}, Relation::at_least));
      }
    };
    order(m.runs, "");
    order(m.sgd_runs, "SGD (CE) ");
    const double second = m.ratio[3] / m.ratio[4], third = m.ratio[4] / m.ratio[5];
    verdict.comparisons.push_back(checks::compare(
        "r(eps/256) / r(eps/1024), r = ||grad W^K|| / ||grad W^V|| at init",
        {t.scaling, 0, "4^exponent, exponent 2 (attention gradients O(eps^2), value gradient O(1))"},
        measured_exactly(third, 1e-9 * third, "double gradients: relative round-off far below 1e-9"),
        {2 * std::abs(second - third) / 3,
         fmt::format("Richardson: 2 |r(eps/64)/r(eps/256) - r(eps/256)/r(eps/1024)| / 3 (corrections O(eps) shrink ~4-fold "
                     "per pair), with r(eps/64)/r(eps/256) = {:.8g}",
                     second)},
        {1.6, "10% of 16"}));

    Plot plot{"two_stages", "Two stages (run 0): W^V block contrast, then the attention ratio", "step", "value",
              false, false, {}};
    const Run& run = m.runs.front();
    Curve contrast = Curve::points("c_s - c_d of W^V (x 10)"), attention = Curve::points("E_hat (same/other-topic attention)");
    for (std::size_t i = 0; i < run.step.size(); ++i) {
      contrast.add(static_cast<double>(run.step[i]), 10 * run.contrast[i]);
      attention.add(static_cast<double>(run.step[i]), run.attention[i]);
    }
    Curve marks = Curve::points("t_V, t_A");
    if (run.t_V >= 0) marks.add(static_cast<double>(run.t_V), 0.9 * 10 * run.contrast.back());
    if (run.t_A >= 0) marks.add(static_cast<double>(run.t_A), 1.2);
    plot.add(std::move(contrast)).add(std::move(attention)).add(std::move(marks));
    verdict.plots.push_back(std::move(plot));
    if (!m.sgd_runs.empty()) {
      const Run& sgd = m.sgd_runs.front();
      Plot sgd_plot{"two_stages_sgd", "Two stages under plain SGD, CE (run 0): W^V block contrast, then the attention ratio",
                    "step", "value", false, false, {}};
      Curve sgd_contrast = Curve::points("c_s - c_d of W^V"), sgd_attention = Curve::points("E_hat (same/other-topic attention)");
      for (std::size_t i = 0; i < sgd.step.size(); ++i) {
        sgd_contrast.add(static_cast<double>(sgd.step[i]), sgd.contrast[i]);
        sgd_attention.add(static_cast<double>(sgd.step[i]), sgd.attention[i]);
      }
      Curve sgd_marks = Curve::points("t_V, t_A");
      if (sgd.t_V >= 0) sgd_marks.add(static_cast<double>(sgd.t_V), 0.9 * sgd.contrast.back());
      if (sgd.t_A >= 0) sgd_marks.add(static_cast<double>(sgd.t_A), 1.2);
      sgd_plot.add(std::move(sgd_contrast)).add(std::move(sgd_attention)).add(std::move(sgd_marks));
      verdict.plots.push_back(std::move(sgd_plot));
    }
    verdict.notes.push_back(
        "QUALITATIVE claim ([paper], spec §7): t_V = first step with c_s - c_d >= 0.9 x its final value; t_A = first "
        "step with E_hat >= 1.2. Adam runs: squared loss. Plain-SGD runs: CE loss (under the squared loss the "
        "attention does not move within 1e4 SGD steps: flat landscape, spec §7).");
    verdict.notes.push_back(fmt::format("Gradient-norm ratio at init: r(eps 4^-i), i = 0..5 = {:.4g}, {:.4g}, {:.4g}, {:.4g}, "
                                        "{:.4g}, {:.4g} (eps = {:g}); the spec's C8 says O(eps), the mechanism gives O(eps^2).",
                                        m.ratio[0], m.ratio[1], m.ratio[2], m.ratio[3], m.ratio[4], m.ratio[5], p.init.value()));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "topic.two_stage_value_before_attention",
        .family = "topic",
        .paper = "Li, Li, Risteski, How do transformers learn topic structure (ICML 2023)",
        .source = "specs/topic.md §7 and §9 C8 (two-stage dynamics; qualitative [paper], mechanism [derived])",
        .tag = Provenance::paper,
        .statement = "Trained jointly from a small init (Adam; and plain SGD with CE at the figure setting), W^V forms its "
                     "topic blocks before the attention becomes topic-biased (t_V < t_A in every run), because the "
                     "attention gradients are O(eps^2) at init.",
        .latex = R"(t_V<t_A,\qquad \frac{\|\nabla_{W^K}L\|}{\|\nabla_{W^V}L\|}=O(\varepsilon^2))",
        .simulation = "R Adam runs of the one-layer model (sim::topic; W^K, W^Q, W^V trained from init N(0, eps^2); "
                      "one-hot embedding, identity decoder, key set (C), squared loss) on Dir(alpha) documents; and R_S "
                      "plain-SGD runs with the CE loss at the figure setting.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"attention_first", "t_A < t_V (attention before value)", [](Settings& s) { s.order_sign = -1; }},
        {"first_order_attention_gradient", "r(eps) ~ eps: ratio 4", [](Settings& s) { s.exponent = 1; }},
        {"exponent_1_8", "r(eps) ~ eps^1.8: ratio 12.1 (small)", [](Settings& s) { s.exponent = 1.8; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_two_stage_value_before_attention() { return std::make_unique<TwoStageValueBeforeAttention>(); }

}  // namespace dyncheck::checks::topic
