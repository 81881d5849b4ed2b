#include "dyncheck/reports/markdown.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dyncheck/checks/mutant_points.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace dyncheck::reports {
namespace {

using checks::Comparison;
using checks::Outcome;
using checks::Verdict;

std::string number(double value) { return fmt::format("{:.6g}", value); }
std::string short_number(double value) { return fmt::format("{:.3g}", value); }
/// Every time in a report is written "<seconds with three decimals> s", so that golden-file
/// tests can scrub them with one pattern.
std::string seconds(double value) { return fmt::format("{:.3f} s", value); }

/// GitHub-style heading anchor: lower case, dots and spaces dropped or dashed.
std::string anchor(const std::string& id) {
  std::string out;
  for (char c : id) {
    if (c == '.') continue;
    out += c == ' ' ? '-' : c;
  }
  return out;
}

std::string escape_cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

/// "N = 4, d = 4": the point where a mutant that drops a hypothesis of its claim must FAIL (checks/mutant_points.hpp).
std::string failing_point(const std::string& claim_id, const std::string& mutant) {
  std::string out;
  for (const auto& [name, value] : checks::hypothesis_mutant_point(claim_id, mutant)) {
    out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", name, value);
  }
  return out;
}

std::string plus_minus(double value, double error) { return number(value) + " ± " + short_number(error); }

void tolerance_reasons(std::string& out, const std::vector<Comparison>& comparisons) {
  auto list_distinct = [&](const char* name, auto reason_of) {
    std::vector<std::string> seen;
    for (const Comparison& comparison : comparisons) {
      const std::string reason = reason_of(comparison);
      if (!reason.empty() && std::find(seen.begin(), seen.end(), reason) == seen.end()) seen.push_back(reason);
    }
    for (const std::string& reason : seen) out += fmt::format("- **{}**: {}\n", name, reason);
  };
  list_distinct("numerical", [](const Comparison& c) { return c.tolerance.numerical.reason; });
  list_distinct("bias", [](const Comparison& c) { return c.tolerance.bias.reason; });
  list_distinct("statistical", [](const Comparison& c) { return c.tolerance.statistical.reason; });
  list_distinct("resolution", [](const Comparison& c) { return c.resolution_reason; });
}

std::string outcome_counts(const std::vector<Comparison>& comparisons) {
  std::size_t counts[4] = {0, 0, 0, 0};
  for (const Comparison& comparison : comparisons) ++counts[static_cast<int>(comparison.outcome())];
  std::string text = fmt::format("{} comparisons: {} pass", comparisons.size(), counts[0]);
  if (counts[1] != 0) text += fmt::format(", {} fail", counts[1]);
  if (counts[2] != 0) text += fmt::format(", {} inconclusive", counts[2]);
  if (counts[3] != 0) text += fmt::format(", {} error", counts[3]);
  return text;
}

void claim_section(std::string& out, const ClaimReport& claim) {
  const checks::ClaimInfo& info = claim.info;
  const Verdict& verdict = claim.verdict;
  out += fmt::format("\n### {}\n\n", info.id);
  out += fmt::format("**Verdict: {}** (margin {}; {}) · time {}\n\n", checks::to_string(verdict.outcome),
                     short_number(verdict.margin()), outcome_counts(verdict.comparisons), seconds(verdict.wall_seconds));
  if (!verdict.error.empty()) out += fmt::format("**Error:** {}\n\n", verdict.error);
  out += fmt::format("- Paper: {}\n- Source: {}\n- Tag: {}\n- Statement: {}\n- Simulation: {}\n", info.paper,
                     info.source, checks::to_string(info.tag), info.statement, info.simulation);
  if (info.tag == checks::Provenance::reconstructed) {
    out += "\n> This statement is **[reconstructed]**: the most likely reading of the paper, whose full text is not "
           "available here; its constants and normalisations may differ from the paper's.\n";
  }
  if (!info.latex.empty()) out += fmt::format("\n$$\n{}\n$$\n", info.latex);
  if (const std::string note = reproducibility_note(info); !note.empty()) {
    out += fmt::format("\n> **Reproducibility:** {}\n", note);
  }

  out += "\n#### Parameters\n\n| name | value | valid range | meaning |\n|---|---|---|---|\n";
  for (const checks::ParamSpec& spec : info.params) {
    double value = spec.default_value;
    for (const auto& [name, used] : verdict.params) {
      if (name == spec.name) value = used;
    }
    out += fmt::format("| `{}` | {} | {} | {} |\n", spec.name, number(value), spec.range_text(), escape_cell(spec.description));
  }
  out += fmt::format("\nSeed {}, budget `{}`, false-failure share of this claim {:.2g} (its comparisons' statistical "
                     "terms use {:.2g} of it).\n",
                     verdict.seed, verdict.budget, verdict.false_failure_rate, verdict.false_failure_spent);

  if (!verdict.comparisons.empty()) {
    out += "\n#### Comparisons\n\n"
           "| quantity | theory ± numerical error | measured ± half-width | discrepancy | tolerance = numerical + bias + "
           "statistical | resolution | margin | verdict |\n|---|---|---|---|---|---|---|---|\n";
    for (const Comparison& c : verdict.comparisons) {
      out += fmt::format("| {} | {} | {} | {} {} | {} = {} + {} + {} | {} | {} | {} |\n", escape_cell(c.quantity),
                         plus_minus(c.theory, c.theory_error), plus_minus(c.measured, c.half_width),
                         short_number(c.discrepancy()), c.relation == checks::Relation::equal ? "" : fmt::format("({})", checks::to_string(c.relation)),
                         short_number(c.tolerance.total()), short_number(c.tolerance.numerical.value),
                         short_number(c.tolerance.bias.value), short_number(c.tolerance.statistical.value),
                         short_number(c.resolution), short_number(c.margin()), checks::to_string(c.outcome()));
    }
    out += "\n#### Where the tolerance comes from\n\n";
    tolerance_reasons(out, verdict.comparisons);
  }
  if (!verdict.notes.empty()) {
    out += "\n#### Notes\n\n";
    for (const std::string& note : verdict.notes) out += "- " + note + "\n";
  }
  if (!claim.mutants.empty()) {
    out += "\n#### Mutants\n\nEach mutant is a deliberately wrong theory; the check must FAIL it.\n\n"
           "| mutant | what is wrong | verdict | margin | caught |\n|---|---|---|---|---|\n";
    for (std::size_t m = 0; m < claim.mutants.size(); ++m) {
      const Verdict& mutant = claim.mutants[m];
      const std::string description = m < info.mutants.size() ? info.mutants[m].description : "";
      const bool must_fail = m >= info.mutants.size() || mutant_must_fail(info.mutants[m], mutant);
      out += fmt::format("| `{}` | {} | {} | {} | {} |\n", mutant.mutant, escape_cell(description),
                         checks::to_string(mutant.outcome), short_number(mutant.margin()),
                         mutant_caught(mutant) ? "yes"
                         : must_fail           ? "**no**"
                         : !checks::at_failing_point(info.id, mutant.mutant, mutant.params)
                             ? fmt::format("not here: it drops a hypothesis of the claim, so it is the claim itself where "
                                           "the hypothesis holds; it FAILs beyond it, at {}",
                                           failing_point(info.id, mutant.mutant))
                             : fmt::format("not decided at `{}`: resolves at `{}` only", mutant.budget,
                                           checks::to_string(info.mutants[m].resolves_at)));
    }
  }
  if (!verdict.plots.empty()) {
    out += "\n#### Plots\n\n";
    for (const checks::Plot& plot : verdict.plots) {
      out += fmt::format("![{}]({})\n\n", plot.title, plot_path(info.id, plot.name));
    }
  }
}

void family_section(std::string& out, const std::string& family, const Report& report) {
  const std::vector<ClaimReport>& claims = report.claims;
  std::vector<const ClaimReport*> members;
  for (const ClaimReport& claim : claims) {
    if (claim.info.family == family) members.push_back(&claim);
  }
  std::size_t passed = 0, mutants = 0, caught = 0;
  for (const ClaimReport* claim : members) {
    passed += claim->verdict.outcome == Outcome::pass ? 1 : 0;
    mutants += claim->mutants.size();
    caught += static_cast<std::size_t>(std::count_if(claim->mutants.begin(), claim->mutants.end(),
                                                     [](const Verdict& v) { return mutant_caught(v); }));
  }
  const auto described = std::find_if(report.families.begin(), report.families.end(),
                                      [&](const checks::FamilyInfo& f) { return f.id == family; });
  const bool has_description = described != report.families.end();
  out += fmt::format("\n## Family `{}`: {}\n\n", family,
                     has_description ? described->paper : members.front()->info.paper);
  if (has_description) out += fmt::format("Spec: {}.\n\n", described->spec);
  out += fmt::format("{} of {} claims pass; {} of {} mutants caught.\n", passed, members.size(), caught, mutants);
  if (has_description && !described->notes.empty()) {
    out += "\n";
    for (const std::string& note : described->notes) out += "- " + note + "\n";
  }
  for (const ClaimReport* claim : members) claim_section(out, *claim);
}

}  // namespace

std::string to_markdown(const ClaimReport& claim) {
  std::string out;
  claim_section(out, claim);
  return out;
}

namespace {

std::string json_number_text(const nlohmann::json& value) {
  if (value.is_number()) return short_number(value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  return "–";
}

void sweeps_section(std::string& out, const Report& report) {
  out += "\n## Where the theorems stop holding\n\n"
         "Each family's claims over a grid that breaks one of their assumptions (`dyncheck sweep`; files in the "
         "linked folder). *margin* is the claim's own (its tolerance includes the derived bias allowance, so a "
         "claim whose bias is derived for the whole range keeps it below 1 and turns INCONCLUSIVE where the bias "
         "outgrows its resolution); *gap / noise* is discrepancy / (numerical + statistical), the margin the "
         "theorem's leading-order statement would have if it were taken as exact: above 1 the gap between theory "
         "and training is larger than noise and arithmetic explain. A sweep marked *[mutant …]* evaluates that mutant "
         "instead of the claim: a theorem's literal statement (its hypothesis dropped, or its asymptotic law taken "
         "as exact), which the claim itself corrects; its margin above 1 is where the literal statement stops "
         "describing training.\n";
  for (const SweepReport& sweep : report.sweeps) {
    out += fmt::format("\n### {}{} ({})\n\n{}\n\nGrid: `{}`", sweep.spec.claim,
                       sweep.spec.mutant.empty() ? "" : " [mutant " + sweep.spec.mutant + "]", sweep.family,
                       sweep.spec.breaks, fmt::join(sweep.spec.grid, " "));
    if (!sweep.spec.params.empty()) out += fmt::format(", fixed: `{}`", fmt::join(sweep.spec.params, " "));
    out += fmt::format(". Files: [{0}]({0}/sweep.json), [plot]({0}/sweep.svg).\n\n", sweep.directory);
    if (!sweep.error.empty()) {
      out += fmt::format("**Not run:** {}\n", sweep.error);
      continue;
    }
    out += "|";
    for (const std::string& axis : sweep.axes) out += " " + axis + " |";
    out += " verdict | margin | gap / noise |\n|";
    for (std::size_t a = 0; a < sweep.axes.size() + 3; ++a) out += "---|";
    out += "\n";
    std::string first_beyond;
    for (const nlohmann::json& point : sweep.points) {
      out += "|";
      std::string where;
      for (const std::string& axis : sweep.axes) {
        const std::string value = point["point"][axis].get<std::string>();
        out += " " + value + " |";
        where += (where.empty() ? "" : ", ") + axis + " = " + value;
      }
      const nlohmann::json none;
      const nlohmann::json& without = point.contains("margin_without_bias") ? point["margin_without_bias"] : none;
      out += fmt::format(" {} | {} | {} |\n", point["outcome"].get<std::string>(),
                         json_number_text(point.contains("margin") ? point["margin"] : none), json_number_text(without));
      const bool beyond = (without.is_number() && without.get<double>() > 1) || (without.is_string() && without != "NaN");
      if (first_beyond.empty() && beyond) first_beyond = where;
    }
    out += first_beyond.empty()
               ? "\nThe gap stays within noise over the whole grid.\n"
               : fmt::format("\nThe gap first exceeds the noise at {} (grid order).\n", first_beyond);
    out += fmt::format("\n![{0}]({1}/sweep.svg)\n", sweep.spec.claim, sweep.directory);
  }
}

}  // namespace

std::string to_markdown(const Report& report) {
  std::string out = "# dyncheck report\n\n";
  out += fmt::format(
      "dyncheck {} · budget `{}` · master seed {} · suite-wide false-failure rate {:.2g}: the sum of the fixed shares of "
      "the {} claims in this report\n\n",
      report.version, report.budget, report.seed, report.suite_false_failure_rate, report.claims_in_suite);
  out += "## Summary\n\n| claim | paper | tag | verdict | margin | mutants caught | time |\n|---|---|---|---|---|---|---|\n";
  std::size_t passed = 0;
  for (const ClaimReport& claim : report.claims) {
    const std::size_t caught = static_cast<std::size_t>(
        std::count_if(claim.mutants.begin(), claim.mutants.end(), [](const Verdict& v) { return mutant_caught(v); }));
    passed += claim.verdict.outcome == Outcome::pass ? 1 : 0;
    out += fmt::format("| [{}](#{}) | {} | {} | {} | {} | {}/{} | {} |\n", claim.info.id, anchor(claim.info.id),
                       escape_cell(claim.info.paper), checks::to_string(claim.info.tag),
                       checks::to_string(claim.verdict.outcome), short_number(claim.verdict.margin()), caught,
                       claim.mutants.size(), seconds(claim.verdict.wall_seconds));
  }
  out += fmt::format(
      "\n{} of {} claims pass. Margin = largest |theory − measured| / tolerance over the claim's compared quantities "
      "(below 1 passes). A claim is INCONCLUSIVE when its tolerance is wider than the discrepancy it promises to "
      "resolve.\n",
      passed, report.claims.size());
  // One section per family, in registration order, so that a paper's claims read together.
  std::vector<std::string> families;
  for (const ClaimReport& claim : report.claims) {
    if (std::find(families.begin(), families.end(), claim.info.family) == families.end()) {
      families.push_back(claim.info.family);
    }
  }
  for (const std::string& family : families) {
    family_section(out, family, report);
  }
  if (!report.sweeps.empty()) sweeps_section(out, report);
  return out;
}

}  // namespace dyncheck::reports
