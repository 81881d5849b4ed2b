#pragma once
// Per-entry summaries over replicates of a matrix-valued result (the replicate is the
// independent unit; steps inside one run are not independent: DESIGN.md, "Statistics").

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dyncheck/checks/stats.hpp"
#include "dyncheck/checks/verdict.hpp"

namespace dyncheck::checks {

/// summaries(i, j) = summary over replicates r of results[r](i, j). Throws NonFiniteError naming
/// the entry and the replicate when a value is NaN or infinite.
inline std::vector<std::vector<stats::Summary>> summarize_replicates(const std::vector<Eigen::MatrixXd>& results,
                                                                     const std::string& what) {
  if (results.empty()) return {};
  const Eigen::Index rows = results.front().rows(), cols = results.front().cols();
  std::vector<std::vector<stats::Summary>> summaries(static_cast<std::size_t>(rows));
  std::vector<double> values(results.size());
  for (Eigen::Index i = 0; i < rows; ++i) {
    for (Eigen::Index j = 0; j < cols; ++j) {
      for (std::size_t r = 0; r < results.size(); ++r) {
        values[r] = results[r](i, j);
        if (!std::isfinite(values[r])) {
          require_finite(values[r], what + " entry (" + std::to_string(i) + ", " + std::to_string(j) + ") of replicate " +
                                        std::to_string(r));
        }
      }
      summaries[static_cast<std::size_t>(i)].push_back(stats::summarize(values));
    }
  }
  return summaries;
}

}  // namespace dyncheck::checks
