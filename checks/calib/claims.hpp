#pragma once
// The calibration family: known-answer claims that exercise every piece of the pipeline
// (high-precision theory, ODE integration with error estimates, replicated SGD, statistics).

#include <memory>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks::calib {

std::unique_ptr<Claim> make_sgd_mean_matches_gradient_flow();
std::unique_ptr<Claim> make_discretisation_gap_first_order();
std::unique_ptr<Claim> make_balanced_factorisation_flow();

inline void register_claims(Registry& registry) {
  registry.add(make_sgd_mean_matches_gradient_flow());
  registry.add(make_discretisation_gap_first_order());
  registry.add(make_balanced_factorisation_flow());
}

}  // namespace dyncheck::checks::calib
