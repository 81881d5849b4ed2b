// Vose's alias-table construction (see categorical.hpp for the specification).

#include "dyncheck/sim/random/categorical.hpp"

#include <cmath>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/probability_weights.hpp"

namespace dyncheck::sim {

AliasColumns vose_alias_columns(std::span<const double> weights, const char* who) {
  const double total = detail::checked_weight_sum(who, weights);
  const std::size_t k = weights.size();
  const auto k_real = static_cast<double>(k);

  std::vector<double> q(k);
  std::size_t heaviest = 0;
  for (std::size_t i = 0; i < k; ++i) {
    q[i] = weights[i] / total * k_real;
    if (weights[i] > weights[heaviest]) heaviest = i;
  }

  AliasColumns table;
  table.prob.assign(k, 1.0);
  table.alias.resize(k);
  for (std::size_t i = 0; i < k; ++i) table.alias[i] = i;

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
    table.prob[l] = q[l];
    table.alias[l] = g;
    q[g] = (q[g] + q[l]) - 1.0;
    (q[g] < 1.0 ? small : large).push_back(g);
  }
  // Leftovers have q within rounding of 1 and keep prob 1. A zero weight cannot be a rounding
  // leftover in exact arithmetic, but guard it anyway: it must never be returned.
  for (const std::size_t l : small) {
    if (weights[l] == 0.0) {
      table.prob[l] = 0.0;
      table.alias[l] = heaviest;
    }
  }
  return table;
}

Categorical::Categorical(std::span<const double> probabilities) {
  AliasColumns table = vose_alias_columns(probabilities, "Categorical");
  prob_ = std::move(table.prob);
  alias_ = std::move(table.alias);
  const double total = detail::checked_weight_sum("Categorical", probabilities);
  normalized_.resize(probabilities.size());
  for (std::size_t i = 0; i < probabilities.size(); ++i) normalized_[i] = probabilities[i] / total;
}

}  // namespace dyncheck::sim
