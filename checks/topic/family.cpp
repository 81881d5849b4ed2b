// The topic family's registration: its note (paper, spec, what it leaves unchecked) and its claims.
// Picked up by checks/CMakeLists.txt (dyncheck_family); the core includes no family header.

#include "claims.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks {

void register_family_topic(Registry& registry) {
  registry.add_family(FamilyInfo{"topic",
   "Li, Li, Risteski, How do transformers learn topic structure: towards a mechanistic understanding (ICML 2023)",
   "specs/topic.md",
   {"The paper's full text is not available: theorem statements are [reconstructed] and the checked "
    "closed forms are the [derived] ones of specs/topic.md §5-§6, exact for the model defined there."}});
  topic::register_claims(registry);
}

}  // namespace dyncheck::checks
