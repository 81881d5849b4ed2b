#include "dyncheck/sim/random/multinomial.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/binomial.hpp"
#include "dyncheck/sim/random/probability_weights.hpp"

namespace dyncheck::sim {

void multinomial(Rng& rng, std::uint64_t n, std::span<const double> probabilities,
                 std::span<std::uint64_t> counts) {
  detail::checked_weight_sum("multinomial", probabilities);
  if (counts.size() != probabilities.size()) {
    detail::throw_invalid_argument("multinomial", "counts.size() must equal probabilities.size()");
  }
  if (n > binomial_max_n) {
    detail::throw_invalid_argument("multinomial", "n must be <= 2^53 = 9007199254740992", n);
  }
  const std::size_t k = probabilities.size();
  std::vector<double> tail(k);
  double sum = 0.0;
  for (std::size_t i = k; i-- > 0;) {
    sum += probabilities[i];
    tail[i] = sum;
  }
  std::uint64_t remaining = n;
  std::fill(counts.begin(), counts.end(), std::uint64_t{0});
  for (std::size_t i = 0; i + 1 < k && remaining > 0; ++i) {
    // p_i <= tail[i] in floating point (rounding is monotone), so the ratio is a probability;
    // tail[i] > 0 while remaining > 0, since the last positive weight's ratio is exactly 1.
    const double conditional = probabilities[i] / tail[i];
    counts[i] = binomial(rng, remaining, conditional);
    remaining -= counts[i];
  }
  counts[k - 1] = remaining;
}

}  // namespace dyncheck::sim
