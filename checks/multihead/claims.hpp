#pragma once
// The multihead family: learning a multi-head attention layer (Chen, Li, STOC 2025;
// specs/multihead.md). One make_<claim>() per claim.

#include <memory>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks::multihead {

std::unique_ptr<Claim> make_boolean_moments();
std::unique_ptr<Claim> make_symmetries();
std::unique_ptr<Claim> make_crude_estimate();
std::unique_ptr<Claim> make_first_gd_step();
std::unique_ptr<Claim> make_linear_response();
std::unique_ptr<Claim> make_concentration();
std::unique_ptr<Claim> make_large_margin_frequency();
std::unique_ptr<Claim> make_affine_constraint();
std::unique_ptr<Claim> make_crude_estimate_gaussian();
std::unique_ptr<Claim> make_non_identifiability();
std::unique_ptr<Claim> make_heuristic_trend();
std::unique_ptr<Claim> make_gd_success_fraction();

inline void register_claims(Registry& registry) {
  registry.add(make_boolean_moments());
  registry.add(make_symmetries());
  registry.add(make_crude_estimate());
  registry.add(make_first_gd_step());
  registry.add(make_linear_response());
  registry.add(make_concentration());
  registry.add(make_large_margin_frequency());
  registry.add(make_affine_constraint());
  registry.add(make_crude_estimate_gaussian());
  registry.add(make_non_identifiability());
  registry.add(make_heuristic_trend());
  registry.add(make_gd_success_fraction());
}

}  // namespace dyncheck::checks::multihead
