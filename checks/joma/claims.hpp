#pragma once
// The joma family: claims of Tian et al., JoMA (ICLR 2024), specs/joma.md §7.

#include <memory>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks::joma {

std::unique_ptr<Claim> make_exp_invariant_exact_per_step();
std::unique_ptr<Claim> make_linear_invariant_exact_per_step();
std::unique_ptr<Claim> make_invariant_defect_first_order_in_eta();
std::unique_ptr<Claim> make_near_orthogonal_invariant_defect();
std::unique_ptr<Claim> make_linear_activation_erf_solution();

inline void register_claims(Registry& registry) {
  registry.add(make_exp_invariant_exact_per_step());
  registry.add(make_linear_invariant_exact_per_step());
  registry.add(make_invariant_defect_first_order_in_eta());
  registry.add(make_near_orthogonal_invariant_defect());
  registry.add(make_linear_activation_erf_solution());
}

}  // namespace dyncheck::checks::joma
