#pragma once
// Independent runs of the libtorch plugin, `parallel` at a time on their own std::threads, with their
// failures turned into messages (exceptions never cross the plugin boundary). No torch header here.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace dyncheck::sim::text {

/// Calls run(i) for i in [0, count), at most `parallel` at a time (at least one). Returns true when all
/// succeed; otherwise writes the first failed run's message into `error` and sets `invalid_argument` when that
/// run threw std::invalid_argument.
template <class Run>
bool run_in_parallel(std::size_t count, unsigned parallel, Run run, std::string& error, bool& invalid_argument) {
  std::vector<std::string> errors(count);
  std::vector<char> invalid(count, 0);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        run(i);
      } catch (const std::invalid_argument& e) {
        errors[i] = e.what();
        invalid[i] = 1;
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  };
  const auto threads_wanted = std::max<std::size_t>(1, std::min<std::size_t>(parallel, count));
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < threads_wanted; ++t) threads.emplace_back(worker);
  worker();
  for (auto& thread : threads) thread.join();
  for (std::size_t i = 0; i < count; ++i) {
    if (!errors[i].empty()) {
      error = errors[i];
      invalid_argument = invalid[i] != 0;
      return false;
    }
  }
  return true;
}

}  // namespace dyncheck::sim::text
