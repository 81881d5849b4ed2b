// Loads the libtorch plugin on first use (dlopen): see transformer_lm.hpp for why it is a plugin.
#include "dyncheck/sim/text/transformer_lm.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "dyncheck/portable/math.hpp"
#include "torch_lm_api.hpp"

namespace dyncheck::sim::text {
namespace {

// Where the build put the plugin and where `cmake --install` puts it (empty when not built).
#ifndef DYNCHECK_TORCH_PLUGIN_BUILD
#define DYNCHECK_TORCH_PLUGIN_BUILD ""
#endif
#ifndef DYNCHECK_TORCH_PLUGIN_INSTALL
#define DYNCHECK_TORCH_PLUGIN_INSTALL ""
#endif

constexpr const char* install_command =
    "install it with `apt-get install -y libtorch-dev libopenblas0-openmp` (scripts/install-deps.sh does) and "
    "rebuild dyncheck (CMake option DYNCHECK_WITH_TORCH=ON, the default where find_package(Torch 1.13) succeeds)";

struct Loaded {
  const plugin::Api* api = nullptr;
  std::string why_not;
};

const Loaded& loaded() {
  static const Loaded result = [] {
    Loaded out;
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("DYNCHECK_TORCH_PLUGIN"); env != nullptr && *env != '\0') {
      candidates.emplace_back(env);
    } else {
      for (const char* path : {DYNCHECK_TORCH_PLUGIN_BUILD, DYNCHECK_TORCH_PLUGIN_INSTALL}) {
        if (*path != '\0') candidates.emplace_back(path);
      }
    }
    if (candidates.empty()) {
      out.why_not = "the libtorch component (libdyncheck_torch_lm) was not built because libtorch 1.13 was not found "
                    "at configure time; " +
                    std::string(install_command);
      return out;
    }
    std::string errors;
    for (const auto& path : candidates) {
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* message = dlerror();
        errors += (errors.empty() ? "" : "; ") + path + ": " + (message != nullptr ? message : "dlopen failed");
        continue;
      }
      using Entry = const plugin::Api* (*)();
      auto* entry = reinterpret_cast<Entry>(dlsym(handle, "dyncheck_torch_lm_api"));
      const plugin::Api* api = entry != nullptr ? entry() : nullptr;
      if (api == nullptr || api->abi != plugin::abi_version || api->train == nullptr) {
        errors += (errors.empty() ? "" : "; ") + path + ": not a matching libdyncheck_torch_lm (stale build?)";
        continue;
      }
      out.api = api;  // never dlclose'd: torch registers global state
      return out;
    }
    out.why_not = "the libtorch component (libdyncheck_torch_lm) could not be loaded (" + errors + "); " +
                  install_command;
    return out;
  }();
  return result;
}

}  // namespace

std::optional<std::string> torch_unavailable() {
  const auto& plugin = loaded();
  if (plugin.api != nullptr) return std::nullopt;
  return plugin.why_not;
}

std::vector<LmRun> train_transformer_lms(const std::vector<std::int64_t>& train,
                                         const std::vector<std::int64_t>& validation,
                                         const std::vector<LmConfig>& configs, unsigned parallel) {
  const auto& plugin = loaded();
  if (plugin.api == nullptr) throw std::runtime_error(plugin.why_not);
  std::vector<LmRun> runs;
  std::string error;
  bool invalid_argument = false;
  if (!plugin.api->train(train, validation, configs, parallel, runs, error, invalid_argument)) {
    if (invalid_argument) throw std::invalid_argument(error);
    throw std::runtime_error(error);
  }
  return runs;
}

LmRun train_transformer_lm(const std::vector<std::int64_t>& train, const std::vector<std::int64_t>& validation,
                           const LmConfig& config) {
  return train_transformer_lms(train, validation, {config}, 1).front();
}

double uniform_causal_entropy(std::int64_t bptt) {
  if (bptt < 1) throw std::invalid_argument("uniform_causal_entropy: bptt must be at least 1");
  double sum = 0;
  for (std::int64_t n = 1; n <= bptt; ++n) sum += portable::log(static_cast<double>(n));
  return sum / static_cast<double>(bptt);
}

}  // namespace dyncheck::sim::text
