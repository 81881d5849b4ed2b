#pragma once
// Categorical sampling in O(1) per draw: Vose's alias method.

#include <cstddef>
#include <initializer_list>
#include <span>
#include <vector>

#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/sim/random/uniform_index.hpp"

namespace dyncheck::sim {

/**
 * Draws \f$i \in \{0, \dots, K-1\}\f$ with probability \f$p_i / \sum_j p_j\f$ by the alias
 * method (A. J. Walker 1977; construction of M. D. Vose, "A linear algorithm for generating
 * random numbers with a given distribution", IEEE TSE 17(9), 1991).
 *
 * Construction, deterministic given the input: scale \f$q_i = K\,(p_i / \sum_j p_j)\f$
 * (sum in index order); push indices with \f$q_i < 1\f$ on a stack `small` and the others on a
 * stack `large`, both in increasing index order. While both are non-empty, pop l from small and
 * g from large, set \f$\mathrm{prob}_l = q_l,\ \mathrm{alias}_l = g\f$ and
 * \f$q_g \leftarrow (q_g + q_l) - 1\f$ (Vose's rounding-friendly order), and push g on small if
 * \f$q_g < 1\f$, else on large. Remaining entries get \f$\mathrm{prob} = 1\f$ (they are exactly
 * 1 up to rounding), except a zero-weight entry, which keeps prob 0 and aliases the index of the
 * largest weight, so a category of weight 0 is never drawn.
 *
 * Draw: column \f$c\f$ = uniform_index(K), then U = uniform01; return c if \f$U <
 * \mathrm{prob}_c\f$, else \f$\mathrm{alias}_c\f$. Two engine outputs per draw (one more with
 * probability < K/2^64). The realized probabilities equal the normalized weights up to the
 * rounding of the table, about \f$K\cdot 2^{-53}\f$ absolute, plus \f$2^{-53}\f$ from U.
 *
 * Throws std::invalid_argument if the weights are empty, any is negative or not finite, all
 * are zero, or their sum overflows. No libm functions.
 */
/// Vose's construction as specified above: for each column, the probability of keeping it and its
/// alias. `who` names the caller in the std::invalid_argument thrown for bad weights. The one
/// construction of an alias table in dyncheck (Categorical and scb::AliasTable use it).
struct AliasColumns {
  std::vector<double> prob;
  std::vector<std::size_t> alias;
};
AliasColumns vose_alias_columns(std::span<const double> weights, const char* who);

class Categorical {
 public:
  explicit Categorical(std::span<const double> probabilities);
  /// For literals, e.g. Categorical({0.2, 0.8}) (std::span has no initializer_list
  /// constructor before C++26).
  explicit Categorical(std::initializer_list<double> probabilities)
      : Categorical(std::span<const double>(probabilities.begin(), probabilities.size())) {}

  std::size_t operator()(Rng& rng) const {
    const auto column = static_cast<std::size_t>(uniform_index(rng, prob_.size()));
    return uniform01(rng) < prob_[column] ? column : alias_[column];
  }

  std::size_t size() const noexcept { return prob_.size(); }

  /// The normalized probability \f$p_i / \sum_j p_j\f$ of category i (as a double).
  double probability(std::size_t i) const { return normalized_.at(i); }

  /// The alias table: column c yields c with probability table_probabilities()[c], else
  /// table_aliases()[c]. Exposed so tests can check the implied distribution exactly.
  std::span<const double> table_probabilities() const noexcept { return prob_; }
  std::span<const std::size_t> table_aliases() const noexcept { return alias_; }

 private:
  std::vector<double> prob_;
  std::vector<std::size_t> alias_;
  std::vector<double> normalized_;
};

}  // namespace dyncheck::sim
