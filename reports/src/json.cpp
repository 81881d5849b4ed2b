#include "dyncheck/reports/json.hpp"

#include "dyncheck/checks/mutant_points.hpp"

#include <cmath>
#include <string>

namespace dyncheck::reports {
namespace {

// JSON has no NaN or infinity; an ERROR verdict may carry them, so they become strings.
nlohmann::json number(double value) {
  if (std::isfinite(value)) return value;
  return std::isnan(value) ? "NaN" : (value > 0 ? "Infinity" : "-Infinity");
}

nlohmann::json numbers(const std::vector<double>& values) {
  nlohmann::json array = nlohmann::json::array();
  for (double value : values) array.push_back(number(value));
  return array;
}

nlohmann::json to_json(const checks::ToleranceTerm& term) { return {{"value", number(term.value)}, {"reason", term.reason}}; }

nlohmann::json to_json(const checks::Comparison& comparison) {
  return {
      {"quantity", comparison.quantity},
      {"relation", std::string(checks::to_string(comparison.relation))},
      {"theory", number(comparison.theory)},
      {"theory_error", number(comparison.theory_error)},
      {"measured", number(comparison.measured)},
      {"half_width", number(comparison.half_width)},
      {"discrepancy", number(comparison.discrepancy())},
      {"tolerance",
       {{"total", number(comparison.tolerance.total())},
        {"numerical", to_json(comparison.tolerance.numerical)},
        {"bias", to_json(comparison.tolerance.bias)},
        {"statistical", to_json(comparison.tolerance.statistical)}}},
      {"resolution", {{"value", number(comparison.resolution)}, {"reason", comparison.resolution_reason}}},
      {"margin", number(comparison.margin())},
      {"outcome", std::string(checks::to_string(comparison.outcome()))},
  };
}

nlohmann::json to_json(const checks::Plot& plot, const std::string& claim_id) {
  nlohmann::json curves = nlohmann::json::array();
  for (const checks::Curve& curve : plot.curves) {
    const char* style = curve.style == checks::Curve::Style::line     ? "line"
                        : curve.style == checks::Curve::Style::points ? "points"
                        : curve.style == checks::Curve::Style::image  ? "image"
                                                                      : "band";
    curves.push_back({{"label", curve.label},
                      {"style", style},
                      {"x", numbers(curve.x)},
                      {"y", numbers(curve.y)},
                      {"lower", numbers(curve.lower)},
                      {"upper", numbers(curve.upper)}});
  }
  return {{"name", plot.name},   {"file", plot_path(claim_id, plot.name)},
          {"title", plot.title}, {"x_label", plot.x_label},
          {"y_label", plot.y_label}, {"log_x", plot.log_x},
          {"log_y", plot.log_y}, {"curves", curves}};
}

}  // namespace

nlohmann::json to_json(const checks::ClaimInfo& info) {
  nlohmann::json params = nlohmann::json::array();
  for (const checks::ParamSpec& spec : info.params) {
    params.push_back({{"name", spec.name},
                      {"default", spec.default_value},
                      {"range", spec.range_text()},
                      {"min", spec.min},
                      {"max", spec.max},
                      {"min_exclusive", spec.min_exclusive},
                      {"integer", spec.integer},
                      {"log_scale", spec.log_scale},
                      {"description", spec.description}});
  }
  nlohmann::json mutants = nlohmann::json::array();
  for (const checks::MutantInfo& mutant : info.mutants) {
    nlohmann::json entry = {
        {"name", mutant.name}, {"description", mutant.description}, {"changes_experiment", mutant.changes_experiment}};
    // Written only when it is not the default (ci), so that other claims' golden files do not change.
    if (mutant.resolves_at != checks::BudgetLevel::ci) entry["resolves_at"] = std::string(checks::to_string(mutant.resolves_at));
    // Likewise only when declared (a mutant that drops a hypothesis of the claim: the point where it must FAIL).
    if (const checks::ParamPoint declared = checks::hypothesis_mutant_point(info.id, mutant.name); !declared.empty()) {
      nlohmann::json point = nlohmann::json::object();
      for (const auto& [name, value] : declared) {
        // integers as integers, so that ctest can pass the text back as --param name=value
        if (value == std::floor(value) && std::fabs(value) < 1e15) point[name] = static_cast<long long>(value);
        else point[name] = value;
      }
      entry["fails_at_params"] = std::move(point);
    }
    mutants.push_back(std::move(entry));
  }
  nlohmann::json json = {{"id", info.id},
          {"family", info.family},
          {"paper", info.paper},
          {"source", info.source},
          {"tag", std::string(checks::to_string(info.tag))},
          {"statement", info.statement},
          {"latex", info.latex},
          {"simulation", info.simulation},
          {"params", params},
          {"mutants", mutants},
          {"false_failure_share", info.false_failure_share}};
  if (!info.machine_dependent.empty()) json["machine_dependent"] = info.machine_dependent;
  return json;
}

nlohmann::json to_json(const checks::Verdict& verdict) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : verdict.params) params[name] = number(value);
  nlohmann::json comparisons = nlohmann::json::array();
  for (const checks::Comparison& comparison : verdict.comparisons) comparisons.push_back(to_json(comparison));
  nlohmann::json plots = nlohmann::json::array();
  for (const checks::Plot& plot : verdict.plots) plots.push_back(to_json(plot, verdict.claim_id));
  nlohmann::json json = {{"claim", verdict.claim_id},
                         {"outcome", std::string(checks::to_string(verdict.outcome))},
                         {"margin", number(verdict.margin())},
                         {"seed", verdict.seed},
                         {"budget", verdict.budget},
                         {"false_failure_rate", verdict.false_failure_rate},
                         {"false_failure_spent", verdict.false_failure_spent},
                         {"params", params},
                         {"comparisons", comparisons},
                         {"notes", verdict.notes},
                         {"plots", plots},
                         {"wall_seconds", verdict.wall_seconds}};
  if (!verdict.mutant.empty()) json["mutant"] = verdict.mutant;
  if (!verdict.error.empty()) json["error"] = verdict.error;
  if (verdict.input_unavailable) json["input_unavailable"] = true;
  return json;
}

namespace {

/// At most `count` evenly spaced entries of `values`, the first and last among them.
nlohmann::json thinned(const nlohmann::json& values, std::size_t count) {
  if (!values.is_array() || values.size() <= count || count < 2) return values;
  nlohmann::json kept = nlohmann::json::array();
  const std::size_t n = values.size();
  for (std::size_t k = 0; k < count; ++k) kept.push_back(values[k * (n - 1) / (count - 1)]);
  return kept;
}

void thin_plots(nlohmann::json& verdict, std::size_t count) {
  for (auto& plot : verdict["plots"]) {
    for (auto& curve : plot["curves"]) {
      for (const char* series : {"x", "y", "lower", "upper"}) curve[series] = thinned(curve[series], count);
    }
  }
}

}  // namespace

nlohmann::json to_json(const ClaimReport& claim, std::size_t max_plot_points) {
  nlohmann::json mutants = nlohmann::json::array();
  for (std::size_t m = 0; m < claim.mutants.size(); ++m) {
    const checks::Verdict& mutant = claim.mutants[m];
    nlohmann::json entry = to_json(mutant);
    entry["caught"] = mutant_caught(mutant);
    if (m < claim.info.mutants.size() && !mutant_must_fail(claim.info.mutants[m], mutant)) {
      entry["must_fail_at_this_budget"] = false;
    }
    if (max_plot_points > 0) thin_plots(entry, max_plot_points);
    mutants.push_back(std::move(entry));
  }
  nlohmann::json verdict = to_json(claim.verdict);
  if (max_plot_points > 0) thin_plots(verdict, max_plot_points);
  return {{"info", to_json(claim.info)}, {"verdict", verdict}, {"mutants", mutants}};
}

nlohmann::json to_json(const Report& report) {
  nlohmann::json claims = nlohmann::json::array();
  for (const ClaimReport& claim : report.claims) claims.push_back(to_json(claim));
  nlohmann::json families = nlohmann::json::array();
  for (const checks::FamilyInfo& family : report.families) {
    families.push_back({{"id", family.id}, {"paper", family.paper}, {"spec", family.spec}, {"notes", family.notes}});
  }
  return {{"dyncheck_version", report.version},
          {"budget", report.budget},
          {"seed", report.seed},
          {"suite_false_failure_rate", report.suite_false_failure_rate},
          {"claims_in_suite", report.claims_in_suite},
          {"families", families},
          {"claims", claims}};
}

}  // namespace dyncheck::reports
