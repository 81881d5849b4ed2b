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
  /// The claim's false-failure share for this run; 0: its own (ClaimInfo::false_failure_share).
  /// Only `dyncheck calibrate --false-failure-share` sets it: a larger share makes a calibration
  /// with a feasible number of seeds able to detect a rate several times too high.
  double false_failure_share = 0;
  std::function<void(std::string_view stage, std::size_t done, std::size_t total)> progress;
};

/// Runs one claim (options.mutant names a mutant, or is empty). Throws ParamError on invalid
/// parameters or an unknown mutant; every other exception of the run, and any non-finite number,
/// becomes an ERROR verdict that says where.
Verdict run_claim(const Claim& claim, const RunOptions& options);

/// Runs the claim's own theory (variant "") and the named mutants from one measurement
/// (options.mutant is ignored). Verdicts in the order of `variants`. Each verdict's comparisons'
/// recorded false-failure shares must add up to at most the claim's share, and a claim that
/// records shares must record one for every comparison with a statistical term; a violation is
/// an ERROR verdict saying so.
std::vector<Verdict> run_claim_variants(const Claim& claim, const RunOptions& options,
                                        const std::vector<std::string>& variants);

/// The master seed of calibration run r of `claim_id`: a pure function of the master seed, the claim
/// and r (the first draw of the stream (master, "calibrate/<claim id>", r)).
std::uint64_t calibration_seed(std::uint64_t master_seed, const std::string& claim_id, std::size_t run);

/// Throws ParamError naming the claim's mutants when it has none called `name`.
void check_mutant_known(const ClaimInfo& info, const std::string& name);

/// "" followed by every mutant of the claim.
std::vector<std::string> all_variants(const Claim& claim);

/// Resolves the parameters of every claim (defaults, overrides, ranges, cross-parameter and cost
/// conditions) without running anything: throws ParamError on the first that is refused.
void check_parameters(const std::vector<const Claim*>& claims, const RunOptions& options);

/// The sum of the claims' false-failure shares: the rate at which a run of all of them reports a
/// false FAIL when every claim is true.
double suite_false_failure_rate(const std::vector<const Claim*>& claims);

/// Throws ParamError when an override names a parameter that none of `claims` declares.
void check_overrides_apply(const std::vector<const Claim*>& claims, const std::vector<ParamOverride>& overrides);

}  // namespace dyncheck::checks
