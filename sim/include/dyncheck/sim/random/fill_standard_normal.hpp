#pragma once
// Fill a vector with independent N(0,1) variates.

#include <Eigen/Core>

#include "dyncheck/sim/random/standard_normal.hpp"

namespace dyncheck::sim {

/**
 * out[i] ~ N(0,1) independently: the values of a fresh NormalSampler in order, i.e. polar pairs
 * (out[0], out[1]), (out[2], out[3]), ...; for odd length the last pair's second value is
 * discarded, so the engine is never left with a half-used pair. libm: portable::log, std::sqrt.
 */
void fill_standard_normal(Rng& rng, Eigen::Ref<Eigen::VectorXd> out);

}  // namespace dyncheck::sim
