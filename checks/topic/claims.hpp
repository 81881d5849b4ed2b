#pragma once
// The topic family: Li, Li, Risteski, How do transformers learn topic structure (ICML 2023);
// specs/topic.md. One make_<claim>() per claim, registered in the order of specs/topic.md §9.

#include <memory>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks::topic {

std::unique_ptr<Claim> make_stage1_excluded_keys_closed_form();  // C1
std::unique_ptr<Claim> make_stage1_sgd_matches_finite_n_optimum(); // C2
std::unique_ptr<Claim> make_stage1_sgd_matches_infinite_n_law();   // C2, the N -> infinity law against finite N
std::unique_ptr<Claim> make_stage1_all_keys_min_norm();           // C3
std::unique_ptr<Claim> make_stage1_all_keys_sgd_matches_finite_n_optimum();  // C3 finite N, against SGD
std::unique_ptr<Claim> make_stage2_prior_free_law();              // C5
std::unique_ptr<Claim> make_stage2_all_keys_minimiser();          // §6 (P) table
std::unique_ptr<Claim> make_stage2_finite_n_loss();                // C6-C7
std::unique_ptr<Claim> make_stage2_identifiability_infinite_n();   // C6, alpha != beta at N -> infinity
std::unique_ptr<Claim> make_stage2_identifiability_all_keys();     // C6 for the key set (P), N -> infinity
std::unique_ptr<Claim> make_stage2_sgd_finite_n_minimiser();       // C7, against SGD
std::unique_ptr<Claim> make_two_stage_value_before_attention();   // C8
std::unique_ptr<Claim> make_stage2_cross_entropy_finite_n_loss();  // C9
std::unique_ptr<Claim> make_stage1_cross_entropy_optimum();        // C9, stage 1 under CE
std::unique_ptr<Claim> make_stage2_cross_entropy_dirichlet_minimiser();  // C9, E* = 47.7 (Dirichlet, CE)
std::unique_ptr<Claim> make_everything_free_block_pattern();       // the headline (§8)
std::unique_ptr<Claim> make_real_text_same_topic_similarity();     // §8 real data, on Brown

inline void register_claims(Registry& registry) {
  registry.add(make_stage1_excluded_keys_closed_form());
  registry.add(make_stage1_sgd_matches_finite_n_optimum());
  registry.add(make_stage1_sgd_matches_infinite_n_law());
  registry.add(make_stage1_all_keys_min_norm());
  registry.add(make_stage1_all_keys_sgd_matches_finite_n_optimum());
  registry.add(make_stage2_prior_free_law());
  registry.add(make_stage2_all_keys_minimiser());
  registry.add(make_stage2_finite_n_loss());
  registry.add(make_stage2_identifiability_infinite_n());
  registry.add(make_stage2_identifiability_all_keys());
  registry.add(make_stage2_sgd_finite_n_minimiser());
  registry.add(make_two_stage_value_before_attention());
  registry.add(make_stage2_cross_entropy_finite_n_loss());
  registry.add(make_stage1_cross_entropy_optimum());
  registry.add(make_stage2_cross_entropy_dirichlet_minimiser());
  registry.add(make_everything_free_block_pattern());
  registry.add(make_real_text_same_topic_similarity());
}

}  // namespace dyncheck::checks::topic
