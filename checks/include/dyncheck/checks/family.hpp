#pragma once
// A family of claims: one paper, its spec, and what the family deliberately leaves unchecked.
// Reports open each family's section with it, so that a reader sees what was not tested next to
// what was.

#include <string>
#include <string_view>
#include <vector>

namespace dyncheck::checks {

struct FamilyInfo {
  std::string id;     ///< "scb", the prefix of its claim ids
  std::string paper;  ///< full citation
  std::string spec;   ///< the implementation spec, e.g. "specs/scb.md"
  /// What the family does not check, and why; choices that concern every claim of the family.
  std::vector<std::string> notes;
};

/// Every family dyncheck ships, in registration order.
const std::vector<FamilyInfo>& builtin_families();

/// The family with this id, or nullptr.
const FamilyInfo* find_family(std::string_view id);

}  // namespace dyncheck::checks
