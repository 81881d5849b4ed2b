#pragma once
// Gamma(shape, 1) variates: Marsaglia–Tsang squeeze/rejection, with the shape < 1 boost.

#include "dyncheck/sim/random/xoshiro256plusplus.hpp"

namespace dyncheck::sim {

/**
 * \f$X \sim \mathrm{Gamma}(a, 1)\f$, density \f$x^{a-1}e^{-x}/\Gamma(a)\f$, mean a, variance a.
 *
 * For \f$a \ge 1\f$: Marsaglia & Tsang (ACM TOMS 26(3), 2000, "A simple method for generating
 * gamma variables"). With \f$d = a - 1/3\f$ and \f$c = 1/\sqrt{9d}\f$, draw \f$Z\f$ from
 * standard_normal until \f$v = (1 + cZ)^3 > 0\f$, draw \f$U\f$ from uniform_open01, and accept
 * \f$dv\f$ if \f$U < 1 - 0.0331 Z^4\f$ (squeeze) or \f$\ln U < Z^2/2 + d(1 - v + \ln v)\f$.
 * Exact; acceptance is at least 0.95 for all \f$a \ge 1\f$.
 *
 * For \f$0 < a < 1\f$ (the paper's "boost"): \f$X = Y\,U^{1/a}\f$ with \f$Y \sim
 * \mathrm{Gamma}(a+1)\f$ drawn first, then \f$U\f$ from uniform_open01, computed as
 * \f$Y\exp(\ln U / a)\f$. For small a this underflows to 0 (already for \f$a \lesssim
 * 10^{-3}\f$ with moderate probability): the true value is below the smallest double. Use
 * gamma_log for shapes that small.
 *
 * libm: std::sqrt (correctly rounded), portable::log, portable::exp (< 1 ulp, the same bits on
 * every CPU; see standard_normal). Throws std::invalid_argument unless a is finite and
 * > 0.
 */
double gamma(Rng& rng, double shape);

}  // namespace dyncheck::sim
