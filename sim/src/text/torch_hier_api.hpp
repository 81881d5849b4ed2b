#pragma once
// The boundary between dyncheck_sim and the Table 1 model in the libtorch plugin (torch_hier_plugin.cpp,
// built into libdyncheck_torch_lm.so next to the language model). Its own entry point and ABI version, so
// that it changes independently of torch_lm_api.hpp. No torch header here.

#include <string>
#include <vector>

#include "dyncheck/sim/text/hier_model.hpp"

namespace dyncheck::sim::text::hier_plugin {

// Bump when HierModelConfig, HierModelData, HierCheckpoint, HierRun or this struct change.
inline constexpr int abi_version = 1;

struct Api {
  int abi = abi_version;
  /// Returns true on success; on failure writes the reason into *error (exceptions never cross the boundary).
  bool (*train)(const std::vector<HierModelData>& data, const std::vector<HierModelConfig>& configs, unsigned parallel,
                std::vector<HierRun>& runs, std::string& error, bool& invalid_argument) = nullptr;
};

}  // namespace dyncheck::sim::text::hier_plugin

// The Table 1 model's exported symbol.
extern "C" const dyncheck::sim::text::hier_plugin::Api* dyncheck_torch_hier_api();
