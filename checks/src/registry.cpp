#include "dyncheck/checks/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include "../calib/claims.hpp"
#include "../joma/claims.hpp"
#include "../scb/claims.hpp"

namespace dyncheck::checks {

void Registry::add(std::unique_ptr<Claim> claim) {
  const ClaimInfo& info = claim->info();
  if (find(info.id) != nullptr) throw std::logic_error("claim registered twice: " + info.id);
  if (info.mutants.empty()) throw std::logic_error("claim without a mutant cannot show it can fail: " + info.id);
  if (info.id.rfind(info.family + ".", 0) != 0) throw std::logic_error("claim id must start with its family: " + info.id);
  claims_.push_back(std::move(claim));
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
    calib::register_claims(r);
    joma::register_claims(r);
    scb::register_claims(r);
    return r;
  }();
  return registry;
}

}  // namespace dyncheck::checks
