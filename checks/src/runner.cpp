#include "dyncheck/checks/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
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

Verdict run_claim(const Claim& claim, const RunOptions& options) {
  const ClaimInfo& info = claim.info();
  if (!options.mutant.empty()) {
    const bool known = std::any_of(info.mutants.begin(), info.mutants.end(),
                                   [&](const MutantInfo& mutant) { return mutant.name == options.mutant; });
    if (!known) {
      std::string names;
      for (const MutantInfo& mutant : info.mutants) names += (names.empty() ? "" : ", ") + mutant.name;
      throw ParamError("mutant", fmt::format("claim {} has no mutant '{}'; its mutants are: {}", info.id,
                                             options.mutant, names));
    }
  }

  RunContext context;
  context.params = Params::resolve(info.params, options.overrides);
  context.budget = options.budget;
  context.seed = options.seed;
  context.claim_id = info.id;
  context.mutant = options.mutant;
  context.threads = options.threads;
  context.progress = options.progress;

  const auto start = std::chrono::steady_clock::now();
  Verdict verdict;
  try {
    verdict = claim.run(context);
    verdict.outcome = combine(verdict.comparisons);
    if (verdict.outcome == Outcome::error) {
      verdict.error = verdict.comparisons.empty() ? std::string("the run produced no comparison")
                                                  : std::string("a compared quantity is NaN or infinite");
      for (const Comparison& comparison : verdict.comparisons) {
        if (!comparison.finite()) {
          verdict.error = "non-finite value in comparison '" + comparison.quantity + "'";
          break;
        }
      }
    }
  } catch (const ParamError&) {
    throw;
  } catch (const std::exception& error) {
    verdict = Verdict{};
    verdict.outcome = Outcome::error;
    verdict.error = error.what();
  }
  verdict.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  verdict.claim_id = info.id;
  verdict.mutant = options.mutant;
  verdict.seed = options.seed;
  verdict.budget = std::string(to_string(options.budget.level));
  verdict.params = context.params.items();
  verdict.false_failure_rate = context.false_failure_rate();
  return verdict;
}

}  // namespace dyncheck::checks
