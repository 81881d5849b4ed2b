#pragma once
// What a report holds: for each claim its description, its verdict and its mutants' verdicts.

#include <cstdint>
#include <string>
#include <vector>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/family.hpp"
#include "dyncheck/checks/verdict.hpp"

namespace dyncheck::reports {

struct ClaimReport {
  checks::ClaimInfo info;
  checks::Verdict verdict;
  std::vector<checks::Verdict> mutants;  ///< one per mutant, in the claim's order
};

struct Report {
  std::string budget;
  std::uint64_t seed = 0;
  double suite_false_failure_rate = 0;
  std::size_t claims_in_suite = 0;
  std::string version;
  std::vector<ClaimReport> claims;
  /// Descriptions of the claims' families (a family without one is reported by its id alone).
  std::vector<checks::FamilyInfo> families;
};

/// Relative path of a plot's SVG inside the report directory: "plots/<claim id>-<plot name>.svg".
std::string plot_path(const std::string& claim_id, const std::string& plot_name);

/// A mutant is caught when its verdict is FAIL; anything else (PASS, INCONCLUSIVE, ERROR) means
/// the check could not show the error it exists for.
bool mutant_caught(const checks::Verdict& mutant_verdict);

}  // namespace dyncheck::reports
