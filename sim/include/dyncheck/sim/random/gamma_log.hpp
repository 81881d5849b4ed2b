#pragma once
// The logarithm of a Gamma(shape, 1) variate, without underflow for tiny shapes.

#include "dyncheck/sim/random/xoshiro256plusplus.hpp"

namespace dyncheck::sim {

/**
 * \f$\ln X\f$ for \f$X \sim \mathrm{Gamma}(a, 1)\f$, from the same engine outputs as
 * gamma(rng, a): for \f$a \ge 1\f$ it is \f$\ln\f$ of the Marsaglia–Tsang variate; for
 * \f$a < 1\f$ it is \f$\ln Y + \ln U / a\f$ (Y ~ Gamma(a+1), then U from uniform_open01), which
 * stays finite where \f$Y U^{1/a}\f$ underflows: \f$\ln U \ge -36.74\f$, so the result is finite
 * whenever \f$a > 36.74 / \mathrm{DBL\_MAX} \approx 2\cdot 10^{-307}\f$, and \f$-\infty\f$ below.
 * dirichlet uses it to normalize in log space.
 *
 * libm: std::sqrt, portable::log, portable::exp (see gamma). Throws std::invalid_argument unless a is
 * finite and > 0.
 */
double gamma_log(Rng& rng, double shape);

}  // namespace dyncheck::sim
