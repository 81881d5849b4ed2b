#pragma once
// Hierarchical binary latent tree generator (specs/joma.md §5 [reconstructed]): top-down, each
// edge a symmetric binary channel.

#include <vector>

#include "dyncheck/sim/random/rng.hpp"

namespace dyncheck::sim::joma {

struct LatentTree {
  std::vector<int> parent;   ///< parent[0] = -1, parent[i] < i
  std::vector<double> rho;   ///< P(child = parent) = (1 + rho[i]) / 2; rho[0] unused
  double root_prior = 0.5;   ///< P(root = 1)
};

/// Complete tree of the given depth (root at depth 0) and branching factor, in breadth-first
/// order, with rho per edge drawn uniformly from [rho_min, rho_max].
LatentTree complete_latent_tree(int depth, int branching, double rho_min, double rho_max, double root_prior, Rng& rng);

/// Indices of the leaves (nodes without children), in increasing order.
std::vector<int> leaves(const LatentTree& tree);

/// One top-down sample of every node's value (0/1), in node order.
std::vector<unsigned char> sample_latent_tree(const LatentTree& tree, Rng& rng);

}  // namespace dyncheck::sim::joma
