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
   {"Not checked: spec §7 claim 10, the WikiText-2 reproduction. The data set is not on this machine and "
    "cannot be fetched (only Debian packages and npm are reachable), and pretrained-model curves would not "
    "fit the full budget either.",
    "Not checked: the Table 1 combinatorial HBLT generator and learning on HBLT data; claim "
    "joma.hblt_cooccurrence checks the §5 co-occurrence formula on a channel-model tree generator.",
    "Theorem statements are partly [reconstructed] (specs/joma.md §0); each claim carries its tag."}});
  joma::register_claims(registry);
}

}  // namespace dyncheck::checks
