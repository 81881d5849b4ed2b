#pragma once
// A family of claims: one paper, its spec, and what the family deliberately leaves unchecked.
// Reports open each family's section with it, so that a reader sees what was not tested next to
// what was.

#include <string>
#include <string_view>
#include <vector>

namespace dyncheck::checks {

/// A sweep the report runs (`dyncheck report --sweeps`) to show where one of the family's theorems
/// stops holding: the claim over a grid that breaks an assumption (reports/sweep.hpp).
struct SweepSpec {
  std::string claim;                ///< claim id
  std::vector<std::string> grid;    ///< --grid axes, e.g. "eta=0.05:0.8:6:log"
  std::vector<std::string> params;  ///< fixed --param name=value
  std::string breaks;               ///< the assumption the grid breaks, and what the reader should see
  /// Empty: the claim itself. Else one of its mutants, evaluated at every point instead of the claim:
  /// a theorem's literal statement kept as a mutant (its hypothesis dropped, its asymptotic law taken
  /// as exact) shows where that statement stops describing the simulation.
  std::string mutant = {};
};

struct FamilyInfo {
  std::string id;     ///< "scb", the prefix of its claim ids
  std::string paper;  ///< full citation
  std::string spec;   ///< the implementation spec, e.g. "specs/scb.md"
  /// What the family does not check, and why; choices that concern every claim of the family.
  std::vector<std::string> notes;
  /// Assumption-breaking sweeps for the report's "Where the theorems stop holding" section.
  std::vector<SweepSpec> sweeps;
};

/// Every family dyncheck ships, in registration order.
const std::vector<FamilyInfo>& builtin_families();

/// The family with this id, or nullptr.
const FamilyInfo* find_family(std::string_view id);

}  // namespace dyncheck::checks
