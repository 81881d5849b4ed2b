// dyncheck/checks/stats/summary.hpp — sample moments of independent replicates.
#pragma once

#include <cstddef>
#include <span>

namespace dyncheck::checks::stats {

/// Sample summary of n values x_1..x_n:
/// \f[ \bar x = \frac1n\sum_i x_i,\qquad s^2 = \frac{1}{n-1}\sum_i (x_i-\bar x)^2 . \f]
/// With n < 2 the unbiased variance is undefined and is reported as 0; every function that
/// needs a variance rejects n < 2. With n == 0 all fields are 0.
struct Summary {
  std::size_t n = 0;
  double mean = 0;
  double variance = 0;  ///< unbiased (divisor n - 1)
  double min = 0;
  double max = 0;
};

/// Two-pass summary with the compensating term of Chan, Golub & LeVeque (1983):
/// \f[ s^2 = \frac{1}{n-1}\Bigl(\sum_i d_i^2 - \frac1n\bigl(\sum_i d_i\bigr)^2\Bigr),\quad d_i = x_i-\bar x, \f]
/// which removes the rounding error left in \f$\bar x\f$.
/// Throws std::domain_error naming the first index whose value is NaN or infinite.
Summary summarize(std::span<const double> values);

/// Welford's one-pass update, for replicates that arrive one at a time:
/// \f[ \bar x_k = \bar x_{k-1} + \frac{x_k-\bar x_{k-1}}{k},\qquad
///     M_k = M_{k-1} + (x_k-\bar x_{k-1})(x_k-\bar x_k),\qquad s^2 = \frac{M_n}{n-1}. \f]
class RunningMoments {
 public:
  /// Throws std::domain_error naming the 0-based index of the value if it is not finite.
  void add(double value);
  /// Combines two disjoint sets of replicates (Chan et al. pairwise update), e.g. from two threads:
  /// \f[ M = M_a + M_b + \delta^2\frac{n_a n_b}{n_a+n_b},\quad \delta = \bar x_b-\bar x_a . \f]
  void merge(const RunningMoments& other);
  [[nodiscard]] std::size_t count() const { return n_; }
  [[nodiscard]] Summary summary() const;

 private:
  std::size_t n_ = 0;
  double mean_ = 0;
  double m2_ = 0;  ///< sum of squared deviations from the running mean
  double min_ = 0;
  double max_ = 0;
};

}  // namespace dyncheck::checks::stats
