#pragma once
// A measurement whose statistical term is a confidence half-width, with the false-failure share it
// was computed for recorded beside it (so that the runner can check a claim's shares add up).

#include <string>

#include "dyncheck/checks/stats/half_width.hpp"
#include "dyncheck/checks/verdict.hpp"

namespace dyncheck::checks {

/// \f$ \bar x \pm h \f$ with h from `half_width` (its reason, and its delta as the recorded share);
/// `assumption` is appended to the reason (why the interval applies to this quantity).
inline Measurement measured(double value, const stats::HalfWidth& half_width, const std::string& assumption = {}) {
  Measurement measurement;
  measurement.value = value;
  measurement.half_width = half_width.value;
  measurement.half_width_reason = assumption.empty() ? half_width.reason : half_width.reason + "; " + assumption;
  measurement.false_failure_share = half_width.delta;
  return measurement;
}

/// A deterministic measurement: no statistical term, no share.
inline Measurement measured_exactly(double value, double numerical_error = 0, std::string numerical_error_reason = {}) {
  Measurement measurement;
  measurement.value = value;
  measurement.numerical_error = numerical_error;
  measurement.numerical_error_reason = std::move(numerical_error_reason);
  return measurement;
}

}  // namespace dyncheck::checks
