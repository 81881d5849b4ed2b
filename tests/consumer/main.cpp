// Lists the installed claims and runs one at the smoke budget through the installed library.
#include <cstdio>

#include "dyncheck/checks/registry.hpp"
#include "dyncheck/checks/runner.hpp"
#include "dyncheck/portable/math.hpp"

int main() {
  const auto& registry = dyncheck::checks::builtin_registry();
  for (const auto* claim : registry.all()) std::printf("%s\n", claim->info().id.c_str());
  dyncheck::checks::RunOptions options;
  options.budget.level = dyncheck::checks::BudgetLevel::smoke;
  const auto verdict = dyncheck::checks::run_claim(*registry.find("calib.balanced_factorisation_flow"), options);
  std::printf("%s\n", std::string(dyncheck::checks::to_string(verdict.outcome)).c_str());
  std::printf("portable::pow(2, 10) = %.17g\n", dyncheck::portable::pow(2.0, 10.0));
  return verdict.outcome == dyncheck::checks::Outcome::pass ? 0 : 1;
}
