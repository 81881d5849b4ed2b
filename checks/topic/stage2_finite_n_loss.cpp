// Two claims, one body: the squared-loss claim and its cross-entropy variant differ only in the loss (a template
// argument: the simulated loss, the theory's per-query loss, E* and the checks that follow from them), so they share
// the experiment, the theory call and the comparisons; each keeps its own id, statement, parameters and mutants.
//
// Claim topic.stage2_finite_n_loss  [derived]  (specs/topic.md §6 "Finite N, exact", §9 C6-C7)
//
// Stage 2 with W^V frozen at c blockones (c_d = c_M = 0), key set (C), tau-subset documents of length
// N ~ U{N_min..N_max}, squared loss, and attention logit log E on same-topic word keys (same word and other words
// alike, so alpha = beta), 0 elsewhere: the population MLM loss is the exact finite-N multinomial sum of
// theory/topic/stage_two.hpp (keys U ~ Bin(N-1, 1-p_m), topic counts ~ Mult(U, 1/tau)), not its N -> infinity
// value; in particular the flat landscape's drop L(1) - L(E) is the finite-N one.
// Simulated: R replicates, each M documents sampled and masked (sim::topic) and evaluated by the one-layer model's
// explicit softmax attention (sim::topic::evaluate, W^K = sqrt(d) B^T, W^Q = I) at E = 1 and E = 1 + T p_c / p_r
// on the same documents (common random numbers): (sum of token losses - number of tokens) / (M E[#selected per
// document]) + 1, an unbiased estimate of the population loss with documents weighted by their selected tokens
// (the token count is a control variate with known mean; it removes the spread of the per-document token count).
// Theory: the exact sum in double; numerical error 1e-9 L (sums of <= 1e7 positive terms, each rounding <= eps).
// Tolerance: numerical + statistical (Student-t over the R replicates at the claim's share split over the 3
// comparisons); no bias term (the sum is exact for the simulated law).
// Resolution: 5e-4 for the losses and 2.5e-4 for their difference (the N -> infinity values differ by ~6e-4).
// Mutants: attention_ignored (the loss at E = 1 for every E: the drop 5e-3 vanishes; gross) and the small
// infinite_N (the N -> infinity loss of the spec's closed forms: 6e-4 lower at the defaults). The code's random
// token over V + 4 ids moves the loss by only 4e-5 here: below this claim's resolution, not a mutant.

//
// Claim topic.stage2_cross_entropy_finite_n_loss  [derived]  (specs/topic.md §6 "Output and losses", §9 C9)
//
// The cross-entropy variant (the authors' code trains with CE) of topic.stage2_finite_n_loss: stage 2 with W^V
// frozen at c blockones (the code's freeze_block_value_matrix has c = 1), key set (C), tau-subset documents of length
// N ~ U{N_min..N_max}, CE over the V word logits, attention logit log E on same-topic word keys, 0 elsewhere:
// the population MLM loss is the exact finite-N multinomial sum of theory/topic/stage_two.hpp with the CE per-query
// loss -c m_1 + log(v (T - tau + sum_{i in S} e^{c m_i})), and the landscape's drop L(1) - L(E*_CE) is the finite-N
// one, where E*_CE is the N -> infinity CE minimiser (bisection in log E, stage_two_minimiser): not the squared-loss
// one. Default c = 5 (spec §6: "c = 5 gives 9.00" for Dir(0.1)); with tau = 3 E*_CE = 6.17 (scipy cross-check), and
// for c below ~3.7 it is infinite (hard attention wins under CE at small output scale; the code's c = 1 is there):
// such points are refused up front, since there is no finite minimiser to evaluate the landscape at.
// Simulated: R replicates, each M documents sampled and masked (sim::topic) and evaluated by the one-layer model's
// explicit softmax attention and CE loss (W^K = sqrt(d) B^T, W^Q = I) at E = 1 and E = E*_CE on the same documents
// (common random numbers): (sum of token losses - beta x number of tokens) / (M E[#selected per document]) + beta,
// unbiased for the population loss with documents weighted by their selected tokens (the token count is a control
// variate with known mean); beta = the mean token loss of a separate pilot sample (1000 documents at ci), not log V:
// near the loss itself it removes the token-count spread (session 16: the per-replicate std of L(1) and L(E*_CE)
// falls from 5.1e-3 and 6.3e-3 to 1.4e-3 and 2.5e-3; the drop's, already cancelled by common random numbers, from
// 2.3e-3 to 2.1e-3). At ci (master seed 1, the claim linked into a one-claim driver; session 16): PASS, margin 0.13
// with log V and 0.096 with the pilot; the small mutants' margins code_special_logits 6.9 -> 19.9 and infinite_N
// 7.1 -> 21.2 (their L(E*_CE) comparison 5.1 -> 6.4 and 4.6 -> 6.1); squared_loss 3.1e4 -> 9.1e4; 11.1 CPU s either
// way (the pilot adds 1000 documents to 16 x 12000). The drop comparison does not resolve infinite_N (margin 0.75):
// it is the loss comparisons that catch it.
// Theory: the exact sum in double; numerical error 1e-9 L (sums of <= 1e7 positive terms, each rounding <= eps).
// Tolerance: numerical + statistical (Student-t over the R replicates at the claim's share split over the 3
// comparisons); no bias term (the sum is exact for the simulated law).
// Resolution: 5e-3 for the losses (the small mutants move them by 1.7e-2 and 1.8e-2 at the defaults) and for their
// difference (5% of the drop 0.100; measured half-width 2.4e-3 at ci: the CE per-token loss scatters more than the
// squared one, and common random numbers help less, so the drop is checked only to this width).
// Mutants: squared_loss (the squared-loss sum where CE is meant; gross), code_special_logits (the code's 4 special
// outputs with logit ~0 kept in the softmax: log(v z + 4), +0.04 on L; gross at this resolution) and the small
// infinite_N (the N -> infinity CE loss: the finite-N correction itself).


#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/topic/documents.hpp"
#include "dyncheck/sim/topic/model.hpp"
#include "dyncheck/theory/topic/stage_two.hpp"

namespace dyncheck::checks::topic {
namespace {

namespace tt = theory::topic;
namespace st = sim::topic;

using Loss = tt::StageTwoLoss;

template <Loss L>
struct Params : ParamSet {
  static constexpr bool ce = L == Loss::cross_entropy;

  Vocabulary vocabulary{this, 20, 20, 3};  // T >= 3 >= tau
  Int tau{this, "tau", 3, closed(2, 3), "topics per document (<= T; the exact sum costs O(N^(tau-1)))"};
  Real c{this, "c", ce ? 5.0 : 0.1, ce ? closed(0.1, 10) : closed(0.02, 2),
         ce ? "block value of the frozen W^V (5; the code's 1 gives E*_CE = infinity for tau-subset documents: refused)"
            : "block value of the frozen W^V",
         Scale::log};
  Masking masking{this};
  // CE: the sum costs ~12 exp per (u, n_1, n_2, E): N_max <= 200 keeps a run < 20 s.
  Lengths lengths{this, ce ? 200 : 300};

  static std::size_t replicates(const Budget& budget) { return budget.pick<std::size_t>(4, 16, 64); }
  static std::size_t documents(const Budget& budget) { return budget.pick<std::size_t>(150, 12000, 40000); }
  /// CE only: the pilot sample that sets the control variate's coefficient (measure()).
  static std::size_t pilot_documents(const Budget& budget) { return budget.pick<std::size_t>(100, 1000, 2000); }

  /// Squared loss: the prior-free law 1 + T p_c / p_r. CE: the N -> infinity CE minimiser for tau-subset documents
  /// (bisection in log E on [1e-3, 1e6]).
  double E_star() const {
    if constexpr (!ce) {
      return 1 + static_cast<double>(vocabulary.T.value()) * masking.p_c / masking.p_r;
    } else {
      tt::StageTwoSetting<double> s;
      s.T = vocabulary.T.as_int();
      s.v = vocabulary.v.as_int();
      s.p_m = masking.p_m;
      s.p_c = masking.p_c;
      s.p_r = masking.p_r;
      s.c_s = c;
      s.c_d = 0;
      s.c_M = 0;
      s.keys = tt::StageTwoKeys::excluded;
      s.loss = Loss::cross_entropy;
      return tt::stage_two_minimiser<double>(s, {tt::subset_theta<double>(s.T, tau.as_int())}, 0.0, 0.0, 1e-3, 1e6);
    }
  }

  void check(const Budget& budget) const override {
    masking.check();
    lengths.check();
    require(tau.value() <= vocabulary.T.value(), "tau", fmt::format("must be <= T = {}", vocabulary.T.value()));
    if constexpr (!ce) {
      require(masking.p_r >= 0.01, "p_r", "must be >= 0.01 here (the compared E = 1 + T p_c / p_r)");
    } else {
      require(masking.p_c >= 0.01, "p_c", "must be >= 0.01 here (p_c = 0 makes E*_CE = 1: nothing to compare)");
      const double E = E_star();
      require(E < 1e5 && E > 1e-2, "p_r",
              fmt::format("the N -> infinity CE minimiser E* = {:.3g} is not finite inside [1e-2, 1e5]: nothing to compare", E));
    }
    const double N = static_cast<double>(lengths.N_max.value());
    const double exps_per_term = ce ? 12 : 3;  // the CE per-query loss costs ~4x the squared one
    const double work = exps_per_term * N * N * N / 6 * 40 +
                        static_cast<double>(replicates(budget) * documents(budget)) * (N * 60 + 2000);
    const double limit = budget.pick(3e8, 4.5e9, 2e11);  // ~6e8 per second (measured)
    require(work <= limit, "N_max", fmt::format("about {:.3g} operations, above the budget's {:.3g}", work, limit));
  }
};

template <Loss L>
struct Settings {
  bool finite = true;
  bool attention = true;        ///< false: the loss at E = 1 whatever the attention
  Loss loss = L;                ///< the theory's loss (a mutant may evaluate the other one)
  bool special_logits = false;  ///< true: the code's 4 special outputs (logit 0) in the softmax
};

struct Measured {
  std::vector<double> at_one, at_star;  ///< per replicate
};

struct Predicted {
  double at_one = 0, at_star = 0;
};

/// What differs between the two registrations besides the loss: the texts and resolutions of the report.
struct Wording {
  const char* star_label;  ///< the second comparison's name; {} is E*
  double loss_resolution;
  const char* loss_resolution_reason;
  const char* star_resolution_reason;
  double drop_resolution;
  const char* drop_resolution_reason;
  const char* plot_title;
  int plot_intervals;  ///< the plotted E grid has plot_intervals + 1 points
};

template <Loss L>
constexpr Wording wording() {
  if constexpr (L == Loss::cross_entropy) {
    return {"L(E*_CE = {:.4g}) (the N -> infinity CE minimiser)",
            5e-3,
            "5e-3 (the small mutants move the loss by 1.7e-2 (special logits) and 1.8e-2 (N -> infinity) at the defaults)",
            "5e-3",
            5e-3,
            "5e-3 (5% of the drop at the defaults)",
            "Stage-2 CE loss against E: exact finite-N sum, N -> infinity, and the sampled documents",
            8};
  } else {
    return {"L(E = 1 + T p_c / p_r = {:.4g})",
            5e-4,
            "5e-4 (the N -> infinity loss is ~6e-4 lower at the defaults)",
            "5e-4",
            2.5e-4,
            "2.5e-4 (5% of the drop at the defaults)",
            "Stage-2 loss against E: exact finite-N sum, N -> infinity, and the sampled documents",
            16};
  }
}

template <Loss L>
class Stage2FiniteNLoss final : public ClaimShape<Params<L>, Settings<L>, Measured, Predicted> {
  using Base = ClaimShape<Params<L>, Settings<L>, Measured, Predicted>;
  using P = Params<L>;
  using S = Settings<L>;

 public:
  Stage2FiniteNLoss(ClaimInfo info, std::vector<typename Base::MutantSpec> mutants) : Base(std::move(info), std::move(mutants)) {}

 protected:
  Measured measure(const P& p, const S&, const RunContext& context) const override {
    const int T = p.vocabulary.T.as_int(), v = p.vocabulary.v.as_int(), V = T * v;
    const st::DocumentLaw law{.T = T, .v = v, .prior = st::TopicPrior::subset, .alpha = 1, .tau = p.tau.as_int(),
                              .N_min = p.lengths.N_min.as_int(), .N_max = p.lengths.N_max.as_int()};
    const st::MaskingLaw masking = p.masking.law();
    st::Structure s = one_hot_squared_structure(V);
    s.uniform_attention = false;
    if constexpr (P::ce) s.loss = st::Loss::cross_entropy;
    auto parameters = [&](double E) {
      st::Parameters q = st::Parameters::zeros(s);
      q.WQ.setIdentity();
      const double scale = std::sqrt(static_cast<double>(s.d));
      for (int b = 0; b < V; ++b) {
        for (int c = 0; c < V; ++c) {
          if (b / v == c / v) {
            q.WK(b, c) = scale * portable::log(E);  // W^K = sqrt(d) B^T: B(c, b) = log E for same-topic words
            q.WV(b, c) = p.c;
          }
        }
      }
      return q;
    };
    const st::Parameters one = parameters(1.0), star = parameters(p.E_star());
    const double selected = expected_selected(p.lengths.N_min, p.lengths.N_max, p.masking.p_m);
    const std::size_t M = P::documents(context.budget);
    // `count` documents sampled and masked from one stream (the pilot and every replicate draw the same way).
    auto draw_documents = [&](std::size_t count, sim::Rng& rng) {
      std::vector<st::MaskedDocument> docs(count);
      std::vector<int> words;
      std::vector<double> theta;
      for (auto& d : docs) {
        st::sample_document(law, rng, words, theta);
        st::mask_document(masking, V, words, rng, d);
      }
      return docs;
    };
    // The control variate's coefficient beta (per E): (sum l - beta #tokens) / (M E[#selected]) + beta is unbiased for
    // any beta fixed before the replicate's documents are drawn, and its variance is smallest near beta = the per-token
    // loss itself. Squared loss: beta = 1 (the loss at uniform output; the loss is ~0.96: near-optimal). CE: the loss
    // (~3.7) is far from the uniform-output log V (4.6), so beta is the mean token loss of a pilot sample (stream
    // "pilot", M_p documents, drawn apart from the replicates and the same for the claim and its mutants). Measured
    // (session 16, defaults, 16 replicates of 1500 documents, per-replicate std): log V gives 5.1e-3, 6.3e-3 and
    // 2.3e-3 on L(1), L(E*_CE) and the drop; beta = L gives 1.4e-3, 2.5e-3 and 2.1e-3.
    double beta[2] = {1.0, 1.0};
    if constexpr (P::ce) {
      const auto pilot = sim::run_replicates(replicate_options(context, "pilot", 1), [&](std::size_t, sim::Rng& rng) {
        const std::vector<st::MaskedDocument> docs = draw_documents(P::pilot_documents(context.budget), rng);
        const st::Evaluation a = st::evaluate(s, one, docs, {selected}, false), b = st::evaluate(s, star, docs, {selected}, false);
        return std::pair<double, double>{a.token_loss_sum / static_cast<double>(a.tokens),
                                         b.token_loss_sum / static_cast<double>(b.tokens)};
      });
      beta[0] = pilot.front().first;
      beta[1] = pilot.front().second;
    }
    const auto results = sim::run_replicates(replicate_options(context, "documents", P::replicates(context.budget)),
                                             [&](std::size_t, sim::Rng& rng) {
                                               const std::vector<st::MaskedDocument> docs = draw_documents(M, rng);
                                               // Control variate: the token count, whose mean M E[#selected] is
                                               // known: (sum l - beta #tokens) / (M E[#selected]) + beta is unbiased too.
                                               auto estimate = [&](const st::Parameters& q, double b) {
                                                 const st::Evaluation e = st::evaluate(s, q, docs, {selected}, false);
                                                 return (e.token_loss_sum - b * static_cast<double>(e.tokens)) /
                                                            (selected * static_cast<double>(M)) +
                                                        b;
                                               };
                                               return std::pair<double, double>{estimate(one, beta[0]), estimate(star, beta[1])};
                                             });
    Measured m;
    for (const auto& [a, b] : results) {
      m.at_one.push_back(a);
      m.at_star.push_back(b);
    }
    return m;
  }

  Predicted predict(const P& p, const Measured&, const S& s, const RunContext&) const override {
    const int T = p.vocabulary.T.as_int(), v = p.vocabulary.v.as_int();
    const double E_star = s.attention ? p.E_star() : 1.0;
    Predicted t;
    if (s.finite) {
      const auto l = tt::finite_n_subset_losses<double>(T, v, p.tau.as_int(), p.masking.p_m, p.masking.p_c, p.masking.p_r,
                                                         p.c, {1.0, E_star}, p.lengths.N_min.as_int(), p.lengths.N_max.as_int(),
                                                         tt::RandomToken::word, s.loss);
      t = {l[0], l[1]};
    } else {
      t = {tt::infinite_n_subset_loss<double>(T, v, p.tau.as_int(), p.masking.p_c, p.masking.p_r, p.c, 1.0,
                                               tt::RandomToken::word, s.loss),
           tt::infinite_n_subset_loss<double>(T, v, p.tau.as_int(), p.masking.p_c, p.masking.p_r, p.c, E_star,
                                               tt::RandomToken::word, s.loss)};
    }
    if (s.special_logits) {
      // log(v z) -> log(v z + 4) = log(v z) + log(1 + 4/(v z)); v z >= V e^{-c}... evaluated at the N -> infinity
      // uniform point, where v z = v (T - tau + tau e^{c/tau}): a constant shift of both losses.
      const double tau = static_cast<double>(p.tau.value());
      const double vz = static_cast<double>(v) * (static_cast<double>(T) - tau + tau * portable::exp(p.c / tau));
      const double shift = portable::log1p(4 / vz);
      t.at_one += shift;
      t.at_star += shift;
    }
    return t;
  }

  Verdict compare(const P& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    constexpr Wording w = wording<L>();
    Verdict verdict;
    const double delta = context.false_failure_rate() / 3;
    const std::string assumption = "independent replicates, each the mean over many documents: close to normal";
    const std::string theory_reason = "sums of <= 1e7 positive double terms: <= 1e-9 relative";
    std::vector<double> difference;
    for (std::size_t r = 0; r < m.at_one.size(); ++r) difference.push_back(m.at_one[r] - m.at_star[r]);
    const stats::Summary one = stats::summarize(m.at_one), star = stats::summarize(m.at_star),
                         diff = stats::summarize(difference);
    verdict.comparisons.push_back(checks::compare(
        "L(E = 1) (uniform attention)", {t.at_one, 1e-9 * t.at_one, theory_reason},
        measured(one.mean, stats::student_t_half_width(one, delta), assumption), {0, "none: the sum is exact"},
        {w.loss_resolution, w.loss_resolution_reason}));
    verdict.comparisons.push_back(checks::compare(
        fmt::format(fmt::runtime(w.star_label), p.E_star()), {t.at_star, 1e-9 * t.at_star, theory_reason},
        measured(star.mean, stats::student_t_half_width(star, delta), assumption), {0, "none: the sum is exact"},
        {w.loss_resolution, w.star_resolution_reason}));
    const double d_theory = t.at_one - t.at_star;
    verdict.comparisons.push_back(checks::compare(
        "L(1) - L(E) (the landscape's drop, common random numbers)",
        {d_theory, 1e-9 * (t.at_one + t.at_star), theory_reason},
        measured(diff.mean, stats::student_t_half_width(diff, delta), assumption), {0, "none: the sum is exact"},
        {w.drop_resolution, w.drop_resolution_reason}));
    const int T = p.vocabulary.T.as_int(), v = p.vocabulary.v.as_int();
    Plot plot{"finite_n_landscape", w.plot_title, "E", "loss", true, false, {}};
    Curve finite = Curve::line("exact finite-N sum"), infinite = Curve::line("N -> infinity");
    const double top = 4 * p.E_star();
    const double n = w.plot_intervals;
    std::vector<double> Es;
    for (int k = 0; k <= w.plot_intervals; ++k) {
      Es.push_back(portable::exp(portable::log(0.5) + (portable::log(top) - portable::log(0.5)) * k / n));
    }
    const auto curve = tt::finite_n_subset_losses<double>(T, v, p.tau.as_int(), p.masking.p_m, p.masking.p_c, p.masking.p_r,
                                                          p.c, Es, p.lengths.N_min.as_int(), p.lengths.N_max.as_int(),
                                                          tt::RandomToken::word, L);
    for (std::size_t k = 0; k < Es.size(); ++k) {
      finite.add(Es[k], curve[k]);
      infinite.add(Es[k], tt::infinite_n_subset_loss<double>(T, v, p.tau.as_int(), p.masking.p_c, p.masking.p_r, p.c, Es[k],
                                                              tt::RandomToken::word, L));
    }
    Curve sampled = Curve::band("sampled documents");
    sampled.add_mean(1.0, one.mean, stats::student_t_half_width(one, delta).value);
    sampled.add_mean(p.E_star(), star.mean, stats::student_t_half_width(star, delta).value);
    plot.add(std::move(finite)).add(std::move(infinite)).add(std::move(sampled));
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format("R = {} replicates of {} documents; E[#selected per document] normalises the sums.",
                                        m.at_one.size(), P::documents(context.budget)));
    if constexpr (P::ce) {
      verdict.notes.push_back(fmt::format(
          "N -> infinity CE minimiser E*_CE = {:.6g}; the squared loss at the same c would give {:.6g} (general-c formula).",
          p.E_star(), tt::subset_law<double>(T, v, p.tau.as_int(), p.masking.p_c, p.masking.p_r, p.c)));
    }
    return verdict;
  }
};

}  // namespace

std::unique_ptr<Claim> make_stage2_finite_n_loss() {
  using Shape = Stage2FiniteNLoss<Loss::squared>;
  return std::make_unique<Shape>(
      ClaimInfo{
          .id = "topic.stage2_finite_n_loss",
          .family = "topic",
          .paper = "Li, Li, Risteski, How do transformers learn topic structure (ICML 2023)",
          .source = "specs/topic.md §6 (finite N, exact) and §9 C6-C7 (Thm 3, stage 2, key set (C))",
          .tag = Provenance::derived,
          .statement = "With W^V frozen block-wise and same-topic attention ratio E, the MLM loss of finite documents is "
                       "the exact multinomial sum over key counts, not the N -> infinity value.",
          .latex = R"(L_N(\mathcal E)=\sum_N w_N\sum_u \mathrm{Bin}(u;N-1,1-p_m)\,\mathbb E_{n\sim\mathrm{Mult}(u,1/\tau)}\,\ell(n,\mathcal E))",
          .simulation = "Sampled tau-subset documents with MLM masking, the one-layer model's explicit softmax attention "
                        "(sim::topic) at E = 1 and E = 1 + T p_c/p_r on the same documents.",
      },
      std::vector<Shape::MutantSpec>{
          {"attention_ignored", "the loss at E = 1 whatever the attention (gross: the whole stage-2 effect)",
           [](Settings<Loss::squared>& s) { s.attention = false; }},
          {"infinite_N", "the N -> infinity loss (small: 6e-4 at the defaults)",
           [](Settings<Loss::squared>& s) { s.finite = false; }},
      });
}

std::unique_ptr<Claim> make_stage2_cross_entropy_finite_n_loss() {
  using Shape = Stage2FiniteNLoss<Loss::cross_entropy>;
  return std::make_unique<Shape>(
      ClaimInfo{
          .id = "topic.stage2_cross_entropy_finite_n_loss",
          .family = "topic",
          .paper = "Li, Li, Risteski, How do transformers learn topic structure (ICML 2023)",
          .source = "specs/topic.md §6 (output and losses, finite N) and §9 C9 (Thm 3, stage 2, CE, key set (C))",
          .tag = Provenance::derived,
          .statement = "Under the cross-entropy loss of the authors' code, with W^V frozen block-wise (c = 1) and same-topic "
                       "attention ratio E, the MLM loss of finite documents is the exact multinomial sum over key counts, "
                       "and its minimiser is not the squared-loss one.",
          .latex = R"(\ell_{CE}=-c\,m_{t^*}+\log\big(v\sum_te^{c\,m_t}\big),\quad L_N(\mathcal E)=\sum_N w_N\sum_u \mathrm{Bin}(u;N-1,1-p_m)\,\mathbb E_{n}\,\ell_{CE}(n,\mathcal E))",
          .simulation = "Sampled tau-subset documents with MLM masking, the one-layer model's explicit softmax attention and "
                        "CE loss (sim::topic) at E = 1 and E = E*_CE on the same documents.",
      },
      std::vector<Shape::MutantSpec>{
          {"squared_loss", "the squared-loss sum where CE is meant (gross)",
           [](Settings<Loss::cross_entropy>& s) { s.loss = Loss::squared; }},
          {"code_special_logits", "the code's 4 special outputs (logit ~0) kept in the softmax: log(v z + 4)",
           [](Settings<Loss::cross_entropy>& s) { s.special_logits = true; }},
          {"infinite_N", "the N -> infinity CE loss (small: the finite-N correction)",
           [](Settings<Loss::cross_entropy>& s) { s.finite = false; }},
      });
}

}  // namespace dyncheck::checks::topic
