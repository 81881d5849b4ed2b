#pragma once
// The final normalisation of the two-stage algorithm (specs/scb.md §3, [reconstructed]).

#include "dyncheck/sim/scb/model.hpp"

namespace dyncheck::sim::scb {

/**
 * \f$V \leftarrow V\,\mathrm{diag}(\mathbf 1^\top V)^{-1}\f$ and
 * \f$a^{(k)} \leftarrow a^{(k)} / \mathbf 1^\top a^{(k)}\f$ (specs/scb.md §3, "final
 * normalization"). Throws std::invalid_argument if a column sum of V or of A is 0 or not finite.
 */
void normalise(LinearModel& model);

}  // namespace dyncheck::sim::scb
