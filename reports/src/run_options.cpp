#include "dyncheck/reports/run_options.hpp"

#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "dyncheck/checks/params.hpp"

namespace dyncheck::reports {
namespace {

/// Every --param value against every selected claim that declares the parameter, so that a
/// malformed or out-of-range value is rejected before the first claim runs.
void check_override_values(const std::vector<const checks::Claim*>& claims,
                           const std::vector<checks::ParamOverride>& overrides) {
  for (const auto& [name, text] : overrides) {
    for (const checks::Claim* claim : claims) {
      for (const checks::ParamSpec& spec : claim->info().params) {
        if (spec.name == name) (void)checks::parse_param_value(spec, text);
      }
    }
  }
}

}  // namespace

checks::RunOptions run_options(const CommonOptions& common, const std::vector<const checks::Claim*>& claims) {
  checks::RunOptions options;
  options.budget.level = checks::parse_budget(common.budget);
  options.seed = common.seed ? checks::parse_seed("--seed", *common.seed) : checks::master_seed_from_environment();
  if (common.threads) {
    options.threads = checks::parse_thread_count("--threads", *common.threads);
  } else if (const char* env = std::getenv("DYNCHECK_THREADS"); env != nullptr) {
    options.threads = checks::parse_thread_count("DYNCHECK_THREADS", env);
  }
  std::set<std::string> seen;
  for (const std::string& text : common.params) {
    checks::ParamOverride override_ = checks::parse_param_override(text);
    if (!seen.insert(override_.first).second) {
      throw checks::ParamError(override_.first,
                               fmt::format("parameter '{}' was given twice (--param {}=... appears more than once); "
                                           "give each parameter at most once",
                                           override_.first, override_.first));
    }
    options.overrides.push_back(std::move(override_));
  }
  checks::check_overrides_apply(claims, options.overrides);
  check_override_values(claims, options.overrides);
  checks::check_parameters(claims, options);
  return options;
}

}  // namespace dyncheck::reports
