#pragma once
// The resolution of a comparison evaluated for a theory other than the claim's (a mutant's settings).
//
// A mutant is a named edit of a claim's settings. At some valid points an edit hardly moves a
// compared quantity (a 5% error in a rate whose term is negligible there, a growth-rate error over a
// short range): no measurement consistent with the claim's theory can then tell the edit from it,
// and a PASS of the mutant would wrongly say that the claim missed an error it could have seen. Such
// a comparison is INCONCLUSIVE for that theory: its resolution becomes the shift the edit causes,
// which is below the tolerance exactly when the edit is unresolvable there. The claim's own
// verdict (shift: none) is unchanged, and an edit that moves the quantity by more than the
// tolerance keeps the claim's resolution, so it must FAIL (fuzz_claims: every mutant that resolves).

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "dyncheck/checks/verdict.hpp"

namespace dyncheck::checks::scb {

/// `resolution`, or for another theory than the claim's (`shift` set: how far that theory moves
/// the compared quantity from the claim's theory at this point) at most that shift.
inline Resolution against_claim(Resolution resolution, std::optional<double> shift) {
  if (!shift || !(std::abs(*shift) < resolution.value)) return resolution;
  return {std::abs(*shift),
          fmt::format("{:.4g}: this theory moves the compared quantity only that far from the claim's theory here, so "
                      "a tolerance above it cannot tell them apart (the claim's resolution: {:.4g}, {})",
                      std::abs(*shift), resolution.value, resolution.reason)};
}

}  // namespace dyncheck::checks::scb
