// Claim joma.hierarchy_learned_bottom_up  [paper]  (specs/joma.md §5, Table 1 [code])
//
// Statement [paper] (JoMA §5 and Table 1): trained on data from a latent hierarchy, a multi-layer
// transformer learns the hierarchy bottom-up: the FFN hidden units of layer 0 represent the lowest latents
// almost perfectly (Table 1: best correlation 0.94-1.00), those of layer 1 the next level less well
// (0.55-0.81), mean +- std over 5 seeds, d = 1024, 10k iterations of batch 128.
//
// Experiment: the authors' generator and model (decoder_only_hier.py at commit 2471901 of
// facebookresearch/luckmatters; sim/joma/hierarchy.hpp, sim/text/hier_model.hpp, libtorch plugin):
// M = 100 tokens (99 leaves, padding 99), L = 30, three latent levels of n_0 = 10, n_1 = 20 latents and
// C = 20 classes, each latent a distinct random p-subset (p = 3) of the level below (Table 1's row
// num_class 20, combinations 3, tokens (10, 20)); a 3-layer post-LN transformer (1 head, no positional
// encoding, causal mask, d_hidden = 4 d), CE on the last position, Adam lr 1e-4, weight decay 1e-4, batch
// 128. Each seed draws its own hierarchy, training labels, evaluation labels and initialisation (the script
// seeds all four with one seed).
//
// The measure (the script's, after training): 1280 evaluation samples; for layer l, Y_l = the FFN hidden
// relu(W_1 u + b_1) max-pooled over the L positions (padding included), [1280 x d_hidden]; X_l = the 0/1
// activation of the level-l latents, [1280 x n_l]; corr[k, h] = <x_k, y_h> / ((|x_k| + 1e-9)(|y_h| + 1e-9))
// after centring each column (the script's zero_mean = True: Pearson's correlation; zero_mean = False, the
// raw cosine, is reported beside it); best_k = max_h corr[k, h]; the level's score s_l = mean_k best_k (our
// reading of Table 1's score0/score1: draw_table_1.py reads them from hier_align.json, which is not
// published; the log prints the sorted best_k).
//
// Decision: per seed D = s_0 - s_1 (paired: both scores come from the same run). The claim: E D > 0. One-
// sided Student-t test over the n seeds at the claim's full share delta = 1e-5: h = t_{n-1}(1 - delta) sd/sqrt(n)
// (the per-seed D are independent: own hierarchy, data and initialisation; the t interval assumes the mean of n
// of them is about normal). PASS when mean D > h (the lower confidence bound is above 0), FAIL when mean D < -h,
// otherwise INCONCLUSIVE (an effect smaller than its own half-width is not resolved). With n = 10 seeds,
// t_9(1 - 1e-5) = 8.10, so h = 2.56 sd; with 6 seeds t_5 = 15.5, h = 6.3 sd.
//
// Mutant latents_shuffled_across_levels: the theory that the level structure carries no information: the
// latents of levels 0 and 1 are pooled and dealt uniformly at random into groups of n_0 (scored at layer 0)
// and n_1 (scored at layer 1). Its predicted gap D' is the expectation over all deals, exactly: each latent
// lands in either group with its share, so D' = mean over all n_0 + n_1 latents of their best correlation at
// layer 0 minus the same at layer 1 (computed per seed from the same trained model). The comparison is then
// D - D' = 0 (the same t half-width): it FAILs when the level assignment matters by more than its half-width.
//
// d_hidden: the script's default hidden_multi_type "d" gives 4 d (the spec reads 4 M; the Table 1 runs' setting is
// not published), a parameter here.
//
// Measured (2026-11-24, master seed 20261122, centred correlation, mean +- sd over seeds):
//   full sizes (d 128, 10k steps) with 3 seeds (10 did not fit the session; 789 CPU s for 3 runs, 26 ms a step):
//     layer 0: 0.988 +- 0.013 (paper 0.94-1.00); layer 1: 0.601 +- 0.014 (paper 0.55-0.81); layer 2 (classes, not
//     in Table 1): 0.686 +- 0.016; D = 0.387 (sd 0.013; INCONCLUSIVE at 3 seeds: t_2(1 - 1e-5) = 224); the models
//     fit the task (class loss 3e-4, accuracy 1.00 in 2 seeds; 0.07 and 0.95 in the third).
//   full with its 10 seeds (session 14, `--budget full --threads 2`, 2626 CPU s of training): PASS, D = 0.394
//     (per seed s_0 0.97-1.00, s_1 0.59-0.62); untrained gap at step 0 0.406 +- 0.088; the mutant not run at full.
//   ci (d 32, 1000 steps, 6 seeds): PASS, D = 0.45; the mutant FAILs with margin 2.13.
//   FINDING: the same scores before training: at step 0, layer 0 0.997 +- 0.001, layer 1 0.618 +- 0.032 (d 128),
//   so training changes neither (-0.009 and -0.017); only layer 2 (the classes) gains (0.566 -> 0.79 early, 0.686
//   at 10k). Table 1's numbers are reproduced by a random network of this width; the report says so.
//
// Sizes: see sizes(). libtorch/OpenBLAS numbers depend on the CPU and the BLAS build (float32 summation
// order): a seed is bit-identical on one machine, not across machines.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <span>
#include <cmath>
#include <numeric>
#include <thread>

#include "claims.hpp"
#include "quantiles.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/sim/joma/hierarchy.hpp"
#include "dyncheck/sim/random/derive_stream.hpp"
#include "dyncheck/sim/text/hier_model.hpp"
#include "dyncheck/sim/text/transformer_lm.hpp"

namespace dyncheck::checks::joma {
namespace {

namespace text = sim::text;
using sim::joma::Hierarchy;

constexpr int levels = 3;  ///< n_0, n_1 latents and the classes (Table 1's hierarchy)

struct Params : ParamSet {
  Int classes{this, "classes", 20, closed(2, 40), "num_class: the top level's latents (Table 1: 20 or 30)"};
  Int latents0{this, "latents0", 10, closed(2, 40), "n_0: level-0 latents, each a p-subset of the leaves (Table 1: 10 or 20)"};
  Int latents1{this, "latents1", 20, closed(2, 60), "n_1: level-1 latents, each a p-subset of level 0 (Table 1: 20 or 30)"};
  Int combinations{this, "combinations", 3, closed(2, 3), "p: units of the level below per latent (Table 1: 2 or 3)"};
  Int vocabulary{this, "vocabulary", 100, closed(20, 400), "M: tokens (M - 1 leaves and the padding token)"};
  Int length{this, "length", 30, closed(27, 64), "L: sequence length; at least p^3 = 27 (a class's largest leaf set)"};
  Int layers{this, "layers", 3, closed(2, 4), "transformer layers (the script's nlayer 3)"};
  Int d{this, "d", 0, closed(0, 1024), "model width; 0: the budget's value (ci 32, full 128; the paper's 1024)"};
  Int hidden_multiple{this, "hidden_multiple", 4, closed(1, 8), "d_hidden = hidden_multiple x d (the script's default 4 d)"};
  Int steps{this, "steps", 0, closed(0, 20000), "Adam steps; 0: the budget's value (ci 1000, full 10000, the paper's)"};
  Int batch{this, "batch", 128, closed(8, 512), "training batch (the paper's 128)"};
  Int seeds{this, "seeds", 0, closed(0, 40), "independent seeds (at least 3); 0: the budget's value (ci 6, full 10)"};
  Real lr{this, "lr", 1e-4, closed(1e-5, 1e-3), "Adam learning rate (the paper's 1e-4; its sweep 1e-5, 1e-4)", Scale::log};
  Real weight_decay{this, "weight_decay", 1e-4, closed(0, 1e-2), "Adam weight decay (L2 in the gradient; the paper's 1e-4)"};
  Int eval_samples{this, "eval_samples", 1280, closed(100, 10000), "evaluation samples (the script's test_batchsize 1280)"};
  Int checkpoints{this, "checkpoints", 10, closed(1, 50), "measurements after step 0 (for the curves)"};
  Int zero_mean{this, "zero_mean", 1, closed(0, 1),
                "the decided correlation: 1 centred (Pearson, the script's zero_mean=True), 0 the raw cosine"};

  void check(const Budget& budget) const override;
};

struct Sizes {
  std::int64_t d, steps, seeds;
};

// Budget values. The paper's d = 1024 costs ~64x our d = 128 per step (the FFN and projections grow as d^2);
// 10k steps x 5 seeds at d = 1024 would take days on 2 cores. Measured CPU time per step (one thread, the class-
// sequence rewriting of hier_model.hpp, 20 classes x 30 tokens): d 32: 3.3 ms, 64: 10 ms, 128: 25 ms, 256: 80 ms.
// full keeps the paper's 10k steps, batch 128 and learning rate, and 10 seeds (twice the paper's 5: the one-sided
// t quantile at 1e-5 falls from t_4 = 23.3 to t_9 = 8.1), at d = 128: 10 x 10k x 25 ms = 2500 CPU s, about 21 min
// on 2 cores. ci: d = 32, 1000 steps, 6 seeds, about 20 CPU s; the gap is resolved there (it is there from the
// start, see the finding in the report), so ci makes the same decision as full, on a smaller model.
Sizes sizes(const Params& p, const Budget& budget) {
  auto pick = [](long long value, std::int64_t fallback) { return value > 0 ? static_cast<std::int64_t>(value) : fallback; };
  return {pick(p.d, budget.pick<std::int64_t>(16, 32, 128)), pick(p.steps, budget.pick<std::int64_t>(20, 1000, 10000)),
          pick(p.seeds, budget.pick<std::int64_t>(3, 6, 10))};
}

// Estimated CPU seconds of one training step (forward and backward of the C class sequences, see
// hier_model.hpp): 6 flops per multiply-add over the projections (3 d^2), the FFN (2 d d_hidden) and the
// attention (2 L d) per token and layer, C L tokens, at 8e10 flop/s (one OpenBLAS thread reached ~1e11 at
// d = 256), plus 3 ms of per-step overhead (d = 32 measured 3.3 ms). Above the measured times by 0-45%.
double step_seconds(std::int64_t d, std::int64_t d_hidden, std::int64_t classes, std::int64_t length, std::int64_t layers) {
  const double macs = static_cast<double>(layers * (3 * d * d + 2 * d * d_hidden + 2 * length * d));
  return static_cast<double>(classes * length) * 6.0 * macs / 8e10 + 3e-3;
}

std::uint64_t choose(std::uint64_t n, std::uint64_t k) {
  if (k > n) return 0;
  std::uint64_t c = 1;
  for (std::uint64_t i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

void Params::check(const Budget& budget) const {
  const Sizes s = sizes(*this, budget);
  const auto p = static_cast<std::uint64_t>(combinations.value());
  if (choose(static_cast<std::uint64_t>(latents0.value()), p) < static_cast<std::uint64_t>(latents1.value())) {
    throw ParamError("latents1", fmt::format("latents1 must be at most C(latents0, combinations) = {} (distinct subsets)",
                                             choose(static_cast<std::uint64_t>(latents0.value()), p)));
  }
  if (choose(static_cast<std::uint64_t>(latents1.value()), p) < static_cast<std::uint64_t>(classes.value())) {
    throw ParamError("classes", fmt::format("classes must be at most C(latents1, combinations) = {} (distinct subsets)",
                                            choose(static_cast<std::uint64_t>(latents1.value()), p)));
  }
  if (static_cast<std::uint64_t>(vocabulary.value() - 1) < p || choose(static_cast<std::uint64_t>(vocabulary.value() - 1), p) < static_cast<std::uint64_t>(latents0.value())) {
    throw ParamError("vocabulary", "vocabulary - 1 leaves must allow latents0 distinct subsets");
  }
  if (s.seeds < 3) throw ParamError("seeds", fmt::format("seeds must be at least 3 (got {})", s.seeds));
  if (s.d < 4) throw ParamError("d", fmt::format("d must be at least 4 (got {})", s.d));
  if (s.steps < 1) throw ParamError("steps", fmt::format("steps must be at least 1 (got {})", s.steps));
  const double seconds = static_cast<double>(s.seeds * s.steps) *
                         step_seconds(s.d, hidden_multiple * s.d, classes, length, layers) / 2.0;
  const double limit = budget.pick(10.0, 150.0, 1800.0);
  if (seconds > limit) {
    throw ParamError("steps", fmt::format("{} seeds x {} steps at d = {} take about {:.0f} s on 2 cores, above the {} "
                                          "budget's {:.0f} s",
                                          s.seeds, s.steps, s.d, seconds, budget.pick("smoke", "ci", "full"), limit));
  }
}

struct Settings {
  bool shuffle_levels = false;  ///< mutant: latents dealt at random into levels 0 and 1
};

struct Run {
  std::vector<std::int64_t> step;
  std::vector<double> class_loss, accuracy;
  /// best[zero_mean][checkpoint][level]: the best correlations of the level's latents with layer level's hiddens.
  std::array<std::vector<std::vector<std::vector<double>>>, 2> best;
  /// pooled_best[zero_mean][layer]: at the last checkpoint, the best correlations of all n_0 + n_1 latents of
  /// levels 0 and 1 with layer 0 and with layer 1 (the mutant's theory).
  std::array<std::array<std::vector<double>, 2>, 2> pooled_best;
};

struct Measured {
  Sizes sizes{};
  std::vector<Run> runs;
  double seconds = 0, cpu_seconds = 0;
  std::string backend;
};

struct Predicted {
  Settings settings;
  std::vector<double> gap;  ///< per seed: the gap D the theory predicts (0: the claim's lower bound)
};

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// The best correlation of each column of x ([labels x k]) with layer `layer`'s pooled hiddens. The pooled hidden
// of a sample is its class's (the model has no dropout), expanded here per evaluation label.
std::vector<double> best_against_layer(const std::vector<std::int64_t>& labels, const text::HierCheckpoint& point,
                                       std::size_t layer, std::int64_t d_hidden, bool zero_mean,
                                       const std::vector<double>& x, std::size_t k) {
  std::vector<double> y;
  y.reserve(labels.size() * static_cast<std::size_t>(d_hidden));
  for (const auto c : labels) {
    const auto* row = point.pooled[layer].data() + c * d_hidden;
    y.insert(y.end(), row, row + d_hidden);
  }
  return sim::joma::best_correlations(x, k, y, static_cast<std::size_t>(d_hidden), zero_mean);
}

// The gap expected when the n_0 + n_1 latents of levels 0 and 1 are dealt uniformly at random into groups of
// n_0 (scored at layer 0) and n_1 (scored at layer 1): every latent is in either group with its share, so the
// expected group means are the means over all latents, exactly (no sampling of deals).
double shuffled_gap(const std::array<std::vector<double>, 2>& pooled_best) {
  return mean_of(pooled_best[0]) - mean_of(pooled_best[1]);
}

class HierarchyLearnedBottomUp final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  HierarchyLearnedBottomUp() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    // Without the libtorch plugin: ERROR naming the install command (InputUnavailable, so ctest shows the
    // claim skipped, as for joma.real_text_entropy_drop_then_bounce).
    if (const auto why = text::torch_unavailable()) throw InputUnavailable(*why);
    Measured m;
    m.sizes = sizes(p, context.budget);
    const auto n = static_cast<std::size_t>(m.sizes.seeds);
    const std::int64_t d_hidden = p.hidden_multiple * m.sizes.d;
    std::vector<Hierarchy> hierarchies;
    std::vector<text::HierModelData> data(n);
    std::vector<text::HierModelConfig> configs(n);
    const std::string id = context.claim_id;
    for (std::size_t s = 0; s < n; ++s) {
      sim::Rng rng = sim::derive_stream(context.seed, id + "/hierarchy", s);
      hierarchies.push_back(sim::joma::make_hierarchy(
          {static_cast<int>(p.vocabulary), static_cast<int>(p.length),
           {static_cast<int>(p.latents0), static_cast<int>(p.latents1), static_cast<int>(p.classes)},
           std::vector<int>(levels, static_cast<int>(p.combinations))},
          rng));
      const Hierarchy& h = hierarchies.back();
      for (const auto& t : h.tokens) data[s].class_tokens.insert(data[s].class_tokens.end(), t.begin(), t.end());
      sim::Rng labels = sim::derive_stream(context.seed, id + "/labels", s);
      data[s].labels = sim::joma::sample_labels(h, static_cast<std::size_t>(m.sizes.steps * p.batch), labels);
      auto& c = configs[s];
      c.vocabulary = p.vocabulary;
      c.length = p.length;
      c.classes = p.classes;
      c.layers = p.layers;
      c.d = m.sizes.d;
      c.d_hidden = d_hidden;
      c.learning_rate = p.lr;
      c.weight_decay = p.weight_decay;
      c.steps = m.sizes.steps;
      c.batch = p.batch;
      c.checkpoints = {0};
      for (std::int64_t k = 1; k <= p.checkpoints; ++k) {
        const std::int64_t step = m.sizes.steps * k / p.checkpoints;
        if (step > c.checkpoints.back()) c.checkpoints.push_back(step);
      }
      c.seed = sim::derive_seed(context.seed, id + "/init", s);
    }
    const unsigned parallel = std::max(1u, context.threads > 0 ? context.threads : std::thread::hardware_concurrency());
    const auto runs = text::train_hier_models(data, configs, parallel);
    for (std::size_t s = 0; s < n; ++s) {
      const Hierarchy& h = hierarchies[s];
      sim::Rng eval = sim::derive_stream(context.seed, id + "/eval", s);
      const auto labels = sim::joma::sample_labels(h, static_cast<std::size_t>(p.eval_samples.value()), eval);
      std::vector<std::vector<double>> indicators;
      for (int l = 0; l < levels; ++l) indicators.push_back(sim::joma::latent_indicators(h, l, labels));
      // The mutant's theory: the latents of levels 0 and 1 pooled, each scored against layer 0 and layer 1.
      const auto n0 = static_cast<std::size_t>(p.latents0.value()), n1 = static_cast<std::size_t>(p.latents1.value());
      std::vector<double> pooled_latents;
      pooled_latents.reserve(labels.size() * (n0 + n1));
      for (std::size_t i = 0; i < labels.size(); ++i) {
        pooled_latents.insert(pooled_latents.end(), indicators[0].begin() + static_cast<std::ptrdiff_t>(i * n0),
                              indicators[0].begin() + static_cast<std::ptrdiff_t>((i + 1) * n0));
        pooled_latents.insert(pooled_latents.end(), indicators[1].begin() + static_cast<std::ptrdiff_t>(i * n1),
                              indicators[1].begin() + static_cast<std::ptrdiff_t>((i + 1) * n1));
      }
      const std::size_t used = std::min<std::size_t>(levels, static_cast<std::size_t>(p.layers.value()));
      Run run;
      for (const auto& point : runs[s].checkpoints) {
        run.step.push_back(point.step);
        require_finite(point.class_loss, "class loss");
        run.class_loss.push_back(point.class_loss);
        run.accuracy.push_back(point.accuracy);
        for (std::size_t z = 0; z < 2; ++z) {
          std::vector<std::vector<double>> per_level;
          for (std::size_t l = 0; l < used; ++l) {
            per_level.push_back(best_against_layer(labels, point, l, d_hidden, z == 1, indicators[l],
                                                   static_cast<std::size_t>(h.spec.latents[l])));
          }
          run.best[z].push_back(std::move(per_level));
        }
      }
      for (std::size_t z = 0; z < 2; ++z) {
        for (std::size_t layer = 0; layer < 2; ++layer) {
          run.pooled_best[z][layer] =
              best_against_layer(labels, runs[s].checkpoints.back(), layer, d_hidden, z == 1, pooled_latents, n0 + n1);
        }
      }
      for (const auto& per_z : run.best) {
        for (const auto& per_point : per_z) {
          for (const auto& per_level : per_point) {
            for (const double b : per_level) require_finite(b, "best correlation");
          }
        }
      }
      m.seconds += runs[s].train_seconds;
      m.cpu_seconds += runs[s].train_cpu_seconds;
      m.backend = runs[s].backend;
      m.runs.push_back(std::move(run));
    }
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted t;
    t.settings = s;
    for (const Run& run : m.runs) {
      const auto& pooled = run.pooled_best[static_cast<std::size_t>(p.zero_mean.value())];
      t.gap.push_back(s.shuffle_levels ? shuffled_gap(pooled) : 0.0);
    }
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    const auto z = static_cast<std::size_t>(p.zero_mean.value());
    const std::size_t n = m.runs.size();
    std::vector<double> D, diff;
    for (std::size_t s = 0; s < n; ++s) {
      const auto& last = m.runs[s].best[z].back();
      D.push_back(mean_of(last[0]) - mean_of(last[1]));
      diff.push_back(D.back() - t.gap[s]);
    }
    const double delta = context.false_failure_rate();
    const stats::Summary summary = stats::summarize(diff);
    const double dof = static_cast<double>(n - 1);
    stats::HalfWidth h;
    h.method = stats::HalfWidthMethod::student_t;
    h.delta = delta;
    h.value = student_t_upper_quantile(dof, delta) * std::sqrt(summary.variance / static_cast<double>(n));
    h.reason = fmt::format("one-sided Student-t: t_{:.0f}(1 - {:.2g}) = {:.3f} x sd {:.4f} / sqrt({})", dof, delta,
                           student_t_upper_quantile(dof, delta), std::sqrt(summary.variance), n);
    const std::string measure = z == 1 ? "centred (Pearson)" : "raw cosine";
    const double float_slack = 1e-5;  // float32 hiddens: relative ~1e-6 in each correlation
    if (!t.settings.shuffle_levels) {
      verdict.comparisons.push_back(checks::compare(
          fmt::format("gap s_0 - s_1 of the best {} correlations, layer 0 vs layer 1 (mean of {} seeds)", measure, n),
          {0.0, 0.0, "the sign the paper states: lower levels represented more strongly"},
          measured(summary.mean, h, "per-seed gaps iid (own hierarchy, data, initialisation)"),
          {float_slack, "float32 hidden activations: ~1e-6 per correlation, 1e-5 allowed"},
          {std::abs(summary.mean), "the effect itself: it must exceed its own half-width (lower bound above 0)"},
          Relation::at_least));
    } else {
      verdict.comparisons.push_back(checks::compare(
          fmt::format("gap s_0 - s_1 minus the gap with the latents dealt at random into the levels (mean of {} seeds)", n),
          {0.0, 0.0, "the mutant's theory: the level assignment does not matter"},
          measured(summary.mean, h, "per-seed differences iid"),
          {float_slack, "float32 hidden activations"},
          {std::abs(summary.mean) + float_slack, "the difference itself"}, Relation::equal));
    }

    // The table beside the paper's.
    auto level_stats = [&](std::size_t zz, std::size_t level, std::size_t point) {
      std::vector<double> v;
      for (const Run& run : m.runs) {
        if (level < run.best[zz][point].size()) v.push_back(mean_of(run.best[zz][point][level]));
      }
      return stats::summarize(v);
    };
    const std::size_t last = m.runs.front().step.size() - 1;
    std::string table = fmt::format(
        "Table 1 beside ours (best correlation of a latent with a max-pooled FFN hidden unit of its level's layer, "
        "mean over latents; mean +- sd over seeds). Paper (d = 1024, 10k steps, 5 seeds, rows num_class {{20, 30}} x p "
        "{{2, 3}} x tokens {{(10,20), (20,30)}}): layer 0 0.94-1.00, layer 1 0.55-0.81. Ours (num_class {}, p {}, tokens "
        "({}, {}), d {}, d_hidden {}, {} steps, batch {}, lr {:g}, {} seeds):",
        p.classes.value(), p.combinations.value(), p.latents0.value(), p.latents1.value(), m.sizes.d,
        p.hidden_multiple * m.sizes.d, m.sizes.steps, p.batch.value(), p.lr.value(), n);
    table += "\n\n| layer / level | paper | ours, centred (after training) | ours, raw cosine (after) | ours, centred at step 0 | ours, raw at step 0 |\n|---|---|---|---|---|---|";
    const auto used = m.runs.front().best[0].back().size();
    for (std::size_t l = 0; l < used; ++l) {
      const auto a = level_stats(1, l, last), b = level_stats(0, l, last), c = level_stats(1, l, 0), e = level_stats(0, l, 0);
      table += fmt::format("\n| {} | {} | {:.3f} +- {:.3f} | {:.3f} +- {:.3f} | {:.3f} +- {:.3f} | {:.3f} +- {:.3f} |", l,
                           l == 0 ? "0.94-1.00" : (l == 1 ? "0.55-0.81" : "not reported"), a.mean,
                           std::sqrt(a.variance), b.mean, std::sqrt(b.variance), c.mean, std::sqrt(c.variance), e.mean,
                           std::sqrt(e.variance));
    }
    verdict.notes.push_back(table);
    std::string per_seed = "Per seed, decided measure (" + measure + "): D = s_0 - s_1:";
    for (std::size_t s = 0; s < n; ++s) {
      const auto& run = m.runs[s];
      per_seed += fmt::format(" {:.3f} (s_0 {:.3f}, s_1 {:.3f}, final class loss {:.3g}, accuracy {:.2f}; shuffled {:.3f});",
                              D[s], mean_of(run.best[z].back()[0]), mean_of(run.best[z].back()[1]),
                              run.class_loss.back(), run.accuracy.back(),
                              shuffled_gap(run.pooled_best[z]));
    }
    verdict.notes.push_back(per_seed);
    // Reported, not decided: the same gap at initialisation, and what training added to each level's score.
    auto report = [&](const std::string& what, const std::vector<double>& v) {
      const auto st = stats::summarize(v);
      const double hw = student_t_upper_quantile(dof, delta) * std::sqrt(st.variance / static_cast<double>(n));
      return fmt::format("{}: {:.3f} +- {:.3f} (sd {:.3f}; the claim's one-sided t half-width)", what, st.mean, hw,
                         std::sqrt(st.variance));
    };
    {
      std::vector<double> gap0, gain0, gain1;
      for (const Run& run : m.runs) {
        gap0.push_back(mean_of(run.best[z].front()[0]) - mean_of(run.best[z].front()[1]));
        gain0.push_back(mean_of(run.best[z].back()[0]) - mean_of(run.best[z].front()[0]));
        gain1.push_back(mean_of(run.best[z].back()[1]) - mean_of(run.best[z].front()[1]));
      }
      verdict.notes.push_back(
          "FINDING (reported, not decided): the gap is already there before training. " +
          report("gap s_0 - s_1 at step 0 (untrained, same seeds)", gap0) + "; " +
          report("training's change of s_0", gain0) + "; " + report("training's change of s_1", gain1) +
          ". A level-0 latent is the OR of p leaf tokens, and a random FFN unit max-pooled over positions already "
          "fires on particular tokens, so random features correlate with it almost perfectly; a level-1 latent needs "
          "a conjunction. Table 1 reports no untrained baseline, so it does not separate learning from this "
          "random-feature baseline; the decision above is the paper's statement (after training), not a proof that "
          "training produced the gap.");
    }
    verdict.notes.push_back(fmt::format(
        "Training: {} runs, {:.0f} s of training wall time in total ({:.0f} s CPU), {}. The batch loss is computed as the "
        "class-count-weighted loss over the {} class sequences (exact: every sample of a class is the same sequence).",
        n, m.seconds, m.cpu_seconds, m.backend, p.classes.value()));
    verdict.notes.push_back(
        "Reproducibility: each run has its own CPU generator and one intra-op thread, so a seed gives bit-identical "
        "numbers on one machine whatever the parallelism; libtorch does not promise the same bits across BLAS builds, "
        "CPU instruction sets or library versions, so these numbers (and any golden file of them) are machine-specific.");

    // Curves: each level's score at its layer against training steps (mean +- sd over seeds).
    Plot plot{"level_scores", fmt::format("Best {} correlation of level-l latents with layer-l FFN units (mean +- sd, {} seeds)", measure, n),
              "Adam step", "mean best correlation", false, false, {}};
    for (std::size_t l = 0; l < used; ++l) {
      Curve band = Curve::band(fmt::format("level {} / layer {}", l, l));
      for (std::size_t k = 0; k <= last; ++k) {
        const auto st = level_stats(z, l, k);
        band.add_mean(static_cast<double>(m.runs.front().step[k]), st.mean, std::sqrt(st.variance));
      }
      plot.add(std::move(band));
    }
    if (z == 1) {
      const double x = static_cast<double>(m.runs.front().step.back());
      plot.add(Curve::points("paper Table 1, layer 0 (range over rows)").add(x, 0.97, 0.94, 1.00));
      plot.add(Curve::points("paper Table 1, layer 1 (range over rows)").add(x, 0.68, 0.55, 0.81));
    }
    verdict.plots.push_back(std::move(plot));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "joma.hierarchy_learned_bottom_up",
        .family = "joma",
        .paper = "Tian et al., JoMA (ICLR 2024)",
        .source = "specs/joma.md §5 (Table 1; decoder_only_hier.py)",
        .tag = Provenance::paper,
        .statement = "[paper] Trained on sequences generated by a random combinatorial latent hierarchy, a 3-layer "
                     "post-LN transformer's layer-0 FFN units represent the level-0 latents more strongly than its "
                     "layer-1 units represent the level-1 latents (best correlation, max-pooled over positions): the "
                     "hierarchy is learned bottom-up (Table 1: 0.94-1.00 vs 0.55-0.81).",
        .latex = R"(\mathbb{E}\,[\bar s_0 - \bar s_1] > 0,\quad \bar s_l = \tfrac1{n_l}\sum_k \max_h \mathrm{corr}(x_k, \max_t z^{(l)}_{h,t}))",
        .simulation = "libtorch: the script's generator (M 100, L 30, latents (10, 20), 20 classes, p 3) and 3-layer "
                      "post-LN transformer (1 head, no positional encoding, d_hidden 4d), Adam lr 1e-4, wd 1e-4, batch "
                      "128; n seeds, each its own hierarchy, data and initialisation.",
        // The golden files keep this claim's structure and verdicts, not its numbers.
        .machine_dependent = "libtorch and OpenBLAS choose their CPU kernels (GEMM blocking, vectorised exp) at run "
                             "time from the instruction set, so the bits of every loss and correlation depend on the "
                             "CPU and the library build; each run has one intra-op thread and its own generator, so "
                             "they do not depend on the number of threads.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"latents_shuffled_across_levels",
         "the level structure carries no information: the latents of levels 0 and 1 dealt at random into the two "
         "levels give the same gap",
         [](Settings& s) { s.shuffle_levels = true; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_hierarchy_learned_bottom_up() { return std::make_unique<HierarchyLearnedBottomUp>(); }

}  // namespace dyncheck::checks::joma
