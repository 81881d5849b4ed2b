#include "dyncheck/reports/report.hpp"

#include "dyncheck/checks/mutant_points.hpp"

namespace dyncheck::reports {

std::string plot_path(const std::string& claim_id, const std::string& plot_name) {
  return "plots/" + claim_id + "-" + plot_name + ".svg";
}

bool mutant_caught(const checks::Verdict& mutant_verdict) { return mutant_verdict.outcome == checks::Outcome::fail; }

bool mutant_must_fail(const checks::MutantInfo& mutant, const checks::Verdict& mutant_verdict) {
  // A mutant of the default kind (resolves_at ci) is flagged when not caught at any budget, smoke included,
  // as before resolves_at existed; one declared to resolve only at full is excused below full. A verdict
  // that records no budget (built by hand, e.g. in tests) is held to the strict rule.
  // A mutant that drops a hypothesis of the claim (checks/mutant_points.hpp) is the claim itself wherever the
  // hypothesis holds: it must FAIL only at its declared point.
  if (!checks::at_failing_point(mutant_verdict.claim_id, mutant.name, mutant_verdict.params)) return false;
  if (mutant.resolves_at <= checks::BudgetLevel::ci || mutant_verdict.budget.empty()) return true;
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
