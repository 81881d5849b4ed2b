#pragma once
// Runs claims: resolves parameters, times the run, turns failures of the run into ERROR verdicts.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks {

/// The master seed used when none is given: CI results are reproducible.
inline constexpr std::uint64_t default_master_seed = 20261122;
/// DYNCHECK_SEED if set (throws ParamError on a malformed value), else default_master_seed.
std::uint64_t master_seed_from_environment();

struct RunOptions {
  Budget budget;
  std::uint64_t seed = default_master_seed;
  std::vector<ParamOverride> overrides;
  std::string mutant;
  unsigned threads = 0;  ///< 0: sim::default_thread_count()
  std::function<void(std::string_view stage, std::size_t done, std::size_t total)> progress;
};

/// Runs one claim. Throws ParamError on invalid parameters or an unknown mutant; every other
/// exception of the run, and any non-finite number, becomes an ERROR verdict that says where.
Verdict run_claim(const Claim& claim, const RunOptions& options);

/// Throws ParamError when an override names a parameter that none of `claims` declares.
void check_overrides_apply(const std::vector<const Claim*>& claims, const std::vector<ParamOverride>& overrides);

}  // namespace dyncheck::checks
