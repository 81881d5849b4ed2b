#include "dyncheck/sim/random/probability_weights.hpp"

#include <cmath>
#include <cstddef>
#include <string>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"

namespace dyncheck::sim::detail {

double checked_weight_sum(std::string_view function, std::span<const double> weights) {
  if (weights.empty()) throw_invalid_argument(function, "probabilities must not be empty");
  double total = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] >= 0.0 && std::isfinite(weights[i]))) {
      throw_invalid_argument(
          function, "probabilities[" + std::to_string(i) + "] must be finite and >= 0", weights[i]);
    }
    total += weights[i];
  }
  if (total == 0.0) throw_invalid_argument(function, "probabilities must not all be zero");
  if (!std::isfinite(total)) {
    throw_invalid_argument(function, "the sum of probabilities must be finite", total);
  }
  return total;
}

}  // namespace dyncheck::sim::detail
