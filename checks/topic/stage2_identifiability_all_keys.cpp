// Claim topic.stage2_identifiability_all_keys  [derived]  (specs/topic.md §6 "(P)" and "Identifiability", §9 C6 for
// the key set (P))
//
// Stage 2 with W^V frozen at c_d J + (c - c_d) blockones on the words and c_M in the [MASK] column, key set (P) (every
// position is a key, the selected ones with their masked input: kept words, random words and [MASK]), N -> infinity,
// tau-subset documents: the model's MLM loss (squared and CE) with same-word logit alpha, same-topic-other-word logit
// beta, [MASK]-key logit delta for word queries and delta_M for [MASK] queries depends on (alpha, beta) only through
//   E = (e^alpha + (v - 1) e^beta)/v,
// and equals the theory's population loss L(E, delta, delta_M) (theory/topic/stage_two.hpp, stage_two_loss with
// StageTwoKeys::all: key mass a theta_t + r/T per topic, q on [MASK], a = 1 - p_m + p_m p_c, r = p_m p_r,
// q = p_m (1 - p_c - p_r)). The spec's C6 compares the (P) formula with explicit-softmax Monte Carlo at N = 3000
// (0.962054 against 0.962175, 5e-4); topic.stage2_identifiability_infinite_n does the (C) key set exactly. Here (P) is
// done exactly too.
// Simulated: the model itself (sim::topic::evaluate, key set all, one-hot embedding, identity decoder, softmax
// attention with W^Q = I and W^K = sqrt(d) B^T: B(c, b) = alpha (c = b), beta (same topic), 0 (other topic), delta
// (c = [MASK], b a word), delta_M (c = b = [MASK]), 0 ([MASK] query, word key)) on one document per tau-subset S whose
// positions carry the (P) population exactly: for each word w of S, n_u unselected positions and n_k kept ones (input
// w, target w) and n_m [MASK] ones (target w); for each (u, w), u any of the V words, n_r random ones (input u, target w).
// Under (P) the key histogram is then the law nu = [a mu + r/V; q] of every position (the query's own position
// included, as in the theory: a query is one of the keys it sees), and the selected positions carry the three query
// cases with the masking's weights. Integer counts represent the masking probabilities
//   p_m' = tau v (n_k + n_m + V n_r)/N,  p_c' = n_k/(n_k + n_m + V n_r),  p_r' = V n_r/(n_k + n_m + V n_r)
// (N = tau v (n_u + n_k + n_m + V n_r)) with n_r = 1, n_k = round(n_r V p_c/p_r), n_m = round(n_r V (1 - p_c - p_r)/p_r),
// n_u = round(n_r V (1 - p_m)/(p_m p_r)): the point p' is within ~1/(2 V) relative of (p_m, p_c, p_r), and the theory is
// evaluated at p' (the claim is an identity at every point; the comparison is at the representable point nearest the
// requested one; the notes print p').
// Compared, for each loss: (1) L_model(alpha, beta) = L_theory(E) at (delta, delta_M); (2) L_model(alpha, beta) -
// L_model(log E, log E) = 0.
// Tolerance: numerical only, as topic.stage2_identifiability_infinite_n: theory |double - 50 digits| + an ulp; the
// model's double sums: each document's sum of its n_d token losses (each <= l_max = 1 + V (|c| + |c_d| + |c_M| + 1)^2
// for the squared loss, 2 (|c| + |c_d| + |c_M|) + log V for CE) is off by <= 4 n_d^2 eps l_max, the C(T, tau) document sums are added and the
// total divided by n = C(T, tau) n_d: 4 eps l_max (n_d + C(T, tau)) on the mean, doubled for (2) (a first version with
// 4 n eps l_max, n all tokens, exceeded the resolution at fuzz points with cv ~ 5). Resolution 1e-6 of L.
// Measured at ci (defaults; p' = (0.1499925, 0.1, 0.1), 200010 positions per document): squared loss model
// 0.965094471461214 against L 0.965094471461255 (4e-14), CE 4.58083729360928 against 4.58083729360493 (4.4e-12); the tied
// (log E, log E) gives bit-identical losses; PASS, margin 0.033; mutants FAIL (margins 2.8e7, 1.4e6, 7.9e5); 0.45 CPU s.
// Deterministic (seeds do not enter). An independent numpy enumeration of the same counts (explicit softmax over the
// key histogram, session 15) gives 0.965094471467688 and 4.580837293601994 (7e-12 relative: its own summation order),
// tied = untied. Fuzz seeds 15205-15208 at ci, 6 points each: all PASS or refused (cost, tau > T), every resolving
// mutant FAIL (E_geometric_mean INCONCLUSIVE once, at alpha ~ beta).
// The spec's C6 (P) value is reproduced: W^V = blockones/v (cv = 1, c_d = c_M = 0), E = 11 (alpha = beta = log 11),
// delta = delta_M = 0 gives 0.962054315 (model and theory), the spec's 0.962054 (its MC: 0.962175). With the (P)
// lambda -> 0 stage-1 W^V (cv = 1.080202, c_d = -0.0075867, c_M = 0.0541908) at the (P) minimiser of spec §6 (E = 7.2515,
// delta = 0.352, delta_M = 0): 0.961726479 (model and theory agree to 6e-13).
// Mutants: key_set_C (the (C) population loss, [MASK] and selected positions not keys, where (P) is meant; gross),
// delta_ignored (the word queries' [MASK]-key logit dropped from the theory: a (P)-only term) and the small
// E_geometric_mean (E = exp((alpha + (v - 1) beta)/v)).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/topic/documents.hpp"
#include "dyncheck/sim/topic/model.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/topic/stage_two.hpp"

namespace dyncheck::checks::topic {
namespace {

using theory::mp50;
namespace tt = theory::topic;
namespace st = sim::topic;
constexpr double eps = std::numeric_limits<double>::epsilon();
constexpr int n_r = 1;

struct Params : ParamSet {
  Int T{this, "T", 10, closed(2, 10), "number of topics"};
  Int v{this, "v", 10, closed(1, 10), "words per topic"};
  Int tau{this, "tau", 3, closed(1, 10), "topics per document (tau-subset prior; tau <= T)"};
  Real p_m{this, "p_m", 0.15, closed(0.1, 0.5), "probability that a position is selected"};
  Real p_c{this, "p_c", 0.1, closed(0, 0.4), "probability that a selected position keeps its word"};
  Real p_r{this, "p_r", 0.1, closed(0.05, 0.4), "probability that a selected position becomes a random word (> 0: the "
                                                 "document is built from its random positions)"};
  Real cv{this, "cv", 1, closed(0.2, 5), "block value of the frozen W^V times v (c = cv / v)", Scale::log};
  Real c_M{this, "c_M", 0.05, closed(-0.5, 0.5), "the frozen W^V's [MASK] column"};
  Real c_d{this, "c_d", 0, closed(-0.05, 0.05), "the frozen W^V's other-topic value (the (P) stage-1 optimum has c_d < 0)"};
  Real alpha{this, "alpha", 3, closed(-3, 6), "same-word logit"};
  Real beta{this, "beta", 2, closed(-3, 6), "same-topic, other-word logit"};
  Real delta{this, "delta", 0.35, closed(-3, 3), "logit of a [MASK] key for a word query"};
  Real delta_M{this, "delta_M", 0.2, closed(-3, 3), "logit of a [MASK] key for a [MASK] query"};

  double c() const { return cv / static_cast<double>(v.value()); }
  double V() const { return static_cast<double>(T.value() * v.value()); }
  /// The integer counts of the header: n_k, n_m, n_u (n_r = 1).
  long long n_k() const { return std::llround(n_r * V() * p_c / p_r); }
  long long n_m() const { return std::llround(n_r * V() * (1 - p_c - p_r) / p_r); }
  long long n_u() const { return std::llround(n_r * V() * (1 - p_m) / (p_m * p_r)); }
  double positions() const {
    return static_cast<double>(tau.value() * v.value()) *
           static_cast<double>(n_u() + n_k() + n_m() + n_r * T.value() * v.value());
  }

  void check(const Budget& budget) const override {
    require(tau.value() <= T.value(), "tau", fmt::format("tau must be <= T = {} (got {})", T.value(), tau.value()));
    require(p_c + p_r <= 0.9, "p_r", fmt::format("p_c + p_r must be <= 0.9 (got {:g} + {:g})", p_c.value(), p_r.value()));
    // Cost: per subset document its positions (counted 4 times: 2 losses x 2 attention settings) and ~(V + 1) query
    // groups x (V + 1) keys x V outputs per evaluation.
    const double docs = subsets_of(T.as_int(), tau.as_int());
    const double work = 4 * docs * (positions() * 10 + (V() + 1) * (V() + 1) * V() * 4);
    const double limit = budget.pick(3e9, 3e9, 3e10);
    require(work <= limit, "tau",
            fmt::format("parameter 'tau' (with T = {}, v = {}): about {:.3g} operations (C(T, tau) = {:.0f} documents of "
                        "{:.3g} positions), above the budget's {:.3g}; lower tau, T or v, or raise p_m, p_r",
                        T.value(), v.value(), work, docs, positions(), limit));
  }
};

struct Settings {
  enum class Ratio { weights, geometric_mean } ratio = Ratio::weights;
  bool excluded_keys = false;  ///< the (C) population loss
  bool delta_ignored = false;  ///< the theory's delta = 0
};

struct Measured {
  double loss[2][2] = {{0, 0}, {0, 0}};
  double rounding[2] = {0, 0};
  double E = 0;
  double p_m = 0, p_c = 0, p_r = 0;  ///< the represented masking point p'
  double positions = 0;
};

struct Predicted {
  double loss[2] = {0, 0}, error[2] = {0, 0}, E = 0;
};

double ratio(const Params& p, Settings::Ratio r) {
  const double v = static_cast<double>(p.v.value());
  if (r == Settings::Ratio::geometric_mean) return portable::exp((p.alpha.value() + (v - 1) * p.beta.value()) / v);
  return (portable::exp(p.alpha.value()) + (v - 1) * portable::exp(p.beta.value())) / v;
}

template <class S>
S theory_loss(const Params& p, const Measured& m, const Settings& s, tt::StageTwoLoss kind, const S& E) {
  tt::StageTwoSetting<S> setting;
  setting.T = p.T.as_int();
  setting.v = p.v.as_int();
  setting.p_m = S(m.p_m);
  setting.p_c = S(m.p_c);
  setting.p_r = S(m.p_r);
  setting.c_s = S(p.c());
  setting.c_d = S(p.c_d.value());
  setting.c_M = S(p.c_M.value());
  setting.keys = s.excluded_keys ? tt::StageTwoKeys::excluded : tt::StageTwoKeys::all;
  setting.loss = kind;
  const auto theta = tt::subset_theta<S>(setting.T, p.tau.as_int());
  const S delta = s.delta_ignored ? S(0) : S(p.delta.value());
  return tt::stage_two_loss<S>(setting, theta, tt::StageTwoAttention<S>{E, delta, S(p.delta_M.value())});
}

class Stage2IdentifiabilityAllKeys final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  using ClaimShape::ClaimShape;

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext&) const override {
    const int T = p.T.as_int(), v = p.v.as_int(), tau = p.tau.as_int(), V = T * v;
    const long long nk = p.n_k(), nm = p.n_m(), nu = p.n_u();
    Measured m;
    const double selected = static_cast<double>(nk + nm + static_cast<long long>(n_r) * V);
    m.p_m = static_cast<double>(tau * v) * selected / p.positions();
    m.p_c = static_cast<double>(nk) / selected;
    m.p_r = static_cast<double>(n_r) * V / selected;
    m.positions = p.positions();
    m.E = ratio(p, Settings::Ratio::weights);
    const double tied = portable::log(m.E);
    const double c = p.c(), cM = p.c_M.value(), cd = p.c_d.value();
    // The four parameter settings (loss x attention).
    st::Structure structures[2];
    st::Parameters params[2][2];
    for (int l = 0; l < 2; ++l) {
      st::Structure s = one_hot_squared_structure(V);
      s.keys = st::KeySet::all;
      s.loss = l == 0 ? st::Loss::squared : st::Loss::cross_entropy;
      s.uniform_attention = false;
      s.train_key = s.train_query = s.train_value = false;
      structures[l] = s;
      for (int a = 0; a < 2; ++a) {
        st::Parameters q = st::Parameters::zeros(s);
        q.WQ.setIdentity();
        const double scale = std::sqrt(static_cast<double>(s.d));
        const double la = a == 0 ? p.alpha.value() : tied, lb = a == 0 ? p.beta.value() : tied;
        // B = W^K^T W^Q / sqrt(d) = W^K^T / sqrt(d): the logit of key c for query b is W^K(b, c) / sqrt(d).
        for (int b = 0; b < V; ++b) {
          for (int k = 0; k < V; ++k) {
            q.WV(b, k) = b / v == k / v ? c : cd;
            if (b / v != k / v) continue;
            q.WK(b, k) = scale * (b == k ? la : lb);
          }
          q.WV(b, V) = cM;
          q.WK(b, V) = scale * p.delta.value();
        }
        q.WK(V, V) = scale * p.delta_M.value();
        params[l][a] = q;
      }
    }
    double sums[2][2] = {{0, 0}, {0, 0}};
    long long tokens = 0, doc_tokens = 0, docs = 0;
    st::Workspace workspace;
    st::Evaluation e;
    std::vector<st::MaskedDocument> doc(1);
    std::vector<int> subset(static_cast<std::size_t>(tau));
    for (int i = 0; i < tau; ++i) subset[static_cast<std::size_t>(i)] = i;
    while (true) {
      st::MaskedDocument& d = doc[0];
      d = {};
      auto put = [&](int input, int target, bool selected_position, long long count) {
        for (long long k = 0; k < count; ++k) {
          d.words.push_back(target);
          d.input.push_back(input);
          d.selected.push_back(selected_position ? 1 : 0);
          if (selected_position) ++d.selected_count;
        }
      };
      for (const int t : subset) {
        for (int w = t * v; w < (t + 1) * v; ++w) {
          put(w, w, false, nu);
          put(w, w, true, nk);
          put(V, w, true, nm);
          for (int u = 0; u < V; ++u) put(u, w, true, n_r);
        }
      }
      for (int l = 0; l < 2; ++l) {
        for (int a = 0; a < 2; ++a) {
          st::evaluate(structures[l], params[l][a], doc, {}, false, workspace, e);
          sums[l][a] += e.token_loss_sum;
          if (l == 0 && a == 0) {
            tokens += e.tokens;
            doc_tokens = std::max(doc_tokens, e.tokens);
            ++docs;
          }
        }
      }
      int i = tau - 1;
      while (i >= 0 && subset[static_cast<std::size_t>(i)] == T - tau + i) --i;
      if (i < 0) break;
      ++subset[static_cast<std::size_t>(i)];
      for (int j = i + 1; j < tau; ++j) subset[static_cast<std::size_t>(j)] = subset[static_cast<std::size_t>(j - 1)] + 1;
    }
    for (int l = 0; l < 2; ++l) {
      const double o_max = c + std::abs(cd) + std::abs(cM);
      const double l_max = l == 0 ? 1 + static_cast<double>(V) * (o_max + 1) * (o_max + 1)
                                  : 2 * o_max + portable::log(static_cast<double>(V));
      for (int a = 0; a < 2; ++a) m.loss[l][a] = sums[l][a] / static_cast<double>(tokens);
      // Each document's token-loss sum (n_d tokens, each <= l_max, each computed to ~4 eps l_max) is off by at most
      // 4 n_d^2 eps l_max; the documents' sums are added (docs more roundings of a total <= n l_max) and divided by
      // n = docs n_d: |error of the mean| <= 4 eps l_max (n_d + docs).
      m.rounding[l] = 4 * static_cast<double>(doc_tokens + docs) * eps * l_max;
    }
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted t;
    t.E = ratio(p, s.ratio);
    for (int l = 0; l < 2; ++l) {
      const auto kind = l == 0 ? tt::StageTwoLoss::squared : tt::StageTwoLoss::cross_entropy;
      const double low = theory_loss<double>(p, m, s, kind, t.E);
      const mp50 high = theory_loss<mp50>(p, m, s, kind, mp50(t.E));
      t.loss[l] = theory::to_double(high);
      t.error[l] = std::abs(low - t.loss[l]) + std::abs(t.loss[l]) * eps;
    }
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    Verdict verdict;
    const char* names[2] = {"squared", "cross-entropy"};
    for (int l = 0; l < 2; ++l) {
      const double L = std::abs(t.loss[l]);
      Measurement ms = measured_exactly(m.loss[l][0], m.rounding[l],
                                      "double sums of the model's token losses: 4 eps l_max (n_d + documents)");
      verdict.comparisons.push_back(checks::compare(
          fmt::format("{} loss of the model, key set (P), at (alpha, beta) = ({:g}, {:g}) against L(E, delta, delta_M), "
                      "E = {:.6g}",
                      names[l], p.alpha.value(), p.beta.value(), t.E),
          {t.loss[l], t.error[l], "|double - 50 digit| of the (P) population loss + an ulp"}, ms,
          Bias{0, "none: the (P) population at the represented masking point p' is enumerated exactly"},
          {1e-6 * L, "1e-6 of L (above the deliberately loose rounding bound)"}));
      Measurement md = measured_exactly(m.loss[l][0] - m.loss[l][1], 2 * m.rounding[l], "the rounding of both evaluations");
      verdict.comparisons.push_back(checks::compare(
          fmt::format("{} loss at (alpha, beta) minus at the tied (log E, log E), key set (P): identifiability", names[l]),
          {0, 0, "exact: the loss depends on (alpha, beta) only through E"}, md,
          Bias{0, "none: the population is enumerated exactly"}, {1e-6 * L, "1e-6 of L"}));
    }
    verdict.notes.push_back(fmt::format(
        "Represented masking point p' = (p_m {:.8g}, p_c {:.8g}, p_r {:.8g}) for the requested ({:g}, {:g}, {:g}): counts "
        "n_u = {}, n_k = {}, n_m = {}, n_r = {} per word, {:.0f} positions per document, C(T, tau) = {:.0f} documents. "
        "E = {:.8g}; squared loss: model {:.15g} (tied {:.15g}), theory {:.15g}; cross-entropy: model {:.15g} (tied "
        "{:.15g}), theory {:.15g}.",
        m.p_m, m.p_c, m.p_r, p.p_m.value(), p.p_c.value(), p.p_r.value(), p.n_u(), p.n_k(), p.n_m(), n_r, m.positions,
        subsets_of(p.T.as_int(), p.tau.as_int()), m.E, m.loss[0][0], m.loss[0][1], t.loss[0], m.loss[1][0],
        m.loss[1][1], t.loss[1]));
    return verdict;
  }
};

}  // namespace

std::unique_ptr<Claim> make_stage2_identifiability_all_keys() {
  using S = Settings;
  return std::make_unique<Stage2IdentifiabilityAllKeys>(
      ClaimInfo{
          .id = "topic.stage2_identifiability_all_keys",
          .family = "topic",
          .paper = "Li, Li, Risteski, How do transformers learn topic structure (ICML 2023)",
          .source = "specs/topic.md §6 ((P), identifiability) and §9 C6 (key set (P), N -> infinity)",
          .tag = Provenance::derived,
          .statement = "With every position a key (P) and W^V frozen block-wise, the model's N -> infinity MLM loss "
                       "(squared and CE) depends on the same-word and same-topic logits only through "
                       "E = (e^alpha + (v-1) e^beta)/v and equals the (P) population loss L(E, delta, delta_M).",
          .latex = R"(L_{(P)}(\alpha,\beta,\delta,\delta_M)=L_{(P)}(\mathcal E,\delta,\delta_M),\quad\mathcal E=\frac{e^\alpha+(v-1)e^\beta}{v})",
          .simulation = "The one-layer model's loss (sim::topic, key set (P), W^V = c_d J + (c - c_d) blockones with [MASK] column c_M, "
                        "logits set through W^K) on one document per tau-subset carrying the (P) population exactly "
                        "(integer counts of unselected, kept, random and [MASK] positions).",
      },
      std::vector<ClaimShape<Params, Settings, Measured, Predicted>::MutantSpec>{
          {"key_set_C", "the (C) population loss (selected positions and [MASK] not keys) where (P) is meant",
           [](S& s) { s.excluded_keys = true; }},
          {"delta_ignored", "the [MASK]-key logit delta of word queries dropped (delta = 0 in the theory)",
           [](S& s) { s.delta_ignored = true; }},
          {"E_geometric_mean", "E = exp((alpha + (v-1) beta)/v), the mean over logits instead of weights (small)",
           [](S& s) { s.ratio = Settings::Ratio::geometric_mean; }},
      });
}

}  // namespace dyncheck::checks::topic
