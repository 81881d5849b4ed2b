// Vose's alias-table construction (see categorical.hpp for the specification).

#include "dyncheck/sim/random/categorical.hpp"

#include <cmath>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/probability_weights.hpp"

namespace dyncheck::sim {

Categorical::Categorical(std::span<const double> probabilities) {
  const double total = detail::checked_weight_sum("Categorical", probabilities);
  const std::size_t k = probabilities.size();
  const auto k_real = static_cast<double>(k);

  normalized_.resize(k);
  std::vector<double> q(k);
  std::size_t heaviest = 0;
  for (std::size_t i = 0; i < k; ++i) {
    normalized_[i] = probabilities[i] / total;
    q[i] = normalized_[i] * k_real;
    if (probabilities[i] > probabilities[heaviest]) heaviest = i;
  }

  prob_.assign(k, 1.0);
  alias_.resize(k);
  for (std::size_t i = 0; i < k; ++i) alias_[i] = i;

  std::vector<std::size_t> small;
  std::vector<std::size_t> large;
  small.reserve(k);
  large.reserve(k);
  for (std::size_t i = 0; i < k; ++i) (q[i] < 1.0 ? small : large).push_back(i);

  while (!small.empty() && !large.empty()) {
    const std::size_t l = small.back();
    small.pop_back();
    const std::size_t g = large.back();
    large.pop_back();
    prob_[l] = q[l];
    alias_[l] = g;
    q[g] = (q[g] + q[l]) - 1.0;
    (q[g] < 1.0 ? small : large).push_back(g);
  }
  // Leftovers have q within rounding of 1 and keep prob 1. A zero weight cannot be a rounding
  // leftover in exact arithmetic, but guard it anyway: it must never be returned.
  for (const std::size_t l : small) {
    if (probabilities[l] == 0.0) {
      prob_[l] = 0.0;
      alias_[l] = heaviest;
    }
  }
}

}  // namespace dyncheck::sim
