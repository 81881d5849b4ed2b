#include "dyncheck/checks/registry.hpp"

#include <algorithm>
#include <stdexcept>


namespace dyncheck::checks {

void Registry::add(std::unique_ptr<Claim> claim) {
  const ClaimInfo& info = claim->info();
  if (find(info.id) != nullptr) throw std::logic_error("claim registered twice: " + info.id);
  if (info.mutants.empty()) throw std::logic_error("claim without a mutant cannot show it can fail: " + info.id);
  if (info.id.rfind(info.family + ".", 0) != 0) throw std::logic_error("claim id must start with its family: " + info.id);
  if (info.false_failure_share <= 0 || info.false_failure_share >= 1) {
    throw std::logic_error("claim false-failure share must be in (0, 1): " + info.id);
  }
  claims_.push_back(std::move(claim));
}

void Registry::add_family(FamilyInfo family) {
  for (const FamilyInfo& known : families_) {
    if (known.id == family.id) throw std::logic_error("family registered twice: " + family.id);
  }
  families_.push_back(std::move(family));
}

const std::vector<FamilyInfo>& builtin_families() { return builtin_registry().families(); }

const FamilyInfo* find_family(std::string_view id) {
  for (const FamilyInfo& family : builtin_registry().families()) {
    if (family.id == id) return &family;
  }
  return nullptr;
}

std::vector<const Claim*> Registry::all() const {
  std::vector<const Claim*> claims;
  for (const auto& claim : claims_) claims.push_back(claim.get());
  return claims;
}

const Claim* Registry::find(const std::string& id) const {
  for (const auto& claim : claims_) {
    if (claim->info().id == id) return claim.get();
  }
  return nullptr;
}

std::vector<const Claim*> Registry::select(const std::vector<std::string>& selectors) const {
  std::vector<const Claim*> selected;
  for (const std::string& selector : selectors) {
    bool matched = false;
    for (const auto& claim : claims_) {
      if (claim->info().id != selector && claim->info().family != selector) continue;
      matched = true;
      if (std::find(selected.begin(), selected.end(), claim.get()) == selected.end()) selected.push_back(claim.get());
    }
    if (!matched) {
      throw ParamError("claim", "no claim or family named '" + selector + "' (see `dyncheck list`)");
    }
  }
  std::stable_sort(selected.begin(), selected.end(), [this](const Claim* a, const Claim* b) {
    auto index = [this](const Claim* c) {
      return std::find_if(claims_.begin(), claims_.end(), [c](const auto& p) { return p.get() == c; }) - claims_.begin();
    };
    return index(a) < index(b);
  });
  return selected;
}

const Registry& builtin_registry() {
  static const Registry registry = [] {
    Registry r;
    register_builtin_families(r);
    return r;
  }();
  return registry;
}

}  // namespace dyncheck::checks
