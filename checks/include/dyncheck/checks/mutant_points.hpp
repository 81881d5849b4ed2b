#pragma once
// Mutants that drop a hypothesis of their claim (checks/README.md, "Settings"; README "Sweeps").
//
// Such a mutant reads the theorem's conclusion beyond its hypothesis, for a report sweep that shows where the
// conclusion stops describing training. Wherever the hypothesis holds, the claim's defaults included, it is the
// claim itself and PASSes with it; so instead of FAILing at the defaults it declares a point beyond the hypothesis
// where it must FAIL (at its MutantInfo::resolves_at). Its ctest runs it there (tests/claims/CMakeLists.txt); the
// report and the fuzz do not require it to FAIL elsewhere. A mutant without a declared point is of the default
// kind: it must FAIL at the defaults.
//
// The points are kept in this table, keyed by claim id and mutant name, rather than in MutantInfo, so that adding
// one does not change a header that every claim includes (claim.hpp); a claim declares its points when it is
// constructed (at registration).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dyncheck::checks {

/// Parameter values by name (as Verdict::params).
using ParamPoint = std::vector<std::pair<std::string, double>>;

/// Declares that mutant `mutant` of claim `claim_id` drops a hypothesis of the claim and must FAIL at `point` (the
/// other parameters at their defaults). Declaring again replaces the point. Thread-safe.
void declare_hypothesis_mutant(const std::string& claim_id, const std::string& mutant, ParamPoint point);

/// The declared point of a mutant that drops a hypothesis; empty for a mutant of the default kind.
ParamPoint hypothesis_mutant_point(std::string_view claim_id, std::string_view mutant);

/// Whether a run with `params` (a verdict's resolved parameters) is where the mutant must FAIL: always for a mutant
/// of the default kind; otherwise when every parameter of its declared point has its declared value.
bool at_failing_point(std::string_view claim_id, std::string_view mutant, const ParamPoint& params);

}  // namespace dyncheck::checks
