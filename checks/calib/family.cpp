// The calib family's registration: its note (paper, spec, what it leaves unchecked) and its claims.
// Picked up by checks/CMakeLists.txt (dyncheck_family); the core includes no family header.

#include "claims.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks {

void register_family_calib(Registry& registry) {
  registry.add_family(FamilyInfo{"calib",
   "calibration (known answer)",
   "issue #2",
   {"Known-answer claims that exercise every piece of the pipeline (50/100-digit theory, the ODE solver's "
    "error estimate, replicated SGD, half-widths and the false-failure split); they check dyncheck, not a "
    "paper."},
   {{"calib.discretisation_gap_first_order",
     {"eta=0.05:0.8:6:log"},
     {},
     "The first-order statement E w_k - w(t) = eta c_1(t) + O(eta^2) is exact only as eta -> 0: as eta grows "
     "the O(eta^2) remainder, which the claim's bias term bounds, outgrows the statistical noise: gap / noise "
     "passes 1, and the claim, whose tolerance carries that bound, turns INCONCLUSIVE rather than FAIL (its "
     "tolerance then exceeds the resolution it promises)."},
    {"calib.sgd_mean_matches_gradient_flow",
     {"eta=0.005:0.4:6:log"},
     {},
     "Gradient flow describes the SGD mean only as eta -> 0; the claim's bias term is the Euler "
     "discretisation gap; where it outgrows the noise, gap / noise passes 1 and the claim turns INCONCLUSIVE."}}});
  calib::register_claims(registry);
}

}  // namespace dyncheck::checks
