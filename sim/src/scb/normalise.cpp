// Final normalisation (see normalise.hpp).

#include "dyncheck/sim/scb/normalise.hpp"

#include <cmath>
#include <string>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"

namespace dyncheck::sim::scb {

void normalise(LinearModel& model) {
  for (Eigen::Index j = 0; j < model.V.cols(); ++j) {
    const double sum = model.V.col(j).sum();
    if (sum == 0.0 || !std::isfinite(sum)) {
      detail::throw_invalid_argument("scb::normalise", "column " + std::to_string(j) + " of V must have a finite non-zero sum", sum);
    }
    model.V.col(j) /= sum;
  }
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) {
    const double sum = model.A.col(k).sum();
    if (sum == 0.0 || !std::isfinite(sum)) {
      detail::throw_invalid_argument("scb::normalise", "a^(" + std::to_string(k) + ") must have a finite non-zero sum", sum);
    }
    model.A.col(k) /= sum;
  }
}

}  // namespace dyncheck::sim::scb
