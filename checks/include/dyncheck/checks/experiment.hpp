#pragma once
// The random streams of a claim's experiments: replicate r of experiment "e" of claim "c" draws
// from the stream derived from (master seed, "c/e", r), so a seed gives the same numbers on every
// machine and for any number of threads. Included by claim files, not by the public claim.hpp.

#include <cstddef>
#include <string>
#include <string_view>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/sim/replicates.hpp"

namespace dyncheck::checks {

/// Replicate options for one experiment of this claim: stream "<claim id>/<experiment>".
inline sim::ReplicateOptions replicate_options(const RunContext& context, std::string_view experiment,
                                               std::size_t count) {
  sim::ReplicateOptions options;
  options.master_seed = context.seed;
  options.stream_name = context.claim_id + "/" + std::string(experiment);
  options.replicates = count;
  options.threads = context.threads;
  if (context.progress) {
    options.progress = [progress = context.progress, stage = std::string(experiment)](std::size_t done,
                                                                                      std::size_t total) {
      progress(stage, done, total);
    };
  }
  return options;
}

}  // namespace dyncheck::checks
