#pragma once
// The scb family: Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams (specs/scb.md).
// Claims are registered in the order of the spec's §8 list.

#include <memory>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks::scb {

std::unique_ptr<Claim> make_sgd_tracks_noise_corrected_model();  // §8 claim 11
std::unique_ptr<Claim> make_stage_one_batch_linear_in_T();       // §8 claim 12
std::unique_ptr<Claim> make_stage_two_l1_error_flat_in_T();      // §8 claim 13
std::unique_ptr<Claim> make_two_stage_detection();                // §8 claim 14

inline void register_claims(Registry& registry) {
  registry.add(make_sgd_tracks_noise_corrected_model());
  registry.add(make_stage_one_batch_linear_in_T());
  registry.add(make_stage_two_l1_error_flat_in_T());
  registry.add(make_two_stage_detection());
}

}  // namespace dyncheck::checks::scb
