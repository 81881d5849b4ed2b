#pragma once
// Drawing SCB examples in O(T) each, without allocation (specs/scb.md §1).

#include <cstdint>
#include <span>
#include <vector>

#include "dyncheck/sim/random/uniform_index.hpp"
#include "dyncheck/sim/random/xoshiro256plusplus.hpp"
#include "dyncheck/sim/scb/instance.hpp"

namespace dyncheck::sim::scb {

/// One SCB example: the context x_1..x_T, the query x_{T+1}, the position s the output was read
/// from and the output x_o (0-based tokens and positions).
struct Example {
  std::vector<int> tokens;  ///< x_1..x_T
  int query = 0;  ///< k = x_{T+1}
  int position = 0;  ///< s ~ q^{(k)}
  int output = 0;  ///< x_o ~ P(· | x_s)
};

/**
 * Walker's alias table drawn with ONE engine output per draw, for the hot token loop.
 *
 * Construction: Vose's stable construction (as in Categorical) in double, then each column's
 * acceptance probability p_c is stored as the integer threshold \f$\lfloor p_c 2^{64}\rfloor\f$,
 * and a column with \f$p_c \ge 1\f$ aliases itself.
 *
 * Draw: x = engine output, \f$x K = 2^{64} c + l\f$ (one 64×64→128 multiplication); return c if
 * \f$l < \mathrm{threshold}_c\f$, else alias_c. Given c, l runs through an arithmetic progression of
 * step K over \f$[0, 2^{64})\f$, so \f$\Pr(c) = 1/K\f$ and \f$\Pr(l < \theta \mid c) =
 * \theta/2^{64}\f$, each up to \f$K/2^{64}\f$; the realised probabilities equal the normalised
 * weights to within \f$(K + 2) \cdot 2^{-53}\f$ absolute (table rounding included). Integer-only
 * draws, so a seed gives the same stream on every platform.
 */
class AliasTable {
 public:
  AliasTable() = default;
  /// Throws std::invalid_argument for empty, negative, non-finite or all-zero weights.
  explicit AliasTable(std::span<const double> weights);

  int operator()(Rng& rng) const noexcept {
    const detail::Product128 m = detail::multiply_64x64(rng(), size_);
    const Entry& e = entries_.data()[m.high];
    // Branch-free select: the comparison is unpredictable, and a mispredicted branch per token
    // would cost more than the rest of the draw.
    const auto column = static_cast<std::uint32_t>(m.high);
    const std::uint32_t keep = 0U - static_cast<std::uint32_t>(m.low < e.threshold);
    return static_cast<int>((column & keep) | (static_cast<std::uint32_t>(e.alias) & ~keep));
  }

  std::size_t size() const noexcept { return entries_.size(); }
  /// The exact probability of drawing i implied by the table (up to the K/2^64 terms above).
  double probability(std::size_t i) const;

 private:
  struct Entry {
    std::uint64_t threshold;
    int alias;
  };
  std::vector<Entry> entries_;
  std::uint64_t size_ = 0;
};

/**
 * The SCB example sampler (specs/scb.md §1): x_1..x_T, x_{T+1} iid ~ μ; k = x_{T+1};
 * s ~ q^{(k)}; x_o ~ P_{:, x_s}. Draw order per example: the T context tokens in order, the query,
 * the position, the output; one engine output each (AliasTable), T + 3 per example.
 * The sampler copies what it needs from the instance; it is immutable and thread-safe.
 */
class Sampler {
 public:
  /// Validates the instance (scb::validate) and builds the alias tables.
  explicit Sampler(const Instance& instance);

  Example sample(Rng& rng) const {
    Example example;
    sample_into(example, rng);
    return example;
  }

  /// Overwrites `example`; allocates only if example.tokens has capacity < T.
  void sample_into(Example& example, Rng& rng) const {
    example.tokens.resize(static_cast<std::size_t>(T_));
    int* tokens = example.tokens.data();
    // A local engine and table keep the engine state in registers through the token loop.
    Rng local = rng;
    const AliasTable& mu = mu_;
    for (int t = 0; t < T_; ++t) tokens[t] = mu(local);
    const int k = mu(local);
    const auto ku = static_cast<std::size_t>(k);
    example.query = k;
    example.position = support_[ku][static_cast<std::size_t>(q_[ku](local))];
    example.output = P_columns_[static_cast<std::size_t>(tokens[example.position])](local);
    rng = local;
  }

  int T() const noexcept { return T_; }
  int N() const noexcept { return static_cast<int>(P_columns_.size()); }
  const AliasTable& mu_table() const noexcept { return mu_; }
  const AliasTable& P_column_table(int j) const { return P_columns_.at(static_cast<std::size_t>(j)); }
  const AliasTable& q_table(int k) const { return q_.at(static_cast<std::size_t>(k)); }

 private:
  int T_ = 0;
  AliasTable mu_;
  std::vector<AliasTable> P_columns_;
  std::vector<AliasTable> q_;
  std::vector<std::vector<int>> support_;
};

}  // namespace dyncheck::sim::scb
