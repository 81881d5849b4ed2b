#pragma once
// The scb family: Sparse Contextual Bigrams with a one-layer linear transformer (Ren, Wang, Lee,
// NeurIPS 2024; specs/scb.md). One make_<claim>() per claim, registered in the claim numbers of
// specs/scb.md §8 (15 and 16 are the softmax claims of the OpenReview response, spec §3.1).

#include <memory>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks::scb {

std::unique_ptr<Claim> make_population_loss_and_gradient();              // 1
std::unique_ptr<Claim> make_population_gd_equals_reduced_recurrences();  // 2
std::unique_ptr<Claim> make_gd_to_flow_first_order();                    // 3
std::unique_ptr<Claim> make_linearised_closed_form();                    // 4
std::unique_ptr<Claim> make_escape_time_log_T();                         // 5
std::unique_ptr<Claim> make_fast_phase_landing();                        // 6
std::unique_ptr<Claim> make_slow_phase_rate();                           // 7
std::unique_ptr<Claim> make_sign_branch();                               // 8
std::unique_ptr<Claim> make_transfer_skips_stage_one();                  // 9
std::unique_ptr<Claim> make_sgd_step_unbiased();                         // 10
std::unique_ptr<Claim> make_sgd_tracks_noise_corrected_model();          // 11
std::unique_ptr<Claim> make_stage_one_batch_linear_in_T();               // 12
std::unique_ptr<Claim> make_stage_two_l1_error_flat_in_T();              // 13
std::unique_ptr<Claim> make_two_stage_detection();                       // 14
std::unique_ptr<Claim> make_softmax_step_matches_scaled_linear_step();   // 15
std::unique_ptr<Claim> make_softmax_preconditioner_concentrates();       // 16
std::unique_ptr<Claim> make_proximal_beats_sgd_at_small_batch();         // §7 (issue #18)

inline void register_claims(Registry& registry) {
  registry.add(make_population_loss_and_gradient());
  registry.add(make_population_gd_equals_reduced_recurrences());
  registry.add(make_gd_to_flow_first_order());
  registry.add(make_linearised_closed_form());
  registry.add(make_escape_time_log_T());
  registry.add(make_fast_phase_landing());
  registry.add(make_slow_phase_rate());
  registry.add(make_sign_branch());
  registry.add(make_transfer_skips_stage_one());
  registry.add(make_sgd_step_unbiased());
  registry.add(make_sgd_tracks_noise_corrected_model());
  registry.add(make_stage_one_batch_linear_in_T());
  registry.add(make_stage_two_l1_error_flat_in_T());
  registry.add(make_two_stage_detection());
  registry.add(make_softmax_step_matches_scaled_linear_step());
  registry.add(make_softmax_preconditioner_concentrates());
  registry.add(make_proximal_beats_sgd_at_small_batch());
}

}  // namespace dyncheck::checks::scb
