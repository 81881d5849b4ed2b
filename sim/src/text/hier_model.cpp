// Finds the Table 1 model's entry point in the libtorch plugin. The plugin itself is loaded (and, when it
// cannot be, explained) by transformer_lm.cpp's loader through torch_unavailable(); this file then finds the
// library that loader loaded among the process's objects (dl_iterate_phdr) and looks up its own symbol there.
#include "dyncheck/sim/text/hier_model.hpp"

#include <dlfcn.h>
#include <link.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "dyncheck/sim/text/transformer_lm.hpp"
#include "torch_hier_api.hpp"

namespace dyncheck::sim::text {
namespace {

// The path of the loaded plugin: the object whose file name is libdyncheck_torch_lm.so (empty when none).
std::string loaded_plugin_path() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        constexpr std::string_view file = "libdyncheck_torch_lm.so";
        if (name.size() >= file.size() && name.substr(name.size() - file.size()) == file) {
          *static_cast<std::string*>(out) = std::string(name);
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

const hier_plugin::Api& api() {
  if (const auto why = torch_unavailable()) throw std::runtime_error(*why);
  static const hier_plugin::Api* const found = []() -> const hier_plugin::Api* {
    const std::string path = loaded_plugin_path();
    void* handle = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (handle == nullptr) return nullptr;
    using Entry = const hier_plugin::Api* (*)();
    auto* entry = reinterpret_cast<Entry>(dlsym(handle, "dyncheck_torch_hier_api"));
    const hier_plugin::Api* a = entry != nullptr ? entry() : nullptr;
    return a != nullptr && a->abi == hier_plugin::abi_version && a->train != nullptr ? a : nullptr;
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
