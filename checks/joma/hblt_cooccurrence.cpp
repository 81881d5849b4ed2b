// Claim joma.hblt_cooccurrence  [reconstructed/derived]  (specs/joma.md §5 Theorem 5, §7 claim 9)
//
// Reconstruction of Theorem 5: each edge of the hierarchical binary latent tree is a symmetric channel,
// P(y_β = y_α) = (1 + ρ)/2. With LCA γ, P(y_γ = 1) = p, and R_l = Π ρ along γ → l:
//   \f[ P(y_l = 1\mid y_m = 1) = \frac{p(1+R_l)(1+R_m) + (1-p)(1-R_l)(1-R_m)}{2(1 + (2p-1)R_m)}
//       \overset{p=1/2}{=} \tfrac12(1 + \rho^{H_l+H_m}). \f]
// Simulated: N top-down samples of random complete trees (depth, branching, ρ per edge, root prior drawn
// per tree), Monte-Carlo frequency of y_l = 1 among samples with y_m = 1, for random leaf pairs.
// Tolerance: statistical, z_{δ'/2} sqrt(p(1-p)/N_m) under the theory's p (N_m ≥ 1000 so the normal
// approximation of a binomial proportion holds), δ' = the claim's share / number of pairs (Bonferroni).
// Shown: per tree the pair with the largest margin.
// Mutant correlation_squared: R_l R_m replaced by (R_l R_m)^2.

#include <fmt/format.h>

#include <boost/math/distributions/normal.hpp>
#include <cmath>

#include "dyncheck/checks/experiment.hpp"
#include "claims.hpp"
#include "dyncheck/sim/joma/hblt.hpp"
#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/sim/random/uniform_index.hpp"
#include "dyncheck/theory/joma/hblt_cooccurrence.hpp"

namespace dyncheck::checks::joma {
namespace {

struct PairResult {
  int l, m;
  double theory, measured, sigma;
  long long n_m;
};

struct TreeResult {
  int depth, branching;
  double root_prior;
  std::vector<PairResult> pairs;
};

class HbltCooccurrence final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    const std::size_t trees = context.budget.pick<std::size_t>(2, 6, 20);
    const std::size_t pairs = 3;
    const long long samples = context.budget.pick<long long>(20000, 200000, 2000000);
    const bool mutant = context.mutant_is("correlation_squared");
    const std::vector<TreeResult> results =
        sim::run_replicates(replicate_options(context, "trees", trees), [&](std::size_t, sim::Rng& rng) {
          const int depth = 2 + static_cast<int>(sim::uniform_index(rng, 3));      // 2..4
          const int branching = 2 + static_cast<int>(sim::uniform_index(rng, 2));  // 2..3
          const double root_prior = 0.2 + 0.6 * sim::uniform01(rng);
          const sim::joma::LatentTree tree = sim::joma::complete_latent_tree(depth, branching, 0.3, 0.95, root_prior, rng);
          const std::vector<int> leaves = sim::joma::leaves(tree);
          TreeResult result{depth, branching, root_prior, {}};
          std::vector<std::pair<int, int>> chosen;
          for (std::size_t k = 0; k < pairs; ++k) {
            const int l = leaves[sim::uniform_index(rng, leaves.size())];
            int m = l;
            while (m == l) m = leaves[sim::uniform_index(rng, leaves.size())];
            chosen.emplace_back(l, m);
          }
          std::vector<long long> joint(pairs, 0), marginal(pairs, 0);
          for (long long s = 0; s < samples; ++s) {
            const std::vector<unsigned char> y = sim::joma::sample_latent_tree(tree, rng);
            for (std::size_t k = 0; k < pairs; ++k) {
              if (y[static_cast<std::size_t>(chosen[k].second)]) {
                ++marginal[k];
                joint[k] += y[static_cast<std::size_t>(chosen[k].first)];
              }
            }
          }
          const theory::joma::BinaryLatentTree<double> theory_tree{tree.parent, tree.rho, tree.root_prior};
          for (std::size_t k = 0; k < pairs; ++k) {
            const auto [l, m] = chosen[k];
            double p = theory::joma::leaf_cooccurrence(theory_tree, l, m);
            if (mutant) {
              // (R_l R_m)² instead of R_l R_m: recompute through a tree whose ρ are squared.
              theory::joma::BinaryLatentTree<double> squared = theory_tree;
              for (double& r : squared.rho) r = r * r;
              p = theory::joma::leaf_cooccurrence(squared, l, m);
            }
            const double n_m = static_cast<double>(marginal[k]);
            result.pairs.push_back({l, m, p, static_cast<double>(joint[k]) / n_m, std::sqrt(p * (1 - p) / n_m), marginal[k]});
          }
          return result;
        });
    const double delta = context.false_failure_rate() / static_cast<double>(trees * pairs);
    const double z = boost::math::quantile(boost::math::complement(boost::math::normal(), delta / 2));
    Verdict verdict;
    Plot plot{"cooccurrence", "P(y_l = 1 | y_m = 1): Monte Carlo against the product-of-channels formula",
              "formula", "Monte Carlo", false, false, {}};
    Curve points{"leaf pairs", Curve::Style::points, {}, {}, {}, {}};
    Curve diagonal{"identity", Curve::Style::line, {0.5, 1.0}, {0.5, 1.0}, {}, {}};
    for (std::size_t t = 0; t < results.size(); ++t) {
      const TreeResult& r = results[t];
      std::size_t worst = 0;
      for (std::size_t k = 0; k < r.pairs.size(); ++k) {
        const PairResult& pr = r.pairs[k];
        points.x.push_back(pr.theory);
        points.y.push_back(pr.measured);
        points.lower.push_back(pr.measured - z * pr.sigma);
        points.upper.push_back(pr.measured + z * pr.sigma);
        if (std::abs(pr.measured - pr.theory) / pr.sigma >
            std::abs(r.pairs[worst].measured - r.pairs[worst].theory) / r.pairs[worst].sigma)
          worst = k;
      }
      const PairResult& w = r.pairs[worst];
      if (w.n_m < 1000) throw std::runtime_error("fewer than 1000 samples with y_m = 1; the normal approximation is not justified");
      verdict.comparisons.push_back(compare(
          fmt::format("tree {} (depth {}, branching {}, root prior {:.2f}): P(y_{} = 1 | y_{} = 1), worst of {} pairs", t,
                      r.depth, r.branching, r.root_prior, w.l, w.m, pairs),
          {w.theory, 1e-15, "double evaluation of a product of <= 10 factors"},
          {w.measured, z * w.sigma,
           fmt::format("normal approximation z = {:.2f} (two-sided delta = {:.2g}, Bonferroni over {} pairs) x "
                       "sqrt(p(1-p)/N_m), N_m = {}",
                       z, delta, trees * pairs, w.n_m)},
          {0.0, "none: exact formula for the reconstructed channel model"},
          {0.02, "detects a 0.02 error in the conditional probability"}));
    }
    plot.curves = {diagonal, points};
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(
        "[reconstructed] Theorem 5's formula is not public; the channel model and the formula are the spec's "
        "reconstruction (§5). rho per edge uniform in [0.3, 0.95].");
    return verdict;
  }

 private:
  ClaimInfo info_{
      .id = "joma.hblt_cooccurrence",
      .family = "joma",
      .paper = "Tian et al., JoMA (ICLR 2024)",
      .source = "specs/joma.md §5 (Theorem 5), §7 claim 9",
      .tag = Provenance::reconstructed,
      .statement = "In a hierarchical binary latent tree with symmetric channels, the co-occurrence of two leaves is "
                   "fixed by their lowest common ancestor's prior and the products of edge correlations on both paths.",
      .latex = R"(P(y_l=1\mid y_m=1)=\tfrac12\bigl(1+\rho^{H_l+H_m}\bigr)\ \text{(uniform }\rho,\ P(y_\gamma=1)=\tfrac12))",
      .simulation = "Top-down samples of random complete binary-latent trees; Monte-Carlo conditional frequencies of "
                    "random leaf pairs.",
      .params = {},
      .mutants = {{"correlation_squared", "R_l R_m replaced by (R_l R_m)^2"}},
  };
};

}  // namespace

std::unique_ptr<Claim> make_hblt_cooccurrence() { return std::make_unique<HbltCooccurrence>(); }

}  // namespace dyncheck::checks::joma
