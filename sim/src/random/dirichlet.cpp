#include "dyncheck/sim/random/dirichlet.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/gamma.hpp"
#include "dyncheck/sim/random/uniform_open01.hpp"

namespace dyncheck::sim {

void dirichlet(Rng& rng, std::span<const double> alpha, std::span<double> out) {
  if (alpha.empty()) detail::throw_invalid_argument("dirichlet", "alpha must not be empty");
  if (out.size() != alpha.size()) {
    detail::throw_invalid_argument("dirichlet", "out.size() must equal alpha.size()");
  }
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    if (!(alpha[i] > 0.0 && std::isfinite(alpha[i]))) {
      detail::throw_invalid_argument(
          "dirichlet", "alpha[" + std::to_string(i) + "] must be finite and > 0", alpha[i]);
    }
  }

  constexpr double minus_infinity = -std::numeric_limits<double>::infinity();
  double max_log = minus_infinity;
  // Fallback for the all -inf case: argmin of ln E_i - ln alpha_i (see dirichlet.hpp).
  std::size_t race_winner = 0;
  double race_best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    // The same draws, in the same order, as gamma_log(rng, alpha[i]); written out because the
    // fallback needs the exponential E_i.
    double log_g = 0.0;
    if (alpha[i] >= 1.0) {
      log_g = portable::log(gamma(rng, alpha[i]));
    } else {
      const double y = gamma(rng, alpha[i] + 1.0);
      const double e = -portable::log(uniform_open01(rng));
      log_g = portable::log(y) - e / alpha[i];
      const double race = portable::log(e) - portable::log(alpha[i]);
      if (race < race_best) {
        race_best = race;
        race_winner = i;
      }
    }
    out[i] = log_g;
    if (log_g > max_log) max_log = log_g;
  }

  if (max_log == minus_infinity) {
    for (double& x : out) x = 0.0;
    out[race_winner] = 1.0;
    return;
  }
  double sum = 0.0;
  for (double& x : out) {
    x = portable::exp(x - max_log);
    sum += x;
  }
  for (double& x : out) x /= sum;
}

}  // namespace dyncheck::sim
