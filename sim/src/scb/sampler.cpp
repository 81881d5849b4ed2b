// Alias-table construction and the SCB sampler (see sampler.hpp).

#include "dyncheck/sim/scb/sampler.hpp"

#include "dyncheck/sim/random/categorical.hpp"

#include <cmath>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/probability_weights.hpp"

namespace dyncheck::sim::scb {

AliasTable::AliasTable(std::span<const double> weights) {
  const std::size_t k = weights.size();
  if (k > static_cast<std::size_t>(INT32_MAX)) detail::throw_invalid_argument("scb::AliasTable", "too many weights");
  const AliasColumns table = vose_alias_columns(weights, "scb::AliasTable");  // the one Vose construction
  entries_.resize(k);
  for (std::size_t i = 0; i < k; ++i) {
    // A column that always accepts aliases itself, so a threshold below 2^64 serves both cases.
    if (table.prob[i] >= 1.0) {
      entries_[i] = {~std::uint64_t{0}, static_cast<int>(i)};
    } else {
      entries_[i] = {static_cast<std::uint64_t>(std::ldexp(table.prob[i], 64)), static_cast<int>(table.alias[i])};
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
