#pragma once
// The options every command (and the Python module) shares, checked in one place: the budget, the
// master seed (--seed or DYNCHECK_SEED), the thread count (--threads or DYNCHECK_THREADS) and the
// --param overrides, each against every selected claim's declared range and cross-parameter
// conditions, before any claim runs.

#include <optional>
#include <string>
#include <vector>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/runner.hpp"

namespace dyncheck::reports {

struct CommonOptions {
  std::string budget = "ci";
  std::optional<std::string> seed;     ///< parsed by checks::parse_seed, like DYNCHECK_SEED
  std::vector<std::string> params;
  std::optional<std::string> threads;  ///< parsed by checks::parse_thread_count, like DYNCHECK_THREADS
  bool quiet = false;
};

/// The run options of `common` for `claims`, with every input checked (throws checks::ParamError
/// naming the parameter and its valid range, or the condition).
checks::RunOptions run_options(const CommonOptions& common, const std::vector<const checks::Claim*>& claims);

}  // namespace dyncheck::reports
