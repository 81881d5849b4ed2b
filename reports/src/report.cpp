#include "dyncheck/reports/report.hpp"

namespace dyncheck::reports {

std::string plot_path(const std::string& claim_id, const std::string& plot_name) {
  return "plots/" + claim_id + "-" + plot_name + ".svg";
}

bool mutant_caught(const checks::Verdict& mutant_verdict) { return mutant_verdict.outcome == checks::Outcome::fail; }

bool mutant_must_fail(const checks::MutantInfo& mutant, const checks::Verdict& mutant_verdict) {
  return checks::must_fail_at(mutant, checks::parse_budget(mutant_verdict.budget));
}

std::string reproducibility_note(const checks::ClaimInfo& info) {
  if (info.machine_dependent.empty()) return {};
  return "The numbers of this claim are reproducible on one machine only (the same CPU, libraries and build; "
         "the same result for any --threads), not across machines: " +
         info.machine_dependent +
         " The golden-file and libm-variant tests therefore compare its structure, ids, verdicts and labels, "
         "not its numbers.";
}

}  // namespace dyncheck::reports
