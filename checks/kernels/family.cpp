// The kernels family's registration: its note (paper, spec, what it leaves unchecked) and its claims.

#include "claims.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks {

void register_family_kernels(Registry& registry) {
  registry.add_family(FamilyInfo{
      "kernels",
      "Song, Han, Zhang, Ding, Hong, \"Unraveling the Gradient Descent Dynamics of Transformers\" (NeurIPS 2024; "
      "arXiv 2411.07538): Gaussian vs softmax attention kernels",
      "specs/kernels.md",
      {"The paper's full text is not public here: its hypotheses and constants are [reconstructed] (spec A.3), and "
       "every claim says which condition it evaluates; the oracles are the exact derivations of spec A.4 [derived].",
       "Checked: the one-layer attention model of spec A.2 (sim/kernels: H heads, softmax and Gaussian kernels, "
       "unnormalised and row-normalised, fixed W^O, full-batch GD with Armijo or a fixed step; gradients tested against "
       "numpy and central differences) against the theory's independent forward-mode derivatives (theory/kernels). "
       "Claims: E-A1 (W^V only: the D2 closed form to ~1e-8 relative with a derived rounding bound, the rate "
       "(1 - eta lambda_V)^2 for d >= Nn and the least-squares floor for d < Nn; at full over the spec's grid N, n in "
       "{2, 3, 4}, 40 instances per cell), E-A2 (the D3 PL certificate at every "
       "Armijo step with all weights trained, both kernels, and gradient = J'r), E-A3 (W^Q only: softmax never below "
       "its convex-hull floor LB, the Gaussian-minus-softmax success difference among LB > 0 instances by exact "
       "Clopper-Pearson bounds, and the calibrated Gaussian level for d >= Nn), E-A4 cross-kernel (a softmax student on "
       "a Gaussian teacher's vector targets never below the vector convex-hull floor, certified by a separating "
       "hyperplane; the Gaussian students' success reported with its interval, not checked).",
       "Reported, not checked (spec A.5: E-A4/E-A5 are descriptive; 'Gaussian converges faster' is not true at this "
       "scale): E-A4 with same-kernel and cross-kernel teachers (kernels.cross_kernel_softmax_floor: the 2 x 2 success "
       "table with Wilson 95% intervals and the same-kernel difference with Newcombe's 95% interval); E-A5, the scale "
       "sweep of s_Q, s_K with lambda_V(0), lambda_Q(0) against success, and the E-A3 success against d/(Nn) with "
       "Wilson 95% intervals (kernels.scale_sweep_softmax_floor, whose checked part is the D4 floor on every run of "
       "both grids). D5, the sphere-intersection test of Gaussian realisability (theory/kernels/reachable.hpp), is "
       "property-tested (tests/theory/kernels/reachable_test.cpp); the claims' Gaussian targets are realisable by "
       "construction (a Gaussian teacher), so no claim needs it to decide.",
       "Out of reach here: the paper's real-data experiments (text classification and Pathfinder from LRA, two-stage "
       "training, loss-landscape plots): no data set and no libtorch pipeline for them on this machine."},
      {{"kernels.value_only_closed_form",
        {"s_QK=0.25:4:5:log"},
        {"grid=1"},
        "The linear rate (1 - eta lambda_V)^2 is the asymptote of the closed form: it shows after a few "
        "1/(eta lambda_V) = kappa steps, so each run takes the steps its instance's closed form needs, drawing instances "
        "from the seed until one needs at most the cap (20000 at ci). The scale s_QK of W^Q, W^K moves lambda_min(BB') at "
        "d = 24, Nn = 12 (measured, master seed 20261122): s_QK = 0.5, 1, 2 PASS (lambda_min 2e-3, 2e-2, 5e-3 against "
        "lambda_max 40 to 72; T = 14650 after one rejected draw, 2834, 2273 steps); nearly uniform attention (s_QK = "
        "0.25: lambda_min 6e-5) and saturated softmax (s_QK = 4: lambda_min 1e-10, lambda_max 101) leave none of 64 "
        "draws within the cap, and the claim says INCONCLUSIVE: the hypothesis lambda_V > 0 holds, but not in the "
        "quantitative form a finite run can resolve. Every d draws a new instance, so d is not in the grid. Its gap / "
        "noise is 1e3 to 1e5 at every point (session 17): the rate is an asymptote, and the early transient that the "
        "claim's bias term bounds is far above the rounding noise at every scale, so this sweep has no crossing."},
       {"kernels.q_only_separation",
        {"d=2,3,4,5,6,8,12,16,24"},
        {},
        "A-T3 promises Gaussian W^Q-only convergence for d >= Nn (here Nn = 16); the claim checks the calibrated "
        "success level 0.8 only there and, below, only that the Gaussian kernel succeeds at least as often as softmax. "
        "The grid runs d from 2 to 24 across Nn. The claim never FAILs (ci, master seed 20261122: PASS at d = 5 and "
        "from 8 on; INCONCLUSIVE at d = 2, 3, 4, 6, where no softmax run ends close enough to its convex-hull floor for "
        "comparison 1 to resolve a floor 1e-3 LB too high); its gap / noise is 0 throughout (no bias allowance to drop). Gaussian "
        "successes of 40: 31, 14, 5, 27, 35, 39 at d = 2, 3, 4, 5, 6, 8, and 39-40 from 12 on. The next sweep reads "
        "the level beyond the hypothesis."},
       {"kernels.q_only_separation",
        {"d=2,3,4,5,6,8,12,16,24"},
        {},
        "The same grid with A-T3's conclusion read without its hypothesis: the mutant level_for_every_d claims the "
        "calibrated level at every d. Its margin passes 1 only where d^2, the number of W^Q's parameters, is near the Nn "
        "= 16 targets: ci, master seed: 0.16 (d = 2), 1.29 (FAIL, d = 3), 1.98 (FAIL, d = 4), 0.51 (d = 5), 0 from d = 6 "
        "on (seeds 1 and 2: 0.24 and 0.49, 1.37 and 1.06, 1.91 and 2.03, 0.66 and 0.36, 0). What breaks is Gaussian "
        "GD's convergence near d^2 = Nn (5 of 40 runs succeed at d = 4, spec E-A3: 5/40), not the level below d = Nn "
        "as such: with d = 2 (4 parameters) 31 of 40 runs succeed, and d = 8 < Nn succeeds as often as d >= Nn (39/40; "
        "the hypothesis d >= Nn is sufficient, not necessary). At d >= Nn the mutant is the claim itself "
        "(INCONCLUSIVE: nothing tells it from the claim there). Cost at ci: ~12 CPU-s for each of the two sweeps.",
        "level_for_every_d"}}});
  kernels::register_claims(registry);
}

}  // namespace dyncheck::checks
