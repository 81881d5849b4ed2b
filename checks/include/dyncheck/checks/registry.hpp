#pragma once
// The registry of claims. Families register explicitly (no static-initialiser tricks, which a
// static library silently drops), through one function per family.

#include <memory>
#include <string>
#include <vector>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/family.hpp"

namespace dyncheck::checks {

class Registry {
 public:
  /// Throws std::logic_error on a duplicate id or a claim without mutants.
  void add(std::unique_ptr<Claim> claim);
  /// Claims in registration order.
  std::vector<const Claim*> all() const;
  const Claim* find(const std::string& id) const;
  /// Claims whose id or family is one of `selectors` ("calib", "calib.sgd_mean_matches_gradient_flow"),
  /// in registration order without repeats; throws ParamError (parameter "claim") on a selector
  /// that matches nothing.
  std::vector<const Claim*> select(const std::vector<std::string>& selectors) const;
  std::size_t size() const { return claims_.size(); }

  /// Throws std::logic_error on a duplicate family id.
  void add_family(FamilyInfo family);
  /// Families in registration order.
  const std::vector<FamilyInfo>& families() const { return families_; }

 private:
  std::vector<std::unique_ptr<Claim>> claims_;
  std::vector<FamilyInfo> families_;
};

/// Registers every family dyncheck ships (generated from the family folders by checks/CMakeLists.txt).
void register_builtin_families(Registry& registry);

/// Every claim dyncheck ships, all families.
const Registry& builtin_registry();

}  // namespace dyncheck::checks
