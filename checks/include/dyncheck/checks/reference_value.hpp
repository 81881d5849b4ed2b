#pragma once
// Reference values in two precisions: a theory value is computed in 50 and in 100 digits, and
// their difference (plus the rounding to double) is its reported numerical error (DESIGN.md,
// "Scalar"; numerics.md §3, ladder rung 1 "precision doubling").

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <string>

#include "dyncheck/theory/numeric/eigen.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"

namespace dyncheck::checks {

struct ReferenceVector {
  Eigen::VectorXd value;  ///< the 100-digit value rounded to double
  Eigen::VectorXd error;  ///< |v_50 − v_100| + half an ulp of the double
  static constexpr const char* reason =
      "|50-digit - 100-digit| evaluation (precision doubling) + rounding the 100-digit value to double";
};

/// `evaluate` is a generic callable: `evaluate.template operator()<S>()` returns theory::Vector<S>.
template <class Evaluate>
ReferenceVector reference_vector(Evaluate evaluate) {
  const theory::Vector<theory::mp50> low = evaluate.template operator()<theory::mp50>();
  const theory::Vector<theory::mp100> high = evaluate.template operator()<theory::mp100>();
  ReferenceVector result{Eigen::VectorXd(high.size()), Eigen::VectorXd(high.size())};
  for (Eigen::Index i = 0; i < high.size(); ++i) {
    const theory::mp100 low_widened(low[i].str(60, std::ios_base::scientific));
    const theory::mp100 difference = abs(high[i] - low_widened);
    result.value[i] = theory::to_double(high[i]);
    result.error[i] = theory::to_double(difference) +
                      std::abs(result.value[i]) * std::numeric_limits<double>::epsilon() / 2;
  }
  return result;
}

}  // namespace dyncheck::checks
