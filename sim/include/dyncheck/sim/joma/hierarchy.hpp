#pragma once
// The combinatorial latent hierarchy of JoMA's Table 1 (specs/joma.md §5 [code]; the authors'
// ssl/real-dataset/decoder_only_hier.py, class Dataset, commit 2471901 of facebookresearch/luckmatters),
// and the script's measure of how well an FFN layer represents a level of latents (compute_corr).
//
// Generator (deterministic given the hierarchy; only the class label is random):
//   - leaves are the tokens 0..M-2; token M-1 is the padding token;
//   - level 0 has n_0 latents, each a fixed uniformly random p_0-subset of the M-1 leaves; level l >= 1 has
//     n_l latents, each a uniformly random p_l-subset of the n_{l-1} latents of level l-1; the subsets are
//     distinct within a level (the script's rejection sampling); the top level's latents are the classes;
//   - a sample: label y ~ U{0..n_top-1}; the active latents of level l are the union of the children of the
//     active latents of level l+1 (the top level: {y}); the tokens are the union of the children of the
//     active level-0 latents, in increasing order, placed at the end of a length-L sequence, pre-padded
//     with M-1. (The script writes `list(set)`: CPython's iteration order of a set of small ints, which is
//     increasing except where values wrap its hash table; increasing order is what its comment intends:
//     "keep the order to make the combination easier to learn".)
// Random numbers: our own engine and samplers (sim/random), so the hierarchy for a seed is not Python's;
// its distribution is the script's (a uniform p-subset is what `shuffle; sorted(indices[:p])` draws).

#include <cstdint>
#include <span>
#include <vector>

#include "dyncheck/sim/random/rng.hpp"

namespace dyncheck::sim::joma {

struct HierarchySpec {
  int vocabulary = 100;  ///< M: leaves 0..M-2, padding M-1 (the script's M)
  int length = 30;       ///< L: sequence length (the script's L)
  /// n_l per level, bottom up; the last level's latents are the classes (the script's num_tokens with the
  /// trailing null replaced by num_class).
  std::vector<int> latents{10, 20, 20};
  /// p_l per level: a level-l latent is a p_l-subset of level l-1 (the leaves for l = 0).
  std::vector<int> combinations{3, 3, 3};
};

struct Hierarchy {
  HierarchySpec spec;
  /// children[l][k]: the sorted p_l-subset of level l-1 units (leaves for l = 0) of latent k of level l.
  std::vector<std::vector<std::vector<int>>> children;
  /// active[c][l]: the sorted active latents of level l for class c (active[c].back() == {c}).
  std::vector<std::vector<std::vector<int>>> active;
  /// tokens[c]: the length-L pre-padded token sequence of class c.
  std::vector<std::vector<std::int64_t>> tokens;

  [[nodiscard]] int levels() const { return static_cast<int>(spec.latents.size()); }
  [[nodiscard]] int classes() const { return spec.latents.back(); }
  [[nodiscard]] std::int64_t padding() const { return spec.vocabulary - 1; }
};

/// Draws the hierarchy. Throws std::invalid_argument naming the field when: M < 3, L < 1, no level, sizes of
/// `latents` and `combinations` differ, some p_l is outside [1, n_{l-1}], some n_l exceeds C(n_{l-1}, p_l)
/// (distinct subsets would not exist), or some class has more than L leaves.
Hierarchy make_hierarchy(const HierarchySpec& spec, Rng& rng);

/// `count` labels, each uniform on the classes (the script's torch.randint(0, num_class)).
std::vector<std::int64_t> sample_labels(const Hierarchy& hierarchy, std::size_t count, Rng& rng);

/// The token sequences of `labels`, row-major [labels.size() x L].
std::vector<std::int64_t> sequences(const Hierarchy& hierarchy, std::span<const std::int64_t> labels);

/// The script's gts_activated[level]: the 0/1 activation of each latent of `level` for each label,
/// row-major [labels.size() x n_level].
std::vector<double> latent_indicators(const Hierarchy& hierarchy, int level, std::span<const std::int64_t> labels);

/// P(leaf l in the sequence | leaf m in the sequence) under uniform labels, exactly: the number of classes whose
/// sequence holds both over the number that hold m. Throws std::invalid_argument when no class holds m.
double leaf_cooccurrence(const Hierarchy& hierarchy, int l, int m);

/// The lowest level k whose some latent has both leaves among its descendants (their closest common ancestor
/// is at level k, k + 1 edges above the leaves); -1 when no latent of any level has both.
int common_ancestor_level(const Hierarchy& hierarchy, int l, int m);

/// The leaves that appear in some class's sequence, increasing.
std::vector<int> used_leaves(const Hierarchy& hierarchy);

/// The script's compute_corr followed by max over hidden units: for latent k (column of x, [n x k_count]) the
/// largest over hidden units h (columns of y, [n x h_count]) of
///   <x_k, y_h> / ((|x_k| + 1e-9) (|y_h| + 1e-9)),
/// with x and y centred column-wise first when `zero_mean` (the script's zero_mean=True: Pearson's
/// correlation; False: the cosine of the raw vectors). Returns k_count values.
std::vector<double> best_correlations(std::span<const double> x, std::size_t k_count, std::span<const double> y,
                                      std::size_t h_count, bool zero_mean);

}  // namespace dyncheck::sim::joma
