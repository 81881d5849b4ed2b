#pragma once
// Uniform double on the open interval (0, 1): safe to take its logarithm.

#include "dyncheck/sim/random/xoshiro256plusplus.hpp"

namespace dyncheck::sim {

/**
 * \f$U = (2\lfloor x / 2^{12} \rfloor + 1)\cdot 2^{-53} \in [2^{-53}, 1 - 2^{-53}]\f$: the
 * midpoints of the \f$2^{52}\f$ cells of width \f$2^{-52}\f$, each with probability
 * \f$2^{-52}\f$. The set is symmetric under \f$U \mapsto 1-U\f$, never 0 or 1, so \f$\log U\f$
 * and \f$\log(1-U)\f$ are finite (\f$\ge -36.74\f$). Exact (the odd integer is below
 * \f$2^{53}\f$).
 */
inline double uniform_open01(Rng& rng) noexcept {
  return static_cast<double>(((rng() >> 12U) << 1U) | 1U) * 0x1.0p-53;
}

}  // namespace dyncheck::sim
