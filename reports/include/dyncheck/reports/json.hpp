#pragma once
// JSON form of verdicts and reports (nlohmann-json), with the same content as the Markdown.

#include <nlohmann/json.hpp>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/reports/report.hpp"

namespace dyncheck::reports {

nlohmann::json to_json(const checks::ClaimInfo& info);
nlohmann::json to_json(const checks::Verdict& verdict);
nlohmann::json to_json(const Report& report);
/// One claim: its info, verdict and mutants. With `max_plot_points` > 0 every plot series is thinned
/// to at most that many evenly spaced points, first and last kept (golden files).
nlohmann::json to_json(const ClaimReport& claim, std::size_t max_plot_points = 0);

}  // namespace dyncheck::reports
