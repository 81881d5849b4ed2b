#pragma once
// Uniform double on [0, 1) from the top 53 bits of one engine output.

#include "dyncheck/sim/random/xoshiro256plusplus.hpp"

namespace dyncheck::sim {

/**
 * \f$U = \lfloor x / 2^{11} \rfloor \cdot 2^{-53} \in [0, 1)\f$ for one 64-bit output \f$x\f$:
 * every multiple of \f$2^{-53}\f$ in [0, 1) with probability \f$2^{-53}\f$ (Vigna,
 * prg.di.unimi.it, "Generating uniform doubles in the unit interval"). The top bits are used
 * because they are the best-mixed bits of xoshiro256++. Exact: one shift, one conversion of an
 * integer below \f$2^{53}\f$ and one multiplication by a power of two, so no rounding anywhere.
 */
inline double uniform01(Rng& rng) noexcept { return static_cast<double>(rng() >> 11U) * 0x1.0p-53; }

}  // namespace dyncheck::sim
