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

}  // namespace dyncheck::reports
