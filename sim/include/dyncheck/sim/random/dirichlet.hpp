#pragma once
// Dirichlet(alpha) vectors from normalized gamma variates, in log space.

#include <span>

#include "dyncheck/sim/random/xoshiro256plusplus.hpp"

namespace dyncheck::sim {

/**
 * out ~ Dirichlet(alpha): \f$X_i = G_i / \sum_j G_j\f$ with independent \f$G_i \sim
 * \mathrm{Gamma}(\alpha_i, 1)\f$ (e.g. Devroye 1986, XI.4), drawn in index order.
 *
 * Tiny alpha: for \f$\alpha_i \ll 1\f$ the gamma variates underflow to 0 (gamma.hpp), and a
 * naive \f$0/0\f$ gives NaN. Here \f$L_i = \ln G_i\f$ comes from gamma_log (finite for
 * \f$\alpha_i > 2\cdot10^{-307}\f$), and \f$X_i = e^{L_i - M} / \sum_j e^{L_j - M}\f$ with
 * \f$M = \max_j L_j\f$: the largest term is exactly 1, so the denominator is in [1, K] and every
 * \f$X_i\f$ is a finite number in [0, 1]. Components whose true value is below the smallest
 * double come out as exactly 0. Should every \f$L_i\f$ be \f$-\infty\f$ (only possible when all
 * \f$\alpha_i < 2\cdot10^{-307}\f$), the vector is the vertex \f$e_{i^*}\f$ with \f$i^* =
 * \arg\min_i (\ln E_i - \ln\alpha_i)\f$, \f$E_i = -\ln U_i\f$, from the uniforms already drawn:
 * \f$L_i = \ln Y_i - E_i/\alpha_i\f$ with \f$E_i/\alpha_i\f$ exponential of rate \f$\alpha_i\f$,
 * the minimum of which falls on i with probability \f$\alpha_i / \sum_j \alpha_j\f$, and every
 * other component is smaller than the winner by a factor \f$e^{-(\text{astronomically
 * large})}\f$, i.e. 0 in double.
 *
 * Engine use is the same as calling gamma_log(alpha_i) for i = 0..K-1. libm: std::sqrt,
 * portable::log, portable::exp. Throws std::invalid_argument if alpha is empty, the sizes differ, or an
 * \f$\alpha_i\f$ is not finite and > 0.
 */
void dirichlet(Rng& rng, std::span<const double> alpha, std::span<double> out);

}  // namespace dyncheck::sim
