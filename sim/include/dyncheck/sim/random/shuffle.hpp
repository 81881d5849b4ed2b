#pragma once
// Fisher–Yates shuffle with a specified index sampler (std::shuffle's draws are unspecified).

#include <cstddef>
#include <span>
#include <utility>

#include "dyncheck/sim/random/uniform_index.hpp"

namespace dyncheck::sim {

/**
 * Uniformly random permutation of `values` in place (Fisher & Yates 1938; Durstenfeld 1964,
 * Algorithm 235): for \f$i = n-1, \dots, 1\f$ swap element i with element
 * \f$j = \mathrm{uniform\_index}(i+1)\f$. Each of the \f$n!\f$ orders has probability
 * \f$1/n!\f$ because uniform_index is exact. Used instead of std::shuffle, whose use of the
 * engine is implementation-defined.
 */
template <class T>
void shuffle(Rng& rng, std::span<T> values) {
  for (std::size_t i = values.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_index(rng, i));
    using std::swap;
    swap(values[i - 1], values[j]);
  }
}

}  // namespace dyncheck::sim
