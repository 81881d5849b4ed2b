// The multihead family's registration: its note (paper, spec, what is checked and what is left
// unchecked) and its claims.

#include "claims.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks {

void register_family_multihead(Registry& registry) {
  registry.add_family(FamilyInfo{
      "multihead",
      "Chen, Li, Provably learning a multi-head attention layer (STOC 2025; arXiv 2402.04084)",
      "specs/multihead.md",
      {"The paper has no experiments and no code; what is checkable is the first phase of its algorithm and the "
       "identities its proof rests on (spec B.4, all [derived] unless marked). Exact expectations come from "
       "enumerating the Boolean cube {+-1}^(k x d) in double and 50 digits, summed in a fixed blocked-pairwise order "
       "so that results are bit-identical for every thread count; the simulator (sim/multihead) has its own layer, "
       "backprop through the softmax Jacobian and Kahan-summed enumeration, so theory and simulation share no code.",
       "Checked: D1 Boolean moments (boolean_moments); D5 symmetries, with a biased-sampler control "
       "(symmetries); D2 the crude estimate: one GD step = C2, exact at Theta = 0, relative error linear in eps with "
       "the enumerated first-order coefficient (crude_estimate); the same with N(0, I) inputs by Monte Carlo, "
       "first-order term ((k-1)/k) sum Theta~ W (crude_estimate_gaussian); D3 the first GD/SGD step from Theta = 0 "
       "and the minibatch variance of D6 (first_gd_step); D4 the linear-response limit (linear_response) and its large-k heuristic as a trend over random instances "
       "(heuristic_trend); D6 "
       "n E|C_n - C|^2 = Var and the RMS slope -1/2 (concentration); D7 the large-margin frequency "
       "(large_margin_frequency); the slides' affine constraint [reconstructed] (affine_constraint); E-B4 "
       "non-identifiability with Theta_1 = Theta_2 [reconstructed, exploratory] (non_identifiability).",
       "Left unchecked: the main theorem ((dk)^O(m^3) time; its non-degeneracy conditions and error terms are not in "
       "the public text), the phase-1 lemma's 1/poly(r) rate in the stable rank, the SQ and cryptographic lower bounds "
       "(not numerically checkable), phases 2-6 of the algorithm (affine hull sculpting, refinement, span recovery, "
       "epsilon-net); E-B3 (GD of a full multi-head student from a random start) is not implemented; a nearly "
       "singular sum W_i is a parameter of crude_estimate only."}});
  multihead::register_claims(registry);
}

}  // namespace dyncheck::checks
