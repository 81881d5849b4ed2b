// sim/joma/hierarchy.hpp: the structural facts of the Table 1 generator and the script's correlation.
#include "dyncheck/sim/joma/hierarchy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "dyncheck/sim/random/derive_stream.hpp"

namespace dyncheck::sim::joma {
namespace {

Hierarchy paper_hierarchy(std::uint64_t seed, std::vector<int> latents = {10, 20, 20}, std::vector<int> p = {3, 3, 3}) {
  Rng rng = derive_stream(seed, "hierarchy", 0);
  return make_hierarchy({100, 30, std::move(latents), std::move(p)}, rng);
}

// The descendant leaves of class c, computed from children alone (independently of Hierarchy::active).
std::set<std::int64_t> descendant_leaves(const Hierarchy& h, int c) {
  std::set<int> current{c};
  for (int l = h.levels() - 1; l >= 0; --l) {
    std::set<int> next;
    for (int k : current) {
      for (int child : h.children[static_cast<std::size_t>(l)][static_cast<std::size_t>(k)]) next.insert(child);
    }
    current = next;
  }
  return {current.begin(), current.end()};
}

TEST(SimJomaHierarchy, PerLevelCountsAndDistinctSortedSubsets) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const Hierarchy h = paper_hierarchy(seed);
    ASSERT_EQ(h.children.size(), 3U);
    int below = 99;
    for (std::size_t l = 0; l < 3; ++l) {
      ASSERT_EQ(h.children[l].size(), static_cast<std::size_t>(h.spec.latents[l]));
      std::set<std::vector<int>> distinct;
      for (const auto& ch : h.children[l]) {
        ASSERT_EQ(ch.size(), 3U);
        EXPECT_TRUE(std::is_sorted(ch.begin(), ch.end()));
        EXPECT_EQ(std::set<int>(ch.begin(), ch.end()).size(), ch.size());  // no repeated unit
        EXPECT_GE(ch.front(), 0);
        EXPECT_LT(ch.back(), below);
        distinct.insert(ch);
      }
      EXPECT_EQ(distinct.size(), h.children[l].size());  // distinct within a level
      below = h.spec.latents[l];
    }
  }
}

TEST(SimJomaHierarchy, EverySequenceIsItsClassDescendantsPrePaddedInIncreasingOrder) {
  const Hierarchy h = paper_hierarchy(7);
  Rng rng = derive_stream(7, "labels", 0);
  const auto labels = sample_labels(h, 500, rng);
  const auto x = sequences(h, labels);
  ASSERT_EQ(x.size(), 500U * 30U);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    ASSERT_GE(labels[i], 0);
    ASSERT_LT(labels[i], 20);
    const auto leaves = descendant_leaves(h, static_cast<int>(labels[i]));
    const std::size_t pad = 30 - leaves.size();
    for (std::size_t t = 0; t < pad; ++t) EXPECT_EQ(x[i * 30 + t], 99);  // padding first
    const std::vector<std::int64_t> tail(x.begin() + static_cast<std::ptrdiff_t>(i * 30 + pad),
                                         x.begin() + static_cast<std::ptrdiff_t>((i + 1) * 30));
    EXPECT_EQ(tail, std::vector<std::int64_t>(leaves.begin(), leaves.end()));  // the union, increasing
    for (const auto token : tail) EXPECT_LT(token, 99);  // leaves only, never the padding token
  }
}

TEST(SimJomaHierarchy, ActiveLatentsAreTheTopDownUnionsAndTheIndicatorsMatch) {
  const Hierarchy h = paper_hierarchy(3);
  for (int c = 0; c < h.classes(); ++c) {
    const auto& active = h.active[static_cast<std::size_t>(c)];
    EXPECT_EQ(active.back(), std::vector<int>{c});
    for (int l = h.levels() - 1; l >= 1; --l) {
      std::set<int> below;
      for (int k : active[static_cast<std::size_t>(l)]) {
        for (int ch : h.children[static_cast<std::size_t>(l)][static_cast<std::size_t>(k)]) below.insert(ch);
      }
      EXPECT_EQ(std::vector<int>(below.begin(), below.end()), active[static_cast<std::size_t>(l - 1)]);
    }
  }
  const std::vector<std::int64_t> labels{0, 5, 19};
  for (int l = 0; l < 3; ++l) {
    const auto x = latent_indicators(h, l, labels);
    const auto k = static_cast<std::size_t>(h.spec.latents[static_cast<std::size_t>(l)]);
    ASSERT_EQ(x.size(), 3 * k);
    for (std::size_t i = 0; i < 3; ++i) {
      const auto& a = h.active[static_cast<std::size_t>(labels[i])][static_cast<std::size_t>(l)];
      double ones = 0;
      for (std::size_t j = 0; j < k; ++j) ones += x[i * k + j];
      EXPECT_EQ(ones, static_cast<double>(a.size()));
      for (int j : a) EXPECT_EQ(x[i * k + static_cast<std::size_t>(j)], 1.0);
    }
  }
}

TEST(SimJomaHierarchy, DeterministicPerSeedAndDifferentAcrossSeeds) {
  EXPECT_EQ(paper_hierarchy(11).tokens, paper_hierarchy(11).tokens);
  EXPECT_EQ(paper_hierarchy(11).children, paper_hierarchy(11).children);
  EXPECT_NE(paper_hierarchy(11).children, paper_hierarchy(12).children);
}

TEST(SimJomaHierarchy, LabelsAreUniformWithinFiveSigma) {
  const Hierarchy h = paper_hierarchy(5);
  Rng rng = derive_stream(5, "labels", 1);
  const std::size_t n = 40000;
  const auto labels = sample_labels(h, n, rng);
  std::vector<double> count(20, 0.0);
  for (auto y : labels) count[static_cast<std::size_t>(y)] += 1;
  for (double c : count) EXPECT_NEAR(c / n, 0.05, 5 * std::sqrt(0.05 * 0.95 / n));  // 20 x 5.7e-7 false-failure
}

TEST(SimJomaHierarchy, RefusesImpossibleSpecsNamingTheField) {
  Rng rng(1);
  auto message = [&](HierarchySpec spec) {
    try {
      make_hierarchy(spec, rng);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no throw");
  };
  EXPECT_NE(message({2, 30, {10}, {3}}).find("vocabulary"), std::string::npos);
  EXPECT_NE(message({100, 30, {10, 20}, {3}}).find("one entry per level"), std::string::npos);
  EXPECT_NE(message({100, 30, {10, 200}, {3, 3}}).find("latents"), std::string::npos);  // C(10, 3) = 120 < 200
  EXPECT_NE(message({100, 30, {10, 20}, {3, 11}}).find("combinations"), std::string::npos);
  EXPECT_NE(message({100, 5, {10, 20, 20}, {3, 3, 3}}).find("more leaves than the length"), std::string::npos);
  // C(10, 3) = 120 distinct subsets exist: all of them can be drawn.
  EXPECT_EQ(make_hierarchy({100, 30, {10, 120}, {3, 3}}, rng).children[1].size(), 120U);
}

TEST(SimJomaHierarchy, ExactCooccurrenceAndCommonAncestorLevelAgreeWithTheStructure) {
  const Hierarchy h = paper_hierarchy(9);
  const auto used = used_leaves(h);
  ASSERT_FALSE(used.empty());
  for (const int m : used) {
    EXPECT_EQ(leaf_cooccurrence(h, m, m), 1.0);
    for (const int l : used) {
      // Counted by hand over the classes.
      int both = 0, with_m = 0;
      for (int c = 0; c < h.classes(); ++c) {
        const auto leaves = descendant_leaves(h, c);
        with_m += leaves.count(m) != 0 ? 1 : 0;
        both += leaves.count(m) != 0 && leaves.count(l) != 0 ? 1 : 0;
      }
      EXPECT_EQ(leaf_cooccurrence(h, l, m), static_cast<double>(both) / with_m);
      const int level = common_ancestor_level(h, l, m);
      EXPECT_GE(level, -1);
      EXPECT_LT(level, 3);
      if (both > 0) {
        EXPECT_GE(level, 0);  // a class holding both is a common ancestor at level 2 at the latest
      }
      if (level == -1) {
        EXPECT_EQ(both, 0);
      }
    }
  }
  // Two leaves of one level-0 latent have their common ancestor at level 0.
  const auto& first = h.children[0][0];
  EXPECT_EQ(common_ancestor_level(h, first[0], first[1]), 0);
  EXPECT_THROW((void)leaf_cooccurrence(h, 0, 99), std::invalid_argument);  // the padding token is no leaf
}

TEST(SimJomaHierarchy, BestCorrelationIsTheScriptsComputeCorrMaxedOverHiddenUnits) {
  // x: 4 samples x 2 latents; y: 4 samples x 3 hidden units.
  const std::vector<double> x{1, 0, 0, 1, 1, 1, 0, 0};
  const std::vector<double> y{2, 0, 1, 0, 5, 1, 2, 5, 0, 0, 0, 1};
  // Hidden 0 = 2 x latent 0 exactly: correlation 1 in both versions (up to the 1e-9 in the norms).
  const auto zero = best_correlations(x, 2, y, 3, true);
  const auto raw = best_correlations(x, 2, y, 3, false);
  EXPECT_NEAR(zero[0], 1.0, 1e-8);
  EXPECT_NEAR(raw[0], 1.0, 1e-8);
  // Latent 1 = (0, 1, 1, 0): by hand, raw cosine with hidden 1 = (0, 5, 5, 0) is 1.
  EXPECT_NEAR(raw[1], 1.0, 1e-8);
  EXPECT_NEAR(zero[1], 1.0, 1e-8);
  // A constant latent has zero centred norm: the script's 1e-9 guard gives correlation 0.
  const std::vector<double> constant{1, 1, 1, 1};
  EXPECT_EQ(best_correlations(constant, 1, y, 3, true)[0], 0.0);
  // Pearson by hand for latent (1,0,0,1) vs hidden 2 = (1, 1, 0, 1): means 0.5, 0.75.
  const std::vector<double> l{1, 0, 0, 1}, hcol{1, 1, 0, 1};
  const double pearson = (0.5 * 0.25 + -0.5 * 0.25 + -0.5 * -0.75 + 0.5 * 0.25) / (1.0 * std::sqrt(0.75));
  EXPECT_NEAR(best_correlations(l, 1, hcol, 1, true)[0], pearson, 1e-8);
}

}  // namespace
}  // namespace dyncheck::sim::joma
