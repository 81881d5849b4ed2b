#pragma once
// What a report holds: for each claim its description, its verdict and its mutants' verdicts.

#include <cstdint>
#include <string>
#include <vector>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/family.hpp"
#include "dyncheck/checks/verdict.hpp"

#include <nlohmann/json.hpp>

namespace dyncheck::reports {

struct ClaimReport {
  checks::ClaimInfo info;
  checks::Verdict verdict;
  std::vector<checks::Verdict> mutants;  ///< one per mutant, in the claim's order
};

/// A family's assumption-breaking sweep as run for the report.
struct SweepReport {
  std::string family;
  checks::SweepSpec spec;
  std::string directory;              ///< relative to the report: "sweeps/<claim>-<n>"
  std::vector<std::string> axes;      ///< axis names, in grid order
  std::vector<nlohmann::json> points; ///< the sweep's records (reports/sweep.hpp)
  std::string error;                  ///< why it could not run (then no points)
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
  /// `report --sweeps`: the families' sweeps (empty otherwise).
  std::vector<SweepReport> sweeps;
};

/// Relative path of a plot's SVG inside the report directory: "plots/<claim id>-<plot name>.svg".
std::string plot_path(const std::string& claim_id, const std::string& plot_name);

/// A mutant is caught when its verdict is FAIL; anything else (PASS, INCONCLUSIVE, ERROR) means
/// the check could not show the error it exists for.
bool mutant_caught(const checks::Verdict& mutant_verdict);

/// Whether a mutant's verdict other than FAIL is flagged ("not caught") at the budget it ran at: always
/// for a mutant of the default kind (resolves_at ci), at every budget; for one declared to resolve only
/// at full (MutantInfo::resolves_at), only at full.
bool mutant_must_fail(const checks::MutantInfo& mutant, const checks::Verdict& mutant_verdict);

/// What the report says of a claim whose numbers are machine-dependent (ClaimInfo::machine_dependent);
/// empty for a claim whose numbers are the same on every machine.
std::string reproducibility_note(const checks::ClaimInfo& info);

}  // namespace dyncheck::reports
