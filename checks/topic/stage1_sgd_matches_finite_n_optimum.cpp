// Claim topic.stage1_sgd_matches_finite_n_optimum  [derived]  (specs/topic.md §5 "(C), finite N", §9 C2)
//
// Plain minibatch SGD on sampled, masked documents, training W^V of the one-layer model with uniform
// attention (W^K = W^Q = 0 frozen), one-hot embedding and identity decoder frozen, key set (C), squared loss
// and ridge lambda ||W^V||^2, converges (iterate average) to the finite-N stage-1 optimum:
//   c_s = c_diag = (g_1/T + (1 - 1/T) g_0)/v,  c_d = (g_1 - g_0)/(v T),  g_k = pi rho_k/(lambda + eta/V + (pi - eta) rho_k),
// eta = E_w[1/U; U >= 1] with U ~ Bin(N - 1, 1 - p_m) keys (not the N -> infinity values), and the averaged W has no
// within-block structure beyond run-to-run noise: the structural within-block spread (noise removed by the
// cross-run product of stage1_sgd.hpp) is below the spec's visibility bound, std < 0.1 (c_s - c_d) (spec §9 C2).
// Simulated: R independent runs (own streams) from W = 0, K steps of B documents (theta ~ Dir(alpha),
// N ~ U{N_min..N_max}, masking p_m, p_c, p_r), the minibatch loss normalised by B E[#selected per document]
// (so the stochastic gradient is unbiased for the population objective J = L + lambda ||W||^2 with documents
// weighted by their selected tokens); the iterates of steps K/2+1..K averaged; per run the block means of the
// average and its within-block standard deviation.
// Theory: the closed form (theory/topic/stage_one.hpp) in 50 and 100 digits.
// Tolerance per block mean:
//   numerical: |50 - 100 digits| + half an ulp, and the double arithmetic of SGD (K steps of sums of ~B N terms:
//     4 K B N_max eps x 2/v, far below the rest);
//   bias: the expected iterate is exactly gradient descent on J (the stochastic gradient is affine in W with
//     W-independent coefficients), E W_k - W* = -W* (I - 2 lr H)^k with H = S + lambda I; W* lives on the topic
//     directions, where H >= h_min = lambda + pi rho_0 (pi >= 1 - p_m^(N_min-1)), so once 2 lr (2/V + lambda) <= 1
//     (checked) every entry of the averaged transient is at most (2/v)(1 - 2 lr h_min)^(K/2);
//   statistical: Student-t half-width over the R runs at the claim's share split over the 4 comparisons (the runs
//     are independent; each block mean averages ~V^2 K/2 correlated entries, close to normal).
//   within-block structure (same-topic and other-topic classes): the mean over the R/2 disjoint run pairs of the
//     cross-run product c_k (unbiased for the structural variance D_k whatever the SGD noise: derivation in
//     stage1_sgd.hpp), compared D_k <= 0 with its Student-t half-width, at the resolution (0.1 (c_s - c_d))^2.
//     This replaces the raw within-block std of session 10, which also counted the SGD noise of the averaged W
//     (sd ~ lambda^(-1/2) at lr = 20, K = 300) and so FAILed below lambda ~ 5e-4 though the optimum is exactly
//     block-constant there too; the range now reaches the spec's sampled-test limit lambda >= 1e-4.
// Resolution: 0.3% of c_s for c_s (eta_dropped moves c_s by 0.7% at the defaults), 1% of c_s for c_diag (V entries
// only), 8% of c_d for c_d (eta_dropped moves it by 8%), and the spread bound itself.
// Mutants: c_d_wrong_sign and ridge_half_convention (lambda/2: 8% on c_s) are gross; eta_dropped (the N -> infinity
// closed form, 0.7% on c_s and 8% on c_d) is the small one, and it is the finite-N effect the claim is about.
// (C1's small mutant eta_all_other_positions moves c_s by 0.1% and c_d by 1.2%: below this claim's resolution at ci.)

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "claims.hpp"
#include "common.hpp"
#include "stage1_sgd.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/topic/documents.hpp"
#include "dyncheck/sim/topic/model.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/topic/stage_one.hpp"

namespace dyncheck::checks::topic {
namespace {

using theory::mp100;
using theory::mp50;
namespace tt = theory::topic;
namespace st = sim::topic;
constexpr double eps = std::numeric_limits<double>::epsilon();
constexpr int checkpoints = 30;

struct Params : ParamSet {
  Vocabulary vocabulary{this, 20, 20};
  Real alpha{this, "alpha", 0.1, closed(0.05, 2), "Dirichlet concentration of theta", Scale::log};
  // Lower end 1e-4 (spec §9 C2: below it the noise amplification cond ~ 1/lambda of sampled tests). Session 10's
  // measured limit 6e-4 came from comparing the raw within-block std, SGD noise included; the structural spread
  // (stage1_sgd.hpp) has no such limit: small ridges only widen its half-width.
  Real lambda{this, "lambda", 1e-3, closed(1e-4, 0.1), "ridge coefficient (>= 1e-4: spec §9 C2's limit for sampled tests)",
              Scale::log};
  Masking masking{this};
  Lengths lengths{this, 400};
  Real lr{this, "lr", 20, open_closed(0, 200), "SGD step size", Scale::log};
  Int batch{this, "batch", 40, closed(1, 200), "documents per step"};

  /// A lower bound on the eigenvalues of H = S + lambda I on the topic directions, where W* lives:
  /// (pi - eta) rho_0 + eta/V >= pi rho_0 (rho_0 <= 1/V), pi >= 1 - p_m^(N_min - 1), rho_0 = 1/(V (1 + T alpha)).
  double h_min() const {
    const double V = static_cast<double>(vocabulary.V()), T = static_cast<double>(vocabulary.T.value());
    double miss = 1;
    for (long long i = 1; i < lengths.N_min.value(); ++i) miss *= p_m_value();
    return lambda + (1 - miss) / (V * (1 + T * alpha));
  }
  double p_m_value() const { return masking.p_m; }

  static std::size_t replicates(const Budget& budget) { return budget.pick<std::size_t>(4, 32, 64); }
  static long long steps(const Budget& budget) { return budget.pick<long long>(240, 300, 6000); }

  void check(const Budget& budget) const override {
    masking.check();
    lengths.check();
    const double V = static_cast<double>(vocabulary.V());
    require(2 * lr * (2 / V + lambda) <= 1, "lr",
            fmt::format("2 lr (2/V + lambda) must be <= 1 (stable mean dynamics), i.e. lr <= {:.4g}", 1 / (2 * (2 / V + lambda))));
    // The transient bound (2/v)(1 - 2 lr h_min)^(K/2) must be far below the resolution (0.3% c_s ~ 3e-3 / v).
    const double K = static_cast<double>(steps(budget));
    require(K / 2 * 2 * lr * h_min() >= 12, "lr",
            fmt::format("lr h_min = {:.3g} too small: K/2 = {:g} steps cannot forget the start (need 2 lr h_min K/2 >= 12)",
                        lr * h_min(), K / 2));
    // Cost: R K B documents of ~N_max tokens plus V (V+1) per step.
    const double work = static_cast<double>(replicates(budget)) * K *
                        (static_cast<double>(batch.value()) * (static_cast<double>(lengths.N_max.value()) * 40 + 30 * V) + 6 * V * V);
    const double limit = budget.pick(5e8, 5e9, 2e11);  // ~4e8 of these per second (measured)
    require(work <= limit, "batch", fmt::format("about {:.3g} operations, above the budget's {:.3g}", work, limit));
  }
};

struct Settings {
  bool eta = true;
  double c_d_sign = 1;
  double ridge_factor = 1;  ///< the closed form's lambda is ridge_factor x lambda
};

struct Measured {
  std::vector<Stage1SgdRun> runs;
  std::vector<long long> record_steps;  ///< the checkpoints of Stage1SgdRun::checkpoint_means
  double bias = 0;
  double arithmetic = 0;
};

struct Predicted {
  double same = 0, diff = 0, same_error = 0, diff_error = 0;
  double same_infinite = 0;
};

template <class S>
tt::BlockValues<S> closed_form(const Params& p, const Settings& s, bool finite) {
  const int T = p.vocabulary.T.as_int(), v = p.vocabulary.v.as_int();
  const auto m = tt::dirichlet_moments<S>(T, S(p.alpha.value()));
  const tt::LengthStatistics<S> length =
      tt::length_statistics<S>(p.lengths.N_min.as_int(), p.lengths.N_max.as_int(), S(p.masking.p_m.value()));
  tt::BlockValues<S> b = tt::excluded_keys_closed_form<S>(T, v, tt::rho_topic(m, v), S(p.lambda.value()) * S(s.ridge_factor),
                                                          finite && s.eta ? &length : nullptr);
  b.diff *= S(s.c_d_sign);
  return b;
}

class Stage1SgdMatchesFiniteNOptimum final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  Stage1SgdMatchesFiniteNOptimum() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const int v = p.vocabulary.v.as_int();
    Stage1SgdSetup setup;
    setup.law = {.T = p.vocabulary.T.as_int(), .v = v, .prior = st::TopicPrior::dirichlet, .alpha = p.alpha, .tau = 1,
                 .N_min = p.lengths.N_min.as_int(), .N_max = p.lengths.N_max.as_int()};
    setup.masking = p.masking.law();
    setup.keys = st::KeySet::unselected;
    setup.lambda = p.lambda;
    setup.lr = p.lr;
    setup.batch = p.batch;
    setup.steps = Params::steps(context.budget);
    setup.replicates = Params::replicates(context.budget);
    setup.checkpoints = checkpoints;
    Measured m;
    m.runs = run_stage1_sgd(setup, context, "sgd");
    const long long K = setup.steps, B = p.batch;
    for (int c = 1; c < checkpoints; ++c) m.record_steps.push_back(K * c / checkpoints);
    const double lr = p.lr;
    m.bias = 2.0 / v * portable::exp(static_cast<double>(K / 2) * portable::log1p(-2 * lr * p.h_min()));
    m.arithmetic = 4 * static_cast<double>(K * B * p.lengths.N_max.value()) * eps * 2.0 / v;
    return m;
  }

  Predicted predict(const Params& p, const Measured&, const Settings& s, const RunContext&) const override {
    const auto low = closed_form<mp50>(p, s, true);
    const auto high = closed_form<mp100>(p, s, true);
    Predicted t;
    t.same = theory::to_double(high.same);
    t.diff = theory::to_double(high.diff);
    t.same_error = theory::to_double(abs(mp100(low.same) - high.same)) + std::abs(t.same) * eps / 2;
    t.diff_error = theory::to_double(abs(mp100(low.diff) - high.diff)) + std::abs(t.diff) * eps / 2;
    t.same_infinite = theory::to_double(closed_form<mp100>(p, Settings{}, false).same);
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    const double delta = context.false_failure_rate() / 5;
    const int T = p.vocabulary.T.as_int(), v = p.vocabulary.v.as_int();
    auto summary = [&](int k) {
      std::vector<double> values;
      for (const Stage1SgdRun& run : m.runs) values.push_back(block_means(run.average, T, v)[static_cast<std::size_t>(k)]);
      return stats::summarize(values);
    };
    const std::string assumption =
        "independent SGD runs; each block mean averages many weakly dependent entries over K/2 steps, close to normal";
    const std::string bias_reason =
        "transient of the expected iterate (exactly GD on J): (2/v)(1 - 2 lr h_min)^(K/2), h_min = lambda + pi rho_0";
    const Resolution resolution{3e-3 * std::abs(t.same), "0.3% of c_s (eta_dropped moves c_s by ~0.7% at the defaults)"};
    const Resolution diag_resolution{1.5e-2 * std::abs(t.same), "1.5% of c_s (only V diagonal entries: the noisiest block)"};
    const Resolution diff_resolution{0.08 * std::abs(t.diff), "8% of c_d (eta_dropped moves c_d by ~8% at the defaults)"};
    const stats::Summary same = summary(same_class), diag = summary(diag_class), diff = summary(diff_class);
    const std::string arith = "double arithmetic of K steps of SGD sums, 4 K B N_max eps (2/v)";
    Measurement ms = measured(same.mean, stats::student_t_half_width(same, delta), assumption);
    ms.numerical_error = m.arithmetic;
    ms.numerical_error_reason = arith;
    verdict.comparisons.push_back(checks::compare("c_s (same topic, other word)", {t.same, t.same_error, "|50 - 100 digit| + half an ulp"},
                                                  ms, {m.bias, bias_reason}, resolution));
    Measurement md = measured(diag.mean, stats::student_t_half_width(diag, delta), assumption);
    md.numerical_error = m.arithmetic;
    md.numerical_error_reason = arith;
    verdict.comparisons.push_back(checks::compare("c_diag (= c_s)", {t.same, t.same_error, "|50 - 100 digit| + half an ulp"},
                                                  md, {m.bias, bias_reason}, diag_resolution));
    Measurement mf = measured(diff.mean, stats::student_t_half_width(diff, delta), assumption);
    mf.numerical_error = m.arithmetic;
    mf.numerical_error_reason = arith;
    verdict.comparisons.push_back(checks::compare("c_d (other topic)", {t.diff, t.diff_error, "|50 - 100 digit| + half an ulp"},
                                                  mf, {m.bias, bias_reason}, diff_resolution));
    const double contrast = t.same - t.diff;
    // The structural within-block variance D_k (stage1_sgd.hpp): the cross-run products of the R/2 disjoint pairs.
    std::array<std::vector<double>, 2> pairs;
    for (std::size_t r = 0; r + 1 < m.runs.size(); r += 2) {
      const auto c = cross_run_within_block(m.runs[r].average, m.runs[r + 1].average, T, v);
      pairs[0].push_back(c[same_class]);
      pairs[1].push_back(c[diff_class]);
    }
    const char* names[2] = {"same-topic", "other-topic"};
    for (std::size_t k = 0; k < 2; ++k) {
      const stats::Summary d = stats::summarize(pairs[k]);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("structural within-block variance D, {} class (noise removed; spec: std < 0.1 (c_s - c_d))", names[k]),
          {0, 0, "a block-constant optimum has none"},
          measured(d.mean, stats::student_t_half_width(d, delta),
                   "independent disjoint run pairs; each product averages many entries, close to normal"),
          {0, "none: the cross-run product is unbiased for D whatever the SGD noise"},
          {0.01 * contrast * contrast, "(0.1 (c_s - c_d))^2: the spec's visibility bound on the within-block std, squared"},
          Relation::at_most));
    }
    {
      // For the reader: the raw within-block std of the averaged W (SGD noise included), not compared.
      std::vector<double> raw;
      for (const Stage1SgdRun& run : m.runs) {
        const auto c = cross_run_within_block(run.average, run.average, T, v);
        raw.push_back(std::sqrt(std::max(c[same_class], c[diff_class])));
      }
      verdict.notes.push_back(fmt::format(
          "Raw within-block std of the averaged W (SGD noise included, not compared): mean {:.3g} over the runs, "
          "against 0.1 (c_s - c_d) = {:.3g}.",
          stats::summarize(raw).mean, 0.1 * contrast));
    }

    Plot plot{"block_means", "SGD block means against the finite-N optimum ((C), uniform attention)", "step",
              "value", false, false, {}};
    Curve cs_theory = Curve::line("c_s, finite-N closed form"), cd_theory = Curve::line("c_d, finite-N closed form");
    Curve cs_inf = Curve::line("c_s, N -> inf");
    Curve cs_sgd = Curve::band(fmt::format("c_s, SGD (mean of R = {})", m.runs.size()));
    Curve cd_sgd = Curve::band("c_d, SGD");
    for (std::size_t c = 0; c < m.record_steps.size(); ++c) {
      std::vector<double> s_values, d_values;
      for (const Stage1SgdRun& run : m.runs) {
        s_values.push_back(run.checkpoint_means[c][same_class]);
        d_values.push_back(run.checkpoint_means[c][diff_class]);
      }
      const auto x = static_cast<double>(m.record_steps[c]);
      const stats::Summary ss = stats::summarize(s_values), sd = stats::summarize(d_values);
      cs_sgd.add_mean(x, ss.mean, stats::student_t_half_width(ss, delta).value);
      cd_sgd.add_mean(x, sd.mean, stats::student_t_half_width(sd, delta).value);
      cs_theory.add(x, t.same);
      cd_theory.add(x, t.diff);
      cs_inf.add(x, t.same_infinite);
    }
    plot.add(std::move(cs_theory)).add(std::move(cs_inf)).add(std::move(cs_sgd)).add(std::move(cd_theory)).add(std::move(cd_sgd));
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format(
        "R = {} runs of K = {} steps, batch {} documents, lr = {:g}, lambda = {:g}; compared: the average of steps "
        "{}..{}. The plot shows the current iterate at 29 checkpoints (not compared).",
        m.runs.size(), Params::steps(context.budget), p.batch.value(), p.lr.value(), p.lambda.value(),
        Params::steps(context.budget) / 2 + 1, Params::steps(context.budget)));
    verdict.notes.push_back(fmt::format("N -> infinity would give c_s = {:.8g}; the finite-N value is {:.8g}.",
                                        t.same_infinite, t.same));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "topic.stage1_sgd_matches_finite_n_optimum",
        .family = "topic",
        .paper = "Li, Li, Risteski, How do transformers learn topic structure (ICML 2023)",
        .source = "specs/topic.md §5 and §9 C2 (Thm 2, stage 1, key set (C), finite documents)",
        .tag = Provenance::derived,
        .statement = "SGD on sampled masked documents with uniform attention learns a block-wise W^V whose block "
                     "means are the finite-N optimum (eta = E[1/U] correction), not the N -> infinity one, with no "
                     "within-block structure beyond run-to-run noise (structural spread below a tenth of the contrast).",
        .latex = R"(\bar W^{SGD}\to c_dJ+(c_s-c_d)\,\mathrm{blockones},\quad g_k=\frac{\pi\rho_k}{\lambda+\eta/V+(\pi-\eta)\rho_k})",
        .simulation = "R independent plain-SGD runs of the one-layer model (sim::topic, uniform attention, one-hot "
                      "embedding, identity decoder, key set (C), squared loss, ridge) on Dir(alpha) documents with MLM "
                      "masking; iterate average over the second half.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"c_d_wrong_sign", "c_d = -(g_1 - g_0)/(v T)", [](Settings& s) { s.c_d_sign = -1; }},
        {"ridge_half_convention", "the closed form of J = L + (lambda/2) ||W||^2 (lambda halved)",
         [](Settings& s) { s.ridge_factor = 0.5; }},
        {"eta_dropped", "the N -> infinity closed form (eta = 0): the finite-N correction itself (small: 0.7% of c_s)",
         [](Settings& s) { s.eta = false; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_stage1_sgd_matches_finite_n_optimum() {
  return std::make_unique<Stage1SgdMatchesFiniteNOptimum>();
}

}  // namespace dyncheck::checks::topic
