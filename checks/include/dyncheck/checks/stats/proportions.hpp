// dyncheck/checks/stats/proportions.hpp — approximate intervals for a binomial proportion (Wilson score) and for a
// difference of two independent proportions (Newcombe's hybrid score), for reporting. The exact Clopper-Pearson
// interval, the one to decide a claim with, is in binomial.hpp.
#pragma once

#include <cstddef>

#include "dyncheck/checks/stats/binomial.hpp"

namespace dyncheck::checks::stats {

/// Wilson (1927) score interval: the p with |x - n p| <= z sqrt(n p (1 - p)), z the normal quantile at
/// 1 - alpha/2:
/// \f[ \frac{x + z^2/2}{n + z^2} \pm \frac{z}{n + z^2}\sqrt{\frac{x(n-x)}{n} + \frac{z^2}{4}}. \f]
/// Approximate: its coverage oscillates around the confidence as p varies (mean over p within ~0.015 of it
/// for n >= 10, minimum far lower near p = 0 or 1; Brown, Cai, DasGupta, Stat. Sci. 16, 2001), so it is for
/// reporting (spec kernels A.5: "Wilson 95%"), not for a claim's false-failure share; use clopper_pearson there.
/// Requires trials >= 1, successes <= trials, confidence in (0, 1).
Interval wilson(std::size_t successes, std::size_t trials, double confidence);

/// Newcombe's hybrid score interval (Stat. Med. 17, 1998, 873-890, method 10) for p1 - p2 from two
/// independent binomial samples, built from the Wilson intervals (l_i, u_i) at the same confidence:
/// \f[ \bigl[\hat p_1 - \hat p_2 - \sqrt{(\hat p_1 - l_1)^2 + (u_2 - \hat p_2)^2},\;
///        \hat p_1 - \hat p_2 + \sqrt{(u_1 - \hat p_1)^2 + (\hat p_2 - l_2)^2}\bigr]. \f]
/// Approximate like Wilson (mean coverage near the confidence; at extreme confidences, e.g. one-sided 2.5e-6,
/// the actual one-sided error is up to 1.7x the nominal at n1 = n2 = 40 and thousands of times it at very
/// unequal sizes, computed exactly by enumeration): for reporting. Requires trials1, trials2 >= 1,
/// successes_i <= trials_i, confidence in (0, 1).
Interval newcombe_difference(std::size_t successes1, std::size_t trials1, std::size_t successes2,
                             std::size_t trials2, double confidence);

}  // namespace dyncheck::checks::stats
