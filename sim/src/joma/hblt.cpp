#include "dyncheck/sim/joma/hblt.hpp"

#include <stdexcept>

#include "dyncheck/sim/random/bernoulli.hpp"
#include "dyncheck/sim/random/uniform01.hpp"

namespace dyncheck::sim::joma {

LatentTree complete_latent_tree(int depth, int branching, double rho_min, double rho_max, double root_prior, Rng& rng) {
  if (depth < 1 || branching < 1 || !(rho_min >= -1 && rho_min <= rho_max && rho_max <= 1) ||
      !(root_prior >= 0 && root_prior <= 1)) {
    throw std::invalid_argument("complete_latent_tree: needs depth, branching >= 1, -1 <= rho_min <= rho_max <= 1, root_prior in [0, 1]");
  }
  LatentTree tree{{-1}, {0.0}, root_prior};
  std::vector<int> level{0};
  for (int level_index = 0; level_index < depth; ++level_index) {
    std::vector<int> next;
    for (int node : level) {
      for (int c = 0; c < branching; ++c) {
        tree.parent.push_back(node);
        tree.rho.push_back(rho_min + (rho_max - rho_min) * uniform01(rng));
        next.push_back(static_cast<int>(tree.parent.size()) - 1);
      }
    }
    level = std::move(next);
  }
  return tree;
}

std::vector<int> leaves(const LatentTree& tree) {
  std::vector<bool> has_child(tree.parent.size(), false);
  for (std::size_t i = 1; i < tree.parent.size(); ++i) has_child[static_cast<std::size_t>(tree.parent[i])] = true;
  std::vector<int> out;
  for (std::size_t i = 0; i < tree.parent.size(); ++i) {
    if (!has_child[i]) out.push_back(static_cast<int>(i));
  }
  return out;
}

std::vector<unsigned char> sample_latent_tree(const LatentTree& tree, Rng& rng) {
  if (tree.parent.empty() || tree.parent.size() != tree.rho.size() || tree.parent[0] != -1) {
    throw std::invalid_argument("sample_latent_tree: parent and rho must have one entry per node, parent[0] = -1");
  }
  std::vector<unsigned char> value(tree.parent.size());
  value[0] = bernoulli(rng, tree.root_prior) ? 1 : 0;
  for (std::size_t i = 1; i < tree.parent.size(); ++i) {
    const int p = tree.parent[i];
    if (p < 0 || static_cast<std::size_t>(p) >= i) throw std::invalid_argument("sample_latent_tree: parent[i] must be in [0, i)");
    const bool keep = bernoulli(rng, (1.0 + tree.rho[i]) / 2.0);
    value[i] = keep ? value[static_cast<std::size_t>(p)] : static_cast<unsigned char>(1 - value[static_cast<std::size_t>(p)]);
  }
  return value;
}

}  // namespace dyncheck::sim::joma
