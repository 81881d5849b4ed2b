#include "dyncheck/reports/report.hpp"

namespace dyncheck::reports {

std::string plot_path(const std::string& claim_id, const std::string& plot_name) {
  return "plots/" + claim_id + "-" + plot_name + ".svg";
}

bool mutant_caught(const checks::Verdict& mutant_verdict) { return mutant_verdict.outcome == checks::Outcome::fail; }

}  // namespace dyncheck::reports
