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
       "unnormalised and row-normalised, fixed W^O, full-batch GD with Armijo or a fixed step) against the theory's "
       "independent forward-mode derivatives (theory/kernels); W^V-only GD against its closed form (D2) with the "
       "condition lambda_V > 0 (d >= Nn) on both sides of Nn."}});
  kernels::register_claims(registry);
}

}  // namespace dyncheck::checks
