// The topic family's registration: its note (paper, spec, what it leaves unchecked) and its claims.
// Picked up by checks/CMakeLists.txt (dyncheck_family); the core includes no family header.

#include "claims.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks {

void register_family_topic(Registry& registry) {
  registry.add_family(FamilyInfo{"topic",
   "Li, Li, Risteski, How do transformers learn topic structure: towards a mechanistic understanding (ICML 2023)",
   "specs/topic.md",
   {"The paper's full text is not available: theorem statements are [reconstructed]; the checked closed forms "
    "are the [derived] ones of specs/topic.md §5-§6, exact for the model defined there (one layer, one head, "
    "no residual/LayerNorm/FFN, one-hot embedding, MLM masking with p_m, p_c, p_r).",
    "Checked: C1 (stage-1 (C) closed form vs a 50/100-digit direct solve, both priors, N -> inf and finite N), "
    "C2 (SGD of the model on sampled documents vs the finite-N optimum), C3 ((P) lambda -> 0 closed form vs an "
    "extrapolated solve), C4 (RapidCheck properties in tests/theory/topic), C5 (prior-free law E* = 1 + T p_c/p_r "
    "and the tau-subset general-c formula vs the numeric minimiser), C6-C7 (exact finite-N stage-2 loss vs "
    "sampled documents through the model's softmax attention), C8 (two stages under Adam, qualitative, near "
    "the figure setting; attention gradients O(eps^2) at init).",
    "Not checked yet: the (P) finite-N optimum against sampling (c_diag > c_s from the self term: only its theory "
    "is in theory/topic), the (P) stage-2 minimiser over (E, delta, delta_M) (spec §6 table), the finite-N "
    "stage-2 minimiser 11.6667 against SGD on a free B, the CE variants (C9), plain-SGD two-stage runs (the "
    "attention does not move within a ci budget), the Thm 1 embedding-Gram claim and the headline 'everything "
    "free' W^V heatmap run, the report's heatmap, and the PyTorch benchmark of issue #12.",
    "The spec's C8 says the init gradient ratio ||grad W^K|| / ||grad W^V|| is O(eps); the mechanism (and the "
    "measurement) give O(eps^2). topic.two_stage_value_before_attention checks eps^2 and keeps eps as a mutant.",
    "The two-stage ordering fails far from the figure setting (the fuzz found t_A < t_V at p_c = 0.74, where "
    "the optimal attention ratio is 75): the claim declares only a neighbourhood of the figure setting."},
   {{"topic.stage1_sgd_matches_finite_n_optimum",
     {"lambda=0.0006:0.01:5:log"},
     {},
     "The finite-N optimum is block-constant, and SGD's averaged W shows it only if its fluctuations in the "
     "within-block directions average out over the K/2 averaged steps; the ridge lambda damps them. Measured at "
     "ci (lr = 20, K = 300, session 10): the block means match the finite-N optimum at every lambda, while the "
     "within-block standard deviation grows about as lambda^(-1/2) and passed the spec's visibility bound "
     "0.1 (c_s - c_d) below lambda ~ 5e-4 (FAIL, margin 10 at 3.2e-4 and 21 at 1e-4). Those points are now "
     "outside the claim's declared range (lambda >= 6e-4), so this sweep shows the margin rising towards 1 as "
     "lambda falls to the range's end, not the crossing itself."}}});
  topic::register_claims(registry);
}

}  // namespace dyncheck::checks
