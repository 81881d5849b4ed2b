#pragma once
// The Markdown report: a summary table, then one section per claim with its statement,
// parameters, comparisons, tolerance breakdown, verdict, mutants and plots.

#include <string>

#include "dyncheck/reports/report.hpp"

namespace dyncheck::reports {

std::string to_markdown(const Report& report);
/// One claim's section of the report (as in REPORT.md), on its own.
std::string to_markdown(const ClaimReport& claim);

}  // namespace dyncheck::reports
