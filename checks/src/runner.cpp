#include "dyncheck/checks/runner.hpp"

#include <fmt/format.h>

#include <Eigen/Core>

#include "dyncheck/sim/random/rng.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

namespace dyncheck::checks {

std::uint64_t master_seed_from_environment() {
  // Set means given: an empty DYNCHECK_SEED is rejected like `--seed ''` (the same parser).
  const char* text = std::getenv("DYNCHECK_SEED");
  if (text == nullptr) return default_master_seed;
  return parse_seed("DYNCHECK_SEED", text);
}

void check_overrides_apply(const std::vector<const Claim*>& claims, const std::vector<ParamOverride>& overrides) {
  for (const auto& [name, value] : overrides) {
    const bool declared = std::any_of(claims.begin(), claims.end(), [&name = name](const Claim* claim) {
      const auto& params = claim->info().params;
      return std::any_of(params.begin(), params.end(), [&](const ParamSpec& spec) { return spec.name == name; });
    });
    if (!declared) {
      std::string known;
      for (const Claim* claim : claims) {
        for (const ParamSpec& spec : claim->info().params) {
          known += fmt::format("\n  {} ({}): {}", spec.name, claim->info().id, spec.range_text());
        }
      }
      throw ParamError(name, fmt::format("no selected claim has a parameter '{}'; parameters are:{}", name, known));
    }
  }
}

namespace {

void check_mutant_known(const ClaimInfo& info, const std::string& name) {
  const bool known = std::any_of(info.mutants.begin(), info.mutants.end(),
                                 [&](const MutantInfo& mutant) { return mutant.name == name; });
  if (!known) {
    std::string names;
    for (const MutantInfo& mutant : info.mutants) names += (names.empty() ? "" : ", ") + mutant.name;
    throw ParamError("mutant", fmt::format("claim {} has no mutant '{}'; its mutants are: {}", info.id, name, names));
  }
}

/// Eigen's matrix products choose their blocking (and so their summation order) from the cache sizes
/// it reads off the CPU at run time; fixed sizes make the order, and the bits, the same on every
/// machine. The values are those of a common x86-64 core (32 KiB L1, 1 MiB L2, 32 MiB L3); only
/// the speed of products larger than a block depends on them.
void pin_eigen_blocking() {
  static const bool pinned = [] {
    Eigen::setCpuCacheSizes(32 * 1024, 1024 * 1024, 32 * 1024 * 1024);
    return true;
  }();
  (void)pinned;
}

/// The invariant of the error shares (DESIGN.md, Statistics), checked on every verdict.
void check_shares(const ClaimInfo& info, double share, Verdict& verdict) {
  double spent = 0;
  for (const Comparison& comparison : verdict.comparisons) {
    spent += comparison.false_failure_share;
    if (info.records_shares && comparison.half_width > 0 && comparison.false_failure_share <= 0) {
      verdict.outcome = Outcome::error;
      verdict.error = fmt::format("comparison '{}' has a statistical half-width but records no false-failure share",
                                  comparison.quantity);
      return;
    }
  }
  verdict.false_failure_spent = spent;
  // A relative slack of 1e-9 for the rounding of shares computed as share / count.
  if (spent > share * (1 + 1e-9)) {
    verdict.outcome = Outcome::error;
    verdict.error = fmt::format("the comparisons' false-failure shares add up to {:.6g}, more than the claim's {:.6g}",
                                spent, share);
  }
}

}  // namespace

std::uint64_t calibration_seed(std::uint64_t master_seed, const std::string& claim_id, std::size_t run) {
  return sim::derive_stream(master_seed, "calibrate/" + claim_id, run)();
}

std::vector<std::string> all_variants(const Claim& claim) {
  std::vector<std::string> variants{""};
  for (const MutantInfo& mutant : claim.info().mutants) variants.push_back(mutant.name);
  return variants;
}

void check_parameters(const std::vector<const Claim*>& claims, const RunOptions& options) {
  for (const Claim* claim : claims) (void)claim->resolve(options.overrides, options.budget);
}

double suite_false_failure_rate(const std::vector<const Claim*>& claims) {
  double rate = 0;
  for (const Claim* claim : claims) rate += claim->info().false_failure_share;
  return rate;
}

std::vector<Verdict> run_claim_variants(const Claim& claim, const RunOptions& options,
                                        const std::vector<std::string>& variants) {
  pin_eigen_blocking();
  const ClaimInfo& info = claim.info();
  for (const std::string& variant : variants) {
    if (!variant.empty()) check_mutant_known(info, variant);
  }

  RunContext context;
  context.params = claim.resolve(options.overrides, options.budget);
  context.overrides = options.overrides;
  context.budget = options.budget;
  context.seed = options.seed;
  context.claim_id = info.id;
  context.threads = options.threads;
  const double share = options.false_failure_share > 0 ? options.false_failure_share : info.false_failure_share;
  context.claim_false_failure_share = share;
  context.progress = options.progress;

  std::vector<Verdict> verdicts = claim.evaluate(context, variants);
  if (verdicts.size() != variants.size()) {
    throw std::logic_error(fmt::format("claim {} returned {} verdicts for {} variants", info.id, verdicts.size(),
                                       variants.size()));
  }
  for (std::size_t v = 0; v < verdicts.size(); ++v) {
    Verdict& verdict = verdicts[v];
    if (verdict.outcome != Outcome::error) check_shares(info, share, verdict);
    verdict.claim_id = info.id;
    verdict.mutant = variants[v];
    verdict.seed = options.seed;
    verdict.budget = std::string(to_string(options.budget.level));
    verdict.params = context.params.items();
    verdict.false_failure_rate = share;
  }
  return verdicts;
}

Verdict run_claim(const Claim& claim, const RunOptions& options) {
  return run_claim_variants(claim, options, {options.mutant}).front();
}

}  // namespace dyncheck::checks
