// Finds the Table 1 model's entry point in the libtorch plugin. The plugin itself is loaded (and, when it
// cannot be, explained) by transformer_lm.cpp's loader through torch_unavailable(); this file then looks up
// its own symbol in the already loaded library (dlopen with RTLD_NOLOAD on the same candidate paths).
#include "dyncheck/sim/text/hier_model.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

#include "dyncheck/sim/text/transformer_lm.hpp"
#include "torch_hier_api.hpp"

namespace dyncheck::sim::text {
namespace {

#ifndef DYNCHECK_TORCH_PLUGIN_BUILD
#define DYNCHECK_TORCH_PLUGIN_BUILD ""
#endif
#ifndef DYNCHECK_TORCH_PLUGIN_INSTALL
#define DYNCHECK_TORCH_PLUGIN_INSTALL ""
#endif

const hier_plugin::Api& api() {
  if (const auto why = torch_unavailable()) throw std::runtime_error(*why);
  static const hier_plugin::Api* const found = [] {
    const char* env = std::getenv("DYNCHECK_TORCH_PLUGIN");
    const bool from_env = env != nullptr && *env != '\0';
    for (const char* path : {from_env ? env : "", DYNCHECK_TORCH_PLUGIN_BUILD, DYNCHECK_TORCH_PLUGIN_INSTALL}) {
      if (*path == '\0') continue;
      void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);  // only the library already loaded
      if (handle == nullptr) continue;
      using Entry = const hier_plugin::Api* (*)();
      auto* entry = reinterpret_cast<Entry>(dlsym(handle, "dyncheck_torch_hier_api"));
      const hier_plugin::Api* a = entry != nullptr ? entry() : nullptr;
      if (a != nullptr && a->abi == hier_plugin::abi_version && a->train != nullptr) return a;
      if (from_env) break;  // an explicit path is the only candidate, as for the language model
    }
    return static_cast<const hier_plugin::Api*>(nullptr);
  }();
  if (found == nullptr) {
    throw std::runtime_error(
        "the libtorch plugin (libdyncheck_torch_lm) is loaded but has no matching Table 1 model "
        "(dyncheck_torch_hier_api, ABI " + std::to_string(hier_plugin::abi_version) + "): a stale build; rebuild dyncheck");
  }
  return *found;
}

}  // namespace

std::vector<HierRun> train_hier_models(const std::vector<HierModelData>& data,
                                       const std::vector<HierModelConfig>& configs, unsigned parallel) {
  std::vector<HierRun> runs;
  std::string error;
  bool invalid_argument = false;
  if (!api().train(data, configs, parallel, runs, error, invalid_argument)) {
    if (invalid_argument) throw std::invalid_argument(error);
    throw std::runtime_error(error);
  }
  return runs;
}

}  // namespace dyncheck::sim::text
