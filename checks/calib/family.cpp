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
    "paper."}});
  calib::register_claims(registry);
}

}  // namespace dyncheck::checks
