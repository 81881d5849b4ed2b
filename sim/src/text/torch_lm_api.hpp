#pragma once
// The boundary between dyncheck_sim and the libtorch plugin (libdyncheck_torch_lm.so). Both sides are
// built by the same compiler from the same tree, so plain C++ types cross it; `abi` guards against a
// stale plugin. No torch header here.

#include <string>
#include <vector>

#include "dyncheck/sim/text/transformer_lm.hpp"

namespace dyncheck::sim::text::plugin {

// Bump when LmConfig, LmCheckpoint, LmRun or this struct change.
inline constexpr int abi_version = 3;

struct Api {
  int abi = abi_version;
  /// Returns true on success; on failure writes the reason into *error (exceptions never cross the boundary).
  bool (*train)(const std::vector<std::int64_t>& train, const std::vector<std::int64_t>& validation,
                const std::vector<LmConfig>& configs, unsigned parallel, std::vector<LmRun>& runs, std::string& error,
                bool& invalid_argument) = nullptr;
};

}  // namespace dyncheck::sim::text::plugin

// The plugin's one exported symbol.
extern "C" const dyncheck::sim::text::plugin::Api* dyncheck_torch_lm_api();
