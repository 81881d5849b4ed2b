// dyncheck/checks/stats/half_width.hpp — confidence half-widths for the mean of replicates.
//
// specs/numerics.md §4. A half-width h for confidence 1 - delta promises
// \f$ P(|\bar x - \mu| > h) \le \delta \f$ (two-sided). Hoeffding and empirical Bernstein are
// finite-sample guarantees for bounded data; student_t and normal are CLT approximations,
// and their `reason` says so.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "dyncheck/checks/stats/summary.hpp"

namespace dyncheck::checks::stats {

enum class HalfWidthMethod { student_t, normal, hoeffding, empirical_bernstein };

/// "student_t", "normal", "hoeffding", "empirical_bernstein".
std::string to_string(HalfWidthMethod method);

struct HalfWidth {
  double value = 0;  ///< half-width of a two-sided (1 - delta) confidence interval for the mean
  HalfWidthMethod method = HalfWidthMethod::student_t;
  double delta = 0;    ///< the false-failure probability it was computed for
  std::string reason;  ///< one sentence: formula, numbers (n, delta, range) and the assumption
};

/// CLT interval with the Student-t quantile:
/// \f[ h = t_{1-\delta/2,\,n-1}\,\frac{s}{\sqrt n}. \f]
/// Exact for normal data; otherwise it assumes the mean of n replicates is approximately normal.
/// Requires n >= 2, a finite variance >= 0, delta in (0, 1).
HalfWidth student_t_half_width(const Summary& summary, double delta);

/// CLT interval with the normal quantile, \f$ h = z_{1-\delta/2}\, s/\sqrt n \f$. Undercovers
/// for small n (it ignores the error in s); prefer student_t_half_width.
HalfWidth normal_half_width(const Summary& summary, double delta);

/// Hoeffding's inequality for n independent values in an interval of length `range`:
/// \f[ P(|\bar x-\mu|\ge h)\le 2e^{-2nh^2/\mathrm{range}^2}
///     \;\Rightarrow\; h = \mathrm{range}\sqrt{\frac{\ln(2/\delta)}{2n}}. \f]
/// Requires n >= 1, finite range > 0, delta in (0, 1).
HalfWidth hoeffding_half_width(std::size_t n, double range, double delta);

/// As above, and also checks that the data fit the promised range (max - min <= range).
HalfWidth hoeffding_half_width(const Summary& summary, double range, double delta);

/// Maurer & Pontil (2009, Thm 4) empirical Bernstein bound, made two-sided by a union bound
/// over both tails (ln(2/delta) -> ln(4/delta)) and rescaled from [0,1] to an interval of
/// length `range`, with V the unbiased sample variance:
/// \f[ h = \sqrt{\frac{2V\ln(4/\delta)}{n}} + \frac{7\,\mathrm{range}\,\ln(4/\delta)}{3(n-1)}. \f]
/// Requires n >= 2, finite range > 0 with max - min <= range, delta in (0, 1).
HalfWidth empirical_bernstein_half_width(const Summary& summary, double range, double delta);

/// Dispatches on `method`; `range` is required for hoeffding and empirical_bernstein and
/// ignored by the CLT methods.
HalfWidth half_width(HalfWidthMethod method, const Summary& summary, double delta,
                     std::optional<double> range = std::nullopt);

}  // namespace dyncheck::checks::stats
