#pragma once
// Validation shared by the samplers that take unnormalized probability weights.

#include <span>
#include <string_view>

namespace dyncheck::sim::detail {

/**
 * The sum of `weights` in index order, after checking that there is at least one weight, that
 * every weight is finite and \f$\ge 0\f$, that at least one is positive, and that the sum is
 * finite; otherwise throws std::invalid_argument naming `function`, the index and the value.
 */
double checked_weight_sum(std::string_view function, std::span<const double> weights);

}  // namespace dyncheck::sim::detail
