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
       "identities its proof rests on. Checked by exact enumeration of the Boolean cube {+-1}^(k x d) (double and 50 "
       "digits, summed in a fixed order so that results do not depend on the thread count) against closed forms and "
       "against an independent simulator: the Boolean moments (D1).",
       "Left unchecked: the main theorem ((dk)^O(m^3) time, its non-degeneracy conditions and error terms are not in "
       "the public text), the SQ and cryptographic lower bounds (not numerically checkable), phases 2-6 of the "
       "algorithm (affine hull sculpting, refinement, span recovery, epsilon-net)."}});
  multihead::register_claims(registry);
}

}  // namespace dyncheck::checks
