#pragma once
// Report files are written whole or not at all: each goes to "<name>.partial" in the same
// folder, is flushed, synced and closed with every step checked, and is then renamed over its
// final name. A failed write leaves the previous file (if any) untouched and throws WriteError.

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dyncheck::reports {

/// A file that could not be written; what() names the path and the operating system's reason.
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "<path>.partial": where `path` is written before it is renamed into place.
std::filesystem::path partial_path(const std::filesystem::path& path);

/// Writes `content` to partial_path(path), then renames it over `path`. On any failure removes
/// the partial file and throws WriteError naming the path and the OS error.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Renames the already written `partial` over `path`; on failure removes `partial` and throws
/// WriteError naming both paths and the OS error.
void commit_file(const std::filesystem::path& partial, const std::filesystem::path& path);

/// Checks before any work that `directory` can hold the report: creates it if missing; throws
/// checks::ParamError("out", ...) when it exists and is not a directory, is a directory this
/// process may not write into, or cannot be created.
void prepare_output_directory(const std::filesystem::path& directory);

}  // namespace dyncheck::reports
