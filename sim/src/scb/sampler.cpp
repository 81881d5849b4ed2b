// Alias-table construction and the SCB sampler (see sampler.hpp).

#include "dyncheck/sim/scb/sampler.hpp"

#include <cmath>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/probability_weights.hpp"

namespace dyncheck::sim::scb {

AliasTable::AliasTable(std::span<const double> weights) {
  const double total = detail::checked_weight_sum("scb::AliasTable", weights);
  const std::size_t k = weights.size();
  if (k > static_cast<std::size_t>(INT32_MAX)) detail::throw_invalid_argument("scb::AliasTable", "too many weights");
  const auto k_real = static_cast<double>(k);
  std::vector<double> q(k), prob(k, 1.0);
  std::vector<int> alias(k);
  for (std::size_t i = 0; i < k; ++i) {
    q[i] = weights[i] / total * k_real;
    alias[i] = static_cast<int>(i);
  }
  std::vector<std::size_t> small, large;
  for (std::size_t i = 0; i < k; ++i) (q[i] < 1.0 ? small : large).push_back(i);
  while (!small.empty() && !large.empty()) {
    const std::size_t l = small.back();
    small.pop_back();
    const std::size_t g = large.back();
    large.pop_back();
    prob[l] = q[l];
    alias[l] = static_cast<int>(g);
    q[g] = (q[g] + q[l]) - 1.0;
    (q[g] < 1.0 ? small : large).push_back(g);
  }
  // Leftovers are within rounding of 1 and keep prob 1, except a zero weight (never drawn).
  std::size_t heaviest = 0;
  for (std::size_t i = 1; i < k; ++i) {
    if (weights[i] > weights[heaviest]) heaviest = i;
  }
  for (const std::size_t l : small) {
    if (weights[l] == 0.0) {
      prob[l] = 0.0;
      alias[l] = static_cast<int>(heaviest);
    }
  }
  entries_.resize(k);
  for (std::size_t i = 0; i < k; ++i) {
    // A column that always accepts aliases itself, so a threshold below 2^64 serves both cases.
    if (prob[i] >= 1.0) {
      entries_[i] = {~std::uint64_t{0}, static_cast<int>(i)};
    } else {
      entries_[i] = {static_cast<std::uint64_t>(std::ldexp(prob[i], 64)), alias[i]};
    }
  }
  size_ = k;
}

double AliasTable::probability(std::size_t i) const {
  const double column = 1.0 / static_cast<double>(entries_.size());
  double p = 0.0;
  for (std::size_t c = 0; c < entries_.size(); ++c) {
    const double accept = entries_[c].alias == static_cast<int>(c) && entries_[c].threshold == ~std::uint64_t{0}
                              ? 1.0
                              : std::ldexp(static_cast<double>(entries_[c].threshold), -64);
    if (c == i) p += column * accept;
    if (static_cast<std::size_t>(entries_[c].alias) == i) p += column * (1.0 - accept);
  }
  return p;
}

Sampler::Sampler(const Instance& instance) : T_(instance.T) {
  validate(instance);
  const Eigen::Index n = instance.P.rows();
  mu_ = AliasTable(std::span<const double>(instance.mu.data(), static_cast<std::size_t>(n)));
  P_columns_.reserve(static_cast<std::size_t>(n));
  for (Eigen::Index j = 0; j < n; ++j) {
    P_columns_.emplace_back(std::span<const double>(instance.P.col(j).data(), static_cast<std::size_t>(n)));
  }
  for (const auto& weight : instance.weight) q_.emplace_back(weight);
  support_ = instance.support;
}

}  // namespace dyncheck::sim::scb
