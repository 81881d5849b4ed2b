// dyncheck/theory/joma/hblt_cooccurrence.hpp
//
// Co-occurrence of two leaves of a hierarchical binary latent tree (specs/joma.md §5, Theorem 5
// [reconstructed]; formula [derived]): every edge a symmetric binary channel.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <vector>

namespace dyncheck::theory::joma {

/// A rooted tree of binary latents. Node 0 is the root (parent[0] = -1), parent[i] < i.
/// Edge parent[i] -> i keeps the value with probability \f$(1+\rho_i)/2\f$; P(root = 1) = root_prior.
template <class S>
struct BinaryLatentTree {
  std::vector<int> parent;
  std::vector<S> rho;  ///< rho[0] unused
  S root_prior;
};

/// \f$P(y_l = 1\mid y_m = 1)\f$ for nodes \f$l \ne m\f$ with lowest common ancestor \f$\gamma\f$,
/// \f$R_l = \prod_{e\in\gamma\to l}\rho_e\f$, \f$R_m\f$ likewise, \f$p = P(y_\gamma = 1)\f$:
/// \f[ P(y_l = 1\mid y_m = 1) = \frac{p(1+R_l)(1+R_m) + (1-p)(1-R_l)(1-R_m)}{2\,(1 + (2p-1)R_m)}, \f]
/// which is \f$\tfrac12(1 + R_lR_m)\f$ for \f$p = \tfrac12\f$ (uniform \f$\rho\f$: \f$\tfrac12(1+\rho^{H_l+H_m})\f$).
template <class S>
S leaf_cooccurrence(const BinaryLatentTree<S>& tree, int l, int m) {
  const int n = static_cast<int>(tree.parent.size());
  if (n == 0 || tree.rho.size() != tree.parent.size() || tree.parent[0] != -1) {
    throw std::invalid_argument("leaf_cooccurrence: parent and rho must have one entry per node, parent[0] = -1");
  }
  if (l < 0 || m < 0 || l >= n || m >= n || l == m) throw std::invalid_argument("leaf_cooccurrence: need distinct nodes l, m");
  for (int i = 1; i < n; ++i) {
    if (tree.parent[static_cast<std::size_t>(i)] < 0 || tree.parent[static_cast<std::size_t>(i)] >= i) {
      throw std::invalid_argument("leaf_cooccurrence: parent[i] must be in [0, i)");
    }
  }
  std::vector<bool> on_path_of_m(static_cast<std::size_t>(n), false);
  for (int a = m; a >= 0; a = tree.parent[static_cast<std::size_t>(a)]) on_path_of_m[static_cast<std::size_t>(a)] = true;
  int lca = l;
  while (!on_path_of_m[static_cast<std::size_t>(lca)]) lca = tree.parent[static_cast<std::size_t>(lca)];
  auto path_product = [&](int node) {
    S r = S(1);
    for (int a = node; a != lca; a = tree.parent[static_cast<std::size_t>(a)]) r *= tree.rho[static_cast<std::size_t>(a)];
    return r;
  };
  const S R_l = path_product(l), R_m = path_product(m);
  // P(y_lca = 1): propagate the root prior down, P(child = 1) = (1 + rho (2p - 1)) / 2.
  std::vector<int> chain;
  for (int a = lca; a > 0; a = tree.parent[static_cast<std::size_t>(a)]) chain.push_back(a);
  S p = tree.root_prior;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) p = (S(1) + tree.rho[static_cast<std::size_t>(*it)] * (S(2) * p - S(1))) / S(2);
  return (p * (S(1) + R_l) * (S(1) + R_m) + (S(1) - p) * (S(1) - R_l) * (S(1) - R_m)) /
         (S(2) * (S(1) + (S(2) * p - S(1)) * R_m));
}

}  // namespace dyncheck::theory::joma
