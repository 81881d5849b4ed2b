#pragma once
// The scb family: Ren, Wang, Lee, sparse contextual bigrams with linear transformers
// (NeurIPS 2024); specs/scb.md. One make_<claim>() per claim, registered in claim-number order.

#include <memory>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks::scb {

std::unique_ptr<Claim> make_population_loss_and_gradient();  // §8 claim 1
std::unique_ptr<Claim> make_sgd_step_unbiased();  // §8 claim 10
std::unique_ptr<Claim> make_softmax_step_matches_scaled_linear_step();  // claim 15 (spec §3.1)

inline void register_claims(Registry& registry) {
  registry.add(make_population_loss_and_gradient());
  registry.add(make_sgd_step_unbiased());
  registry.add(make_softmax_step_matches_scaled_linear_step());
}

}  // namespace dyncheck::checks::scb
