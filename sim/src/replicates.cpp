// default_thread_count: the environment override, else the hardware; the thread's replicate
// exchange and nesting depth (replicate_exchange.hpp).

#include "dyncheck/sim/replicates.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <thread>

namespace dyncheck::sim {

unsigned default_thread_count() {
  // A value that does not parse completely (e.g. "4x", "-1", "") is ignored rather than
  // truncated, so a typo falls back to the hardware instead of silently running 1 thread.
  if (const char* env = std::getenv("DYNCHECK_THREADS"); env != nullptr) {
    const std::string_view text(env);
    unsigned value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc{} && end == text.data() + text.size() && value >= 1 && value <= 4096) {
      return value;
    }
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware != 0 ? hardware : 1;
}

namespace {
thread_local ReplicateExchange* installed_exchange = nullptr;
}  // namespace

ReplicateExchange* current_replicate_exchange() { return installed_exchange; }

void ReplicateExchange::note_unsplit(const std::type_info& result_type) {
  ++unsplit_calls_;
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(result_type.name(), nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : result_type.name();
  if (std::find(unsplit_types_.begin(), unsplit_types_.end(), name) == unsplit_types_.end()) {
    unsplit_types_.push_back(std::move(name));
  }
}

ScopedReplicateExchange::ScopedReplicateExchange(ReplicateExchange* exchange) : previous_(installed_exchange) {
  installed_exchange = exchange;
}

ScopedReplicateExchange::~ScopedReplicateExchange() { installed_exchange = previous_; }

int& detail::replicate_depth() {
  thread_local int depth = 0;
  return depth;
}

}  // namespace dyncheck::sim
