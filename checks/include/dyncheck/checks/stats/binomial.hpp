// dyncheck/checks/stats/binomial.hpp — exact intervals for a binomial proportion, used by the
// calibration command to compare an observed failure rate with the promised one.
#pragma once

#include <cstddef>

namespace dyncheck::checks::stats {

struct Interval {
  double lower = 0;
  double upper = 0;
};

/// Clopper–Pearson (1934) interval for a proportion from x successes in n trials, with
/// \f$ \alpha = 1 - \mathrm{confidence} \f$ split evenly over both tails:
/// \f[ \bigl[\,B^{-1}(\tfrac\alpha2;\,x,\,n-x+1),\; B^{-1}(1-\tfrac\alpha2;\,x+1,\,n-x)\,\bigr], \f]
/// with lower = 0 when x = 0 and upper = 1 when x = n. Coverage is >= confidence for every
/// true proportion. Requires trials >= 1, successes <= trials, confidence in (0, 1).
Interval clopper_pearson(std::size_t successes, std::size_t trials, double confidence);

}  // namespace dyncheck::checks::stats
