#pragma once
// The joma family: claims of Tian et al., JoMA (ICLR 2024), specs/joma.md §7 (claims 1-9) and the
// near-orthogonal invariant defect of issue #4. Claim 10 (WikiText-2) runs on the Brown corpus
// instead (issue #15; needs the libtorch plugin and scripts/fetch-corpus.sh).

#include <memory>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks::joma {

std::unique_ptr<Claim> make_exp_invariant_exact_per_step();           // §7 claim 1
std::unique_ptr<Claim> make_linear_invariant_exact_per_step();        // §7 claim 2
std::unique_ptr<Claim> make_invariant_defect_first_order_in_eta();    // §7 claim 3
std::unique_ptr<Claim> make_softmax_invariant_normalised_correlation();  // §7 claim 4
std::unique_ptr<Claim> make_linear_activation_erf_solution();         // §7 claim 5
std::unique_ptr<Claim> make_nonlinear_convergence_rates();            // §7 claim 6
std::unique_ptr<Claim> make_entropy_drop_then_bounce();               // §7 claim 7
std::unique_ptr<Claim> make_linear_case_attention_sparsity();         // §7 claim 8
std::unique_ptr<Claim> make_hblt_cooccurrence();                      // §7 claim 9
std::unique_ptr<Claim> make_near_orthogonal_invariant_defect();       // issue #4
std::unique_ptr<Claim> make_block_gradient_matches_theory();          // issue #10 §5
std::unique_ptr<Claim> make_real_text_entropy_drop_then_bounce();     // §7 claim 10 on Brown (issue #15)
std::unique_ptr<Claim> make_hierarchy_learned_bottom_up();           // §5 Table 1 (issue #18)

inline void register_claims(Registry& registry) {
  registry.add(make_exp_invariant_exact_per_step());
  registry.add(make_linear_invariant_exact_per_step());
  registry.add(make_invariant_defect_first_order_in_eta());
  registry.add(make_softmax_invariant_normalised_correlation());
  registry.add(make_linear_activation_erf_solution());
  registry.add(make_nonlinear_convergence_rates());
  registry.add(make_entropy_drop_then_bounce());
  registry.add(make_linear_case_attention_sparsity());
  registry.add(make_hblt_cooccurrence());
  registry.add(make_near_orthogonal_invariant_defect());
  registry.add(make_block_gradient_matches_theory());
  registry.add(make_real_text_entropy_drop_then_bounce());
  registry.add(make_hierarchy_learned_bottom_up());
}

}  // namespace dyncheck::checks::joma
