// Claim joma.hblt_cooccurrence  [reconstructed/derived]  (specs/joma.md §5 Theorem 5, §7 claim 9)
//
// Reconstruction of Theorem 5: each edge of the hierarchical binary latent tree is a symmetric channel,
// P(y_β = y_α) = (1 + ρ)/2. With LCA γ, P(y_γ = 1) = p, and R_l = Π ρ along γ → l:
//   \f[ P(y_l = 1\mid y_m = 1) = \frac{p(1+R_l)(1+R_m) + (1-p)(1-R_l)(1-R_m)}{2(1 + (2p-1)R_m)}
//       \overset{p=1/2}{=} \tfrac12(1 + \rho^{H_l+H_m}). \f]
// Simulated: N top-down samples of random complete trees (depth in [2, max_depth], branching in
// [2, max_branching], ρ per edge uniform in [rho_min, rho_max], root prior uniform in [0.2, 0.8], drawn per
// tree), Monte-Carlo frequency of y_l = 1 among samples with y_m = 1, for 3 leaf pairs per tree: the most
// correlated sibling pair (largest ρ_l ρ_m among leaves with a common parent, chosen from the drawn tree
// before sampling: the pair most sensitive to the ρ) and 2 random pairs.
// Tolerance: statistical, z_{δ'/2} sqrt(p(1-p)/N_m) under the theory's p (N_m ≥ 1000 so the normal
// approximation of a binomial proportion holds), δ' = the claim's share / number of pairs (Bonferroni);
// z is evaluated in 50-digit arithmetic and rounded once (quantiles.hpp).
// Shown: per tree the pair with the largest margin.
// Mutants: correlation_squared (R_l R_m replaced by (R_l R_m)^2) and rho_5_percent (every edge's ρ 5% too
// small). Resolution: at ci (N = 2e5, N_m ≈ 1e5) the half-width is about 0.008, so an error of about 0.01 in
// a conditional probability is resolved; rho_5_percent moves the most correlated sibling pair by about
// 0.05 ρ_l ρ_m, which is resolved when the mean edge correlation (rho_min + rho_max)/2 is at least 0.55
// (checked up front, exit 2; the derivation is in Params::check). Weaker channels (e.g. ρ in [0.3, 0.35],
// where the error moves P by at most 0.006) are refused rather than passed unresolved.
// Second data source (issue #18, reported, not decided): JoMA's Table 1 experiment does not sample this channel
// model; its generator (decoder_only_hier.py, sim/joma/hierarchy.hpp) is deterministic and combinatorial. Its
// exact leaf co-occurrences, grouped by the level of the closest common ancestor, are put beside the formula's
// value for noise-free edges (rho = 1: P = 1 for every pair) in a table, with the effective rho each level's mean
// would need, and as points on the plot.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "claims.hpp"
#include "quantiles.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/sim/joma/hblt.hpp"
#include "dyncheck/sim/joma/hierarchy.hpp"
#include "dyncheck/sim/random/derive_stream.hpp"
#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/sim/random/uniform_index.hpp"
#include "dyncheck/theory/joma/hblt_cooccurrence.hpp"

namespace dyncheck::checks::joma {
namespace {

constexpr std::size_t pairs_per_tree = 3;  ///< the most correlated sibling pair and 2 random pairs
constexpr double min_mean_rho = 0.55;        ///< see Params::check

struct Params : ParamSet {
  Real rho_min{this, "rho_min", 0.3, closed(0, 0.99), "smallest edge correlation rho"};
  Real rho_max{this, "rho_max", 0.95, closed(0, 0.99),
               "largest edge correlation rho; at least rho_min, and (rho_min + rho_max)/2 >= 0.55 (see check). At "
               "most 0.99: the normal approximation of a frequency needs N_m p(1-p) >> 1, and rho -> 1 sends p to 1"};
  Int max_depth{this, "max_depth", 4, closed(2, 5), "largest tree depth (depth drawn in [2, max_depth])"};
  Int max_branching{this, "max_branching", 3, closed(2, 3),
                    "largest branching factor (drawn in [2, max_branching])"};

  void check(const Budget&) const override {
    if (!(rho_max >= rho_min)) {
      throw ParamError("rho_max", fmt::format("rho_max must be at least rho_min (got rho_min = {}, rho_max = {})",
                                              rho_min.value(), rho_max.value()));
    }
    // The claim is built to resolve a 5% error in every rho (its small mutant). Its most sensitive pair, the
    // most correlated sibling pair, moves by about (1 - 0.95^2)/2 rho_l rho_m ~ 0.05 rho_l rho_m under that
    // error, against a half-width of about 0.008 at ci (N_m ~ 1e5, z ~ 4.9): weakly correlated trees cannot
    // tell rho from 0.95 rho. Where the 6 trees' best sibling pairs all stay within z + 3 standard errors of
    // the truth under the error, the error may pass. Monte Carlo of the formula (2026-11-24) over a 0.05 grid
    // of (rho_min, rho_max), 400 tree draws per cell, of the least favourable shape (depth 2, branching 2: two
    // sibling groups per tree): with (rho_min + rho_max)/2 >= 0.55 no cell had such a draw; at mean 0.5 up
    // to 0.7% of the draws, at 0.45 up to 5%, at rho in [0.3, 0.35] all. Deeper and wider trees have more
    // sibling groups and do better (2000 draws at depth <= 5, branching <= 3: none).
    if ((rho_min + rho_max) / 2 < min_mean_rho) {
      throw ParamError("rho_max",
                       fmt::format("the mean edge correlation (rho_min + rho_max)/2 must be at least {} (got ({} + {})/2 "
                                   "= {}): weaker channels are too noisy for the claim to resolve a 5% error in rho",
                                   min_mean_rho, rho_min.value(), rho_max.value(), (rho_min + rho_max) / 2));
    }
  }
};

/// The theory's knobs; the default is the claim's theory.
struct Settings {
  double correlation_power = 1;  ///< R_l R_m → (R_l R_m)^power (every ρ raised to it)
  double rho_factor = 1;         ///< every ρ times this
};

struct PairCounts {
  int l, m;
  long long joint, n_m;
};

struct TreeResult {
  int depth, branching;
  sim::joma::LatentTree tree;
  std::vector<PairCounts> pairs;
};

/// The second data source (issue #18): the deterministic combinatorial generator of Table 1
/// (sim/joma/hierarchy.hpp), exact co-occurrences of its leaves grouped by the level of their closest common
/// ancestor. Reported beside the claim, not decided (see the note in compare()).
struct Table1Level {
  int level = 0;  ///< closest common ancestor at this level (k + 1 edges above the leaves); -1: none
  long long pairs = 0;
  double sum = 0, min = 1, max = 0;
};

struct Measured {
  long long samples = 0;
  std::vector<TreeResult> trees;
  std::size_t table1_hierarchies = 0;
  std::vector<Table1Level> table1;  ///< levels -1, 0, 1, 2
};

struct Predicted {
  std::vector<std::vector<double>> p;  ///< [tree][pair]
};

/// The pair of leaves with a common parent whose product rho_l rho_m is largest (the first such pair, m the
/// one with the larger rho): the pair whose co-occurrence is most sensitive to the edge correlations. Chosen
/// from the drawn tree before any sample.
PairCounts most_correlated_siblings(const sim::joma::LatentTree& tree, const std::vector<int>& leaves) {
  PairCounts best{-1, -1, 0, 0};
  double best_product = -1;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    for (std::size_t j = i + 1; j < leaves.size(); ++j) {
      const int a = leaves[i], b = leaves[j];
      if (tree.parent[static_cast<std::size_t>(a)] != tree.parent[static_cast<std::size_t>(b)]) continue;
      const double ra = tree.rho[static_cast<std::size_t>(a)], rb = tree.rho[static_cast<std::size_t>(b)];
      if (ra * rb > best_product) {
        best_product = ra * rb;
        best = ra >= rb ? PairCounts{b, a, 0, 0} : PairCounts{a, b, 0, 0};
      }
    }
  }
  if (best.l < 0) throw std::logic_error("most_correlated_siblings: a complete tree of depth >= 1 has sibling leaves");
  return best;
}

class HbltCooccurrence final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  HbltCooccurrence() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& params, const Settings&, const RunContext& context) const override {
    Measured m;
    const std::size_t trees = context.budget.pick<std::size_t>(2, 6, 20);
    m.samples = context.budget.pick<long long>(20000, 200000, 2000000);
    const int depths = params.max_depth.as_int() - 1, branchings = params.max_branching.as_int() - 1;
    m.trees = sim::run_replicates(replicate_options(context, "trees", trees), [&](std::size_t, sim::Rng& rng) {
      const int depth = 2 + static_cast<int>(sim::uniform_index(rng, static_cast<std::size_t>(depths)));
      const int branching = 2 + static_cast<int>(sim::uniform_index(rng, static_cast<std::size_t>(branchings)));
      const double root_prior = 0.2 + 0.6 * sim::uniform01(rng);
      TreeResult result{depth, branching,
                        sim::joma::complete_latent_tree(depth, branching, params.rho_min, params.rho_max, root_prior,
                                                        rng),
                        {}};
      const std::vector<int> leaves = sim::joma::leaves(result.tree);
      result.pairs.push_back(most_correlated_siblings(result.tree, leaves));
      for (std::size_t k = 1; k < pairs_per_tree; ++k) {
        const int l = leaves[sim::uniform_index(rng, leaves.size())];
        int other = l;
        while (other == l) other = leaves[sim::uniform_index(rng, leaves.size())];
        result.pairs.push_back({l, other, 0, 0});
      }
      for (long long s = 0; s < m.samples; ++s) {
        const std::vector<unsigned char> y = sim::joma::sample_latent_tree(result.tree, rng);
        for (PairCounts& pair : result.pairs) {
          if (y[static_cast<std::size_t>(pair.m)]) {
            ++pair.n_m;
            pair.joint += y[static_cast<std::size_t>(pair.l)];
          }
        }
      }
      return result;
    });
    // Second data source: Table 1's generator (M 100, L 30, latents (10, 20), 20 classes, p 3), exact
    // P(l in x | m in x) under uniform labels for every ordered pair of distinct leaves that appear.
    m.table1_hierarchies = context.budget.pick<std::size_t>(3, 20, 100);
    m.table1.resize(4);
    for (int k = 0; k < 4; ++k) m.table1[static_cast<std::size_t>(k)].level = k - 1;
    for (std::size_t r = 0; r < m.table1_hierarchies; ++r) {
      sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/table1", r);
      const auto h = sim::joma::make_hierarchy({100, 30, {10, 20, 20}, {3, 3, 3}}, rng);
      const auto used = sim::joma::used_leaves(h);
      for (const int l : used) {
        for (const int m_leaf : used) {
          if (l == m_leaf) continue;
          const double p = sim::joma::leaf_cooccurrence(h, l, m_leaf);
          Table1Level& g = m.table1[static_cast<std::size_t>(sim::joma::common_ancestor_level(h, l, m_leaf) + 1)];
          ++g.pairs;
          g.sum += p;
          g.min = std::min(g.min, p);
          g.max = std::max(g.max, p);
        }
      }
    }
    return m;
  }

  Predicted predict(const Params&, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted predicted;
    for (const TreeResult& r : m.trees) {
      theory::joma::BinaryLatentTree<double> tree{r.tree.parent, r.tree.rho, r.tree.root_prior};
      for (double& rho : tree.rho) rho = portable::pow(s.rho_factor * rho, s.correlation_power);
      std::vector<double> p;
      for (const PairCounts& pair : r.pairs) p.push_back(theory::joma::leaf_cooccurrence(tree, pair.l, pair.m));
      predicted.p.push_back(std::move(p));
    }
    return predicted;
  }

  Verdict compare(const Params& params, const Measured& m, const Predicted& t, const RunContext& context) const override {
    const std::size_t compared = m.trees.size() * pairs_per_tree;
    const double delta = context.false_failure_rate() / static_cast<double>(compared);
    const double z = normal_upper_quantile(delta / 2);
    Verdict verdict;
    Plot plot{"cooccurrence", "P(y_l = 1 | y_m = 1): Monte Carlo against the product-of-channels formula",
              "formula", "Monte Carlo", false, false, {}};
    Curve points = Curve::points("leaf pairs");
    for (std::size_t tree = 0; tree < m.trees.size(); ++tree) {
      const TreeResult& r = m.trees[tree];
      std::size_t worst = 0;
      double worst_score = -1;
      for (std::size_t k = 0; k < r.pairs.size(); ++k) {
        const PairCounts& pair = r.pairs[k];
        if (pair.n_m < 1000) {
          throw std::runtime_error("fewer than 1000 samples with y_m = 1; the normal approximation is not justified");
        }
        const double p = t.p[tree][k];
        const double frequency = static_cast<double>(pair.joint) / static_cast<double>(pair.n_m);
        const double sigma = std::sqrt(std::max(0.0, p * (1 - p)) / static_cast<double>(pair.n_m));
        points.add(p, frequency, frequency - z * sigma, frequency + z * sigma);
        const double score = sigma > 0 ? std::abs(frequency - p) / sigma : std::abs(frequency - p) * 1e300;
        if (score > worst_score) {
          worst_score = score;
          worst = k;
        }
      }
      const PairCounts& w = r.pairs[worst];
      const double p = t.p[tree][worst];
      stats::HalfWidth half_width;
      half_width.value = z * std::sqrt(std::max(0.0, p * (1 - p)) / static_cast<double>(w.n_m));
      half_width.method = stats::HalfWidthMethod::normal;
      // Every one of the pairs may be the shown one: each was given delta, Bonferroni over all of them; the
      // recorded share of this tree's comparison is its pairs' total.
      half_width.delta = delta * static_cast<double>(r.pairs.size());
      half_width.reason = fmt::format(
          "normal approximation z = {:.2f} (two-sided delta = {:.2g} per pair, Bonferroni over {} pairs) x "
          "sqrt(p(1-p)/N_m), N_m = {}",
          z, delta, compared, w.n_m);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("tree {} (depth {}, branching {}, root prior {:.2f}): P(y_{} = 1 | y_{} = 1), worst of {} pairs",
                      tree, r.depth, r.branching, r.tree.root_prior, w.l, w.m, r.pairs.size()),
          {p, 1e-15, "double evaluation of a product of <= 10 factors"},
          measured(static_cast<double>(w.joint) / static_cast<double>(w.n_m), half_width,
                   "the frequency of N_m >= 1000 iid Bernoulli draws"),
          {0.0, "none: exact formula for the reconstructed channel model"},
          {0.02, "detects a 0.02 error in the conditional probability"}));
    }
    plot.add(Curve::line("identity").add(0.0, 0.0).add(1.0, 1.0)).add(std::move(points));
    // The second data source: the deterministic Table 1 generator. Its edges are noise-free (a latent that is
    // on turns all its children on), i.e. rho = 1 on every edge, where the formula gives 1 for every pair and
    // every prior: [p (1+1)(1+1) + 0] / [2 (1 + (2p-1))] = 1. Measured: the exact co-occurrence per level of
    // the closest common ancestor (mean, with min and max as the bar).
    std::string table =
        fmt::format("Second data source, reported and not decided: Table 1's deterministic generator (decoder_only_hier.py; "
                    "M 100, L 30, latents (10, 20), 20 classes, p 3; {} hierarchies, exact co-occurrence under uniform "
                    "labels). The formula is stated for noisy channels; the generator's edges are deterministic "
                    "(rho = 1), where the formula predicts P(l | m) = 1 for every pair and every prior. Measured:\n\n"
                    "| closest common ancestor | edges to each leaf H | ordered pairs | formula (rho = 1) | exact P(l given m), mean | min | max | effective rho from 1/2(1 + rho^(2H)) |\n"
                    "|---|---|---|---|---|---|---|---|",
                    m.table1_hierarchies);
    Curve table1 = Curve::points("Table 1 generator (deterministic; mean, min-max) at its formula value rho = 1");
    for (const Table1Level& g : m.table1) {
      if (g.pairs == 0) continue;
      const double mean = g.sum / static_cast<double>(g.pairs);
      const int H = g.level + 1;
      const std::string rho_eff =
          g.level < 0 ? "-" : (mean > 0.5 ? fmt::format("{:.3f}", portable::pow(2 * mean - 1, 1.0 / (2.0 * H)))
                                          : "none (mean <= 1/2, below the formula's range with prior 1/2)");
      table += fmt::format("\n| {} | {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {} |",
                           g.level < 0 ? std::string("none (never in one class)") : fmt::format("level {}", g.level),
                           g.level < 0 ? std::string("-") : std::to_string(H), g.pairs, g.level < 0 ? "1 (no LCA: not defined)" : "1",
                           mean, g.min, g.max, rho_eff);
      table1.add(1.0, mean, g.min, g.max);
    }
    table += "\n\nThe formula's ordering holds (closer common ancestors co-occur more), its values do not: the generator's "
             "OR-structure (a leaf turned on by any of its latents, a one-of-C top level instead of a binary root) gives "
             "co-occurrences well below 1 from level 1 up, where the noise-free channel model gives 1, and the effective "
             "rho falls with the height of the common ancestor, so no single rho fits. A leaf may also have several "
             "level-0 parents (the hierarchy is not a tree), so even level-0 siblings can fall below 1.";
    plot.add(std::move(table1));
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format(
        "[reconstructed] Theorem 5's formula is not public; the channel model and the formula are the spec's "
        "reconstruction (§5). rho per edge uniform in [{}, {}]; {} samples per tree.",
        params.rho_min.value(), params.rho_max.value(), m.samples));
    verdict.notes.push_back(table);
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "joma.hblt_cooccurrence",
        .family = "joma",
        .paper = "Tian et al., JoMA (ICLR 2024)",
        .source = "specs/joma.md §5 (Theorem 5), §7 claim 9",
        .tag = Provenance::reconstructed,
        .statement = "In a hierarchical binary latent tree with symmetric channels, the co-occurrence of two leaves "
                     "is fixed by their lowest common ancestor's prior and the products of edge correlations on "
                     "both paths.",
        .latex = R"(P(y_l=1\mid y_m=1)=\tfrac12\bigl(1+\rho^{H_l+H_m}\bigr)\ \text{(uniform }\rho,\ P(y_\gamma=1)=\tfrac12))",
        .simulation = "Top-down samples of random complete binary-latent trees; Monte-Carlo conditional frequencies "
                      "of random leaf pairs.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"correlation_squared", "R_l R_m replaced by (R_l R_m)^2", [](Settings& s) { s.correlation_power = 2; }},
        {"rho_5_percent", "every edge correlation rho 5% too small (small error in one coefficient)",
         [](Settings& s) { s.rho_factor = 0.95; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_hblt_cooccurrence() { return std::make_unique<HbltCooccurrence>(); }

}  // namespace dyncheck::checks::joma
