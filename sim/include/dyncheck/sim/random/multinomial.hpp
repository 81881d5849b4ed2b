#pragma once
// Multinomial counts by sequential conditional binomials.

#include <cstdint>
#include <span>

#include "dyncheck/sim/random/xoshiro256plusplus.hpp"

namespace dyncheck::sim {

/**
 * counts ~ Multinomial(n, p / sum(p)) by the conditional decomposition
 * \f[ C_i \mid C_0, \dots, C_{i-1} \sim \mathrm{Binomial}\Bigl(n - \sum_{j<i} C_j,\;
 *     \frac{p_i}{S_i}\Bigr),\qquad S_i = \sum_{j \ge i} p_j, \f]
 * for \f$i = 0, \dots, K-2\f$, and \f$C_{K-1}\f$ = the rest (e.g. Devroye 1986, XI.1.4). The
 * tail sums \f$S_i\f$ are accumulated from the back, so \f$p_i \le S_i\f$ holds in floating
 * point and the conditional probability never exceeds 1 (no cancellation as with \f$1 -
 * \sum_{j<i} p_j\f$). Once the remaining count is 0 the rest are set to 0 without drawing.
 * Exact as binomial is; cost O(K) binomials, independent of n.
 *
 * Throws std::invalid_argument if the sizes differ, the probabilities fail the Categorical
 * checks (empty, negative, non-finite, all zero, sum overflow), or n > 2^53.
 */
void multinomial(Rng& rng, std::uint64_t n, std::span<const double> probabilities,
                 std::span<std::uint64_t> counts);

}  // namespace dyncheck::sim
