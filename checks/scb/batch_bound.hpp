#pragma once
// The batch parameters of the finite-sample scb claims: 0 is the automatic batch, any other value
// must be an integer in [b_min, 1e6], where b_min is the smallest batch that serves every instance
// the point can draw (issue #10: decided from the parameters alone, before any draw).

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "dyncheck/checks/param_set.hpp"
#include "dyncheck/checks/params.hpp"

namespace dyncheck::checks::scb {

/// Exit 2 naming `batch` when even the largest batch of its range is below `b_min`; `why` says what
/// b_min guarantees, its value and how to lower it.
inline void refuse_if_no_batch(const Int& batch, double b_min, std::string_view why) {
  if (b_min > 1e6) {
    throw ParamError(batch.name(), fmt::format("no batch in the range of parameter '{}' [1, 1e6] works for every "
                                               "instance this point draws: {}",
                                               batch.name(), why));
  }
}

/// Exit 2 naming `batch` when it is given (not 0) below `b_min`; `why` says what b_min guarantees.
inline void refuse_if_batch_below(const Int& batch, double b_min, std::string_view why) {
  if (batch > 0 && static_cast<double>(batch) < b_min) {
    throw ParamError(batch.name(), fmt::format("parameter '{}' must be 0 (auto) or an integer in [{}, 1e6] at this "
                                               "point: {}",
                                               batch.name(), static_cast<long long>(std::ceil(b_min)), why));
  }
}

}  // namespace dyncheck::checks::scb
