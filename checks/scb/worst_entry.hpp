#pragma once
// Reporting many entry-wise comparisons by the one closest to failing.
//
// A block of K entries (a gradient matrix, say) is compared entry by entry, each with its own
// tolerance; all K pass iff the entry with the largest discrepancy/tolerance ratio passes. The
// verdict shows that entry, and its quantity names the block size, so the report stays readable
// while the check is exactly the entry-wise one.

#include <Eigen/Core>
#include <cmath>
#include <cstddef>

namespace dyncheck::checks::scb {

/// argmax_i |measured_i − theory_i| / tolerance_i (tolerance_i > 0; ties: the first).
inline Eigen::Index worst_entry(const Eigen::VectorXd& theory, const Eigen::VectorXd& measured,
                                const Eigen::VectorXd& tolerance) {
  Eigen::Index worst = 0;
  double worst_ratio = -1.0;
  for (Eigen::Index i = 0; i < theory.size(); ++i) {
    const double ratio = std::abs(measured[i] - theory[i]) / tolerance[i];
    if (!(ratio <= worst_ratio)) {  // NaN propagates to the report as the worst entry
      worst_ratio = ratio;
      worst = i;
      if (std::isnan(ratio)) break;
    }
  }
  return worst;
}

}  // namespace dyncheck::checks::scb
