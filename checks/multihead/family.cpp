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
       "non-identifiability with Theta_1 = Theta_2 [reconstructed, exploratory] (non_identifiability); E-B3 the fraction "
       "of multi-head students (random start) that Armijo GD on the enumerated population loss brings to L <= 1e-8, "
       "reported with its Clopper-Pearson interval and not checked (exploratory: the paper claims no GD guarantee), "
       "with the run's invariants checked: gradient = finite differences of the theory's loss, recorded loss = "
       "theory's loss, loss non-increasing (gd_success_fraction).",
       "Left unchecked: the main theorem ((dk)^O(m^3) time; its non-degeneracy conditions and error terms are not in "
       "the public text), the phase-1 lemma's 1/poly(r) rate in the stable rank, the SQ and cryptographic lower bounds "
       "(not numerically checkable), phases 2-6 of the algorithm (affine hull sculpting, refinement, span recovery, "
       "epsilon-net); a nearly "
       "singular sum W_i is a parameter of crude_estimate only."},
      {{"multihead.crude_estimate_gaussian",
        {"epsilon=0.001:0.05:7:log"},
        {},
        "The first-order statement (C2(eps) - sum W)/eps -> ((k-1)/k) sum_i Theta~_i W_i with N(0, I) inputs holds as eps -> 0; "
        "the grid raises the attention scale eps (logits of size ~eps d) up to the claim's range limit eps d = 0.15 (d = 3). "
        "Measured at ci (k = d = 3, m = 2, master seed 20261122, worst entry (1, 2), theory 0.2987): the measured coefficient "
        "is 0.2935 at eps = 0.001, 0.2904 at 0.0136, 0.2831 at 0.026 and 0.2608 at 0.05; gap / noise 0.30, 0.30, 0.30, 0.34, "
        "0.47, 0.87, 2.11 along the grid: it crosses 1 between eps = 0.026 and 0.05, where the O(eps) remainder exceeds the "
        "Monte Carlo half-width (0.018). The claim's Richardson allowance covers the remainder (margins 0.25-0.29 at every "
        "point), but from eps = 0.026 on it is wider than the resolution (2.5% of the largest entry), so the claim is "
        "INCONCLUSIVE there: the linear-in-eps regime of the crude estimate ends near logits of size eps d = 0.1."}}});
  multihead::register_claims(registry);
}

}  // namespace dyncheck::checks
