#include "dyncheck/checks/claim.hpp"

#include <string>

namespace dyncheck::checks {

std::string_view to_string(Provenance tag) {
  switch (tag) {
    case Provenance::paper: return "[paper]";
    case Provenance::code: return "[code]";
    case Provenance::derived: return "[derived]";
    case Provenance::reconstructed: return "[reconstructed]";
  }
  return "[derived]";
}

sim::ReplicateOptions RunContext::replicates(std::string_view experiment, std::size_t count) const {
  sim::ReplicateOptions options;
  options.master_seed = seed;
  options.stream_name = claim_id + "/" + std::string(experiment);
  options.replicates = count;
  options.threads = threads;
  if (progress) {
    options.progress = [progress = progress, stage = std::string(experiment)](std::size_t done, std::size_t total) {
      progress(stage, done, total);
    };
  }
  return options;
}

}  // namespace dyncheck::checks
