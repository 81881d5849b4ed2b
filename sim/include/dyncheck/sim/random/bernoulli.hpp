#pragma once
// Bernoulli(p) from one uniform.

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/uniform01.hpp"

namespace dyncheck::sim {

/**
 * \f$\mathbb{1}[U < p]\f$ with U = uniform01(rng): true with probability
 * \f$\lceil p\,2^{53}\rceil / 2^{53}\f$, which is p exactly when p is a multiple of \f$2^{-53}\f$
 * and within \f$2^{-53}\f$ of p otherwise. Consumes one engine output, also for p = 0 or 1.
 * Throws std::invalid_argument unless \f$0 \le p \le 1\f$.
 */
inline bool bernoulli(Rng& rng, double p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    detail::throw_invalid_argument("bernoulli", "p must be in [0, 1]", p);
  }
  return uniform01(rng) < p;
}

}  // namespace dyncheck::sim
