#pragma once
// Standard normal variates by the Marsaglia polar method.

#include "dyncheck/sim/random/uniform01.hpp"

namespace dyncheck::sim {

namespace detail {

struct NormalPair {
  double first;
  double second;
};

/**
 * One pair of independent N(0,1) variates, Marsaglia polar method (G. Marsaglia, T. A. Bray,
 * "A convenient method for generating normal variables", SIAM Review 6(3), 1964): draw
 * \f$u = 2U_1 - 1,\ v = 2U_2 - 1\f$ (U from uniform01) until \f$0 < s = u^2 + v^2 < 1\f$, then
 * return \f$(u f, v f)\f$ with \f$f = \sqrt{-2\ln s / s}\f$. Acceptance probability
 * \f$\pi/4\f$, so 2.55 engine outputs per pair on average.
 *
 * libm: portable::log (dyncheck/portable/math.hpp: IEEE basic operations only, < 1 ulp, the same
 * bits on every CPU, unlike glibc's log, whose variant is chosen by CPU features) and std::sqrt
 * (correctly rounded, IEEE 754).
 * Defined out of line so that its arithmetic is compiled with the library's -ffp-contract=off
 * (a fused u*u + v*v would change last bits), whatever flags the caller uses.
 */
NormalPair standard_normal_pair(Rng& rng);

}  // namespace detail

/**
 * One N(0,1) variate: the first value of a Marsaglia polar pair (detail::standard_normal_pair);
 * the pair's second value is discarded, which keeps this a stateless function of the engine.
 * Where throughput matters, NormalSampler or fill_standard_normal use both values.
 * libm: portable::log, std::sqrt (see detail::standard_normal_pair).
 */
inline double standard_normal(Rng& rng) { return detail::standard_normal_pair(rng).first; }

/**
 * N(0,1) variates from the Marsaglia polar method, using both values of each pair: calls
 * alternate between drawing a pair (returning its first value) and returning the cached second
 * value. The first value returned from a fresh sampler equals standard_normal(rng) from the same
 * engine state. A sampler caches a value of the engine it last drew from, so keep one sampler per
 * stream; reset() drops the cached value.
 */
class NormalSampler {
 public:
  double operator()(Rng& rng) {
    if (has_cached_) {
      has_cached_ = false;
      return cached_;
    }
    const detail::NormalPair pair = detail::standard_normal_pair(rng);
    cached_ = pair.second;
    has_cached_ = true;
    return pair.first;
  }

  void reset() noexcept { has_cached_ = false; }

 private:
  double cached_ = 0.0;
  bool has_cached_ = false;
};

}  // namespace dyncheck::sim
