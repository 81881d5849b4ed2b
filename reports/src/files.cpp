#include "dyncheck/reports/files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "dyncheck/checks/params.hpp"

namespace dyncheck::reports {
namespace {

[[noreturn]] void fail(const std::filesystem::path& partial, const std::string& what, int error) {
  const std::string reason = std::strerror(error);
  std::error_code ignored;
  std::filesystem::remove(partial, ignored);  // a symlink is removed, not its target
  throw WriteError(fmt::format("{}: {}", what, reason));
}

}  // namespace

std::filesystem::path partial_path(const std::filesystem::path& path) {
  std::filesystem::path partial = path;
  partial += ".partial";
  return partial;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path partial = partial_path(path);
  const std::string where = fmt::format("cannot write {} (via {})", path.string(), partial.string());
  std::FILE* file = std::fopen(partial.c_str(), "wb");
  if (file == nullptr) fail(partial, where, errno);
  if (!content.empty() && std::fwrite(content.data(), 1, content.size(), file) != content.size()) {
    const int error = errno;
    std::fclose(file);
    fail(partial, where, error);
  }
  if (std::fflush(file) != 0) {
    const int error = errno;
    std::fclose(file);
    fail(partial, where, error);
  }
  // Data on disk before the rename, so a crash cannot leave an empty file under the final name.
  // EINVAL/EROFS: the partial name is a special file (a device) that cannot be synced.
  if (::fsync(fileno(file)) != 0 && errno != EINVAL && errno != EROFS) {
    const int error = errno;
    std::fclose(file);
    fail(partial, where, error);
  }
  if (std::fclose(file) != 0) fail(partial, where, errno);
  commit_file(partial, path);
}

void commit_file(const std::filesystem::path& partial, const std::filesystem::path& path) {
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw WriteError(fmt::format("cannot write {} (rename from {} failed): {}", path.string(), partial.string(),
                                 error.message()));
  }
}

void prepare_output_directory(const std::filesystem::path& directory) {
  std::error_code error;
  const auto status = std::filesystem::status(directory, error);
  if (std::filesystem::exists(status)) {
    if (!std::filesystem::is_directory(status)) {
      throw checks::ParamError("out", fmt::format("--out {} exists and is not a directory", directory.string()));
    }
    if (::access(directory.c_str(), W_OK | X_OK) != 0) {
      const int reason = errno;
      throw checks::ParamError("out", fmt::format("--out {}: cannot write into the directory: {}", directory.string(),
                                                  std::strerror(reason)));
    }
    return;
  }
  std::filesystem::create_directories(directory, error);
  if (error) {
    throw checks::ParamError("out", fmt::format("--out {}: cannot create the directory: {}", directory.string(),
                                                error.message()));
  }
}

}  // namespace dyncheck::reports
