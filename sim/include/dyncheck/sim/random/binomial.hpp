#pragma once
// Binomial(n, p) variates: inversion for small means, BTRD (Hörmann 1993) otherwise.

#include <cstdint>

#include "dyncheck/sim/random/xoshiro256plusplus.hpp"

namespace dyncheck::sim {

/// The largest n binomial accepts: \f$2^{53}\f$, so that n and every count are exact doubles.
inline constexpr std::uint64_t binomial_max_n = std::uint64_t{1} << 53U;

/**
 * \f$X \sim \mathrm{Binomial}(n, p)\f$, \f$P(X = k) = \binom{n}{k}p^k(1-p)^{n-k}\f$.
 *
 * With \f$\tilde p = \min(p, 1-p)\f$ (and \f$X = n - \tilde X\f$ when \f$p > 1/2\f$; \f$1-p\f$
 * is exact there by Sterbenz' lemma):
 * - \f$n\tilde p < 10\f$: sequential inversion (Kachitvichyanukul & Schmeiser 1988, BINV):
 *   one U from uniform01, subtract \f$P(0), P(1), \dots\f$ with \f$P(0) =
 *   \exp(n\,\mathrm{log1p}(-\tilde p))\f$ and \f$P(k)/P(k-1) = ((n+1)/k - 1)\,\tilde p/(1-\tilde
 *   p)\f$ until U falls below. If rounding leaves U above the total mass (the recursion reaches
 *   k = n or P(k) underflows to 0, probability about \f$10^{-15}\f$), it starts over with a new
 *   U rather than returning a truncated value. Expected \f$n\tilde p + 1 \le 11\f$ iterations.
 * - \f$n\tilde p \ge 10\f$: BTRD, transformed rejection with decomposition (W. Hörmann, "The
 *   generation of binomial random variates", J. Statist. Comput. Simul. 46, 1993), step by step
 *   as in the paper: immediate acceptance from a single uniform with probability \f$0.86 v_r\f$
 *   (0.65 at \f$npq = 100\f$, rising to 0.79 as \f$npq \to \infty\f$), the recursive evaluation of
 *   \f$f(k)/f(m)\f$ for \f$|k - m| \le 15\f$, the squeeze, and the final test against
 *   \f$\ln(f(k)/f(m))\f$ (detail::BinomialLogPmfRatio, with detail::stirling_correction).
 *   Expected cost bounded in n and p. One deviation, for accuracy: \f$(n+1)\ln(n_m/n_k)\f$ is
 *   evaluated as \f$(n+1)\,\mathrm{log1p}((k-m)/n_k)\f$, which avoids the cancellation of the
 *   logarithm of a ratio near 1 when n is large.
 *
 * Exact up to floating-point rounding: the rejection test's rounding error, relative, is about
 * \f$(n\tilde p)\cdot 2^{-53}\f$ (the test sums terms of size up to \f$n\tilde p\f$ that
 * cancel), which perturbs probabilities by that relative amount; below \f$10^{-7}\f$ for
 * \f$n\tilde p \le 10^9\f$.
 *
 * n = 0, p = 0 and p = 1 return 0, 0 and n without using the engine. libm: portable::exp,
 * portable::log1p (inversion); std::sqrt, portable::log, portable::log1p (BTRD). Throws std::invalid_argument
 * unless \f$0 \le p \le 1\f$ and \f$n \le 2^{53}\f$.
 */
std::uint64_t binomial(Rng& rng, std::uint64_t n, double p);

}  // namespace dyncheck::sim
