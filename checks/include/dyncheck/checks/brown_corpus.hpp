#pragma once
// The Brown corpus for the real-text claims: read once per process (sim::text::load_brown_shared),
// or InputUnavailable naming the directory and the command that fetches it when it is not present, so
// that the claim is ERROR "input unavailable: ..." (ctest: Skipped). A present but damaged corpus is the
// loader's CorpusError: a plain ERROR naming the file.

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <system_error>
#include <vector>

#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/sim/text/corpus.hpp"

namespace dyncheck::checks {

inline std::shared_ptr<const std::vector<sim::text::Document>> brown_corpus() {
  const auto dir = sim::text::default_brown_dir();
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    throw InputUnavailable(fmt::format("the Brown corpus is not present (no directory {}); {}", dir.string(),
                                       sim::text::fetch_instructions(dir)));
  }
  return sim::text::load_brown_shared();
}

}  // namespace dyncheck::checks
