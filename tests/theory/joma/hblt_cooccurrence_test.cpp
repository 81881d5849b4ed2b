// theory/joma/hblt_cooccurrence.hpp against brute-force enumeration of every assignment.
#include <dyncheck/theory/joma/hblt_cooccurrence.hpp>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

namespace dyncheck::theory::joma {
namespace {

double enumerate_conditional(const BinaryLatentTree<double>& tree, int l, int m) {
  const std::size_t n = tree.parent.size();
  double joint = 0, marginal = 0;
  for (unsigned mask = 0; mask < (1U << n); ++mask) {
    double p = (mask & 1U) ? tree.root_prior : 1 - tree.root_prior;
    for (std::size_t i = 1; i < n; ++i) {
      const bool same = ((mask >> i) & 1U) == ((mask >> static_cast<unsigned>(tree.parent[i])) & 1U);
      p *= same ? (1 + tree.rho[i]) / 2 : (1 - tree.rho[i]) / 2;
    }
    if ((mask >> static_cast<unsigned>(m)) & 1U) {
      marginal += p;
      if ((mask >> static_cast<unsigned>(l)) & 1U) joint += p;
    }
  }
  return joint / marginal;
}

RC_GTEST_PROP(TheoryJomaHblt, MatchesEnumeration, ()) {
  const int n = *rc::gen::inRange(2, 11);
  BinaryLatentTree<double> tree{{-1}, {0.0}, 0.05 + 0.01 * *rc::gen::inRange(0, 91)};
  for (int i = 1; i < n; ++i) {
    tree.parent.push_back(*rc::gen::inRange(0, i));
    tree.rho.push_back(-0.95 + 0.01 * *rc::gen::inRange(0, 191));
  }
  const int l = *rc::gen::inRange(0, n);
  const int m = *rc::gen::suchThat(rc::gen::inRange(0, n), [l](int v) { return v != l; });
  RC_ASSERT(std::abs(leaf_cooccurrence(tree, l, m) - enumerate_conditional(tree, l, m)) < 1e-13);
}

TEST(TheoryJomaHblt, UniformDepthFormula) {
  // LCA = root with prior 1/2, both leaves at height 2: ½(1 + ρ^4).
  BinaryLatentTree<double> tree{{-1, 0, 0, 1, 2}, {0, 0.6, 0.6, 0.6, 0.6}, 0.5};
  EXPECT_NEAR(leaf_cooccurrence(tree, 3, 4), 0.5 * (1 + std::pow(0.6, 4)), 1e-15);
}

TEST(TheoryJomaHblt, RejectsBadTrees) {
  BinaryLatentTree<double> tree{{-1, 0}, {0, 0.5}, 0.5};
  EXPECT_THROW(leaf_cooccurrence(tree, 1, 1), std::invalid_argument);
  tree.parent[1] = 1;
  EXPECT_THROW(leaf_cooccurrence(tree, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::joma
