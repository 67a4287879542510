#include "loader/trace_paths.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::vector<std::string>> TraceFilesIn(const std::string& dir) {
  std::error_code error;
  fs::directory_iterator it(dir, error);
  std::vector<std::string> names;
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code type_error;  // a dangling symlink is simply not a regular file
    if (IsTraceFileName(name) && it->is_regular_file(type_error)) names.push_back(name);
  }
  if (error) {
    return absl::Status(absl::ErrnoToStatusCode(error.value()),
                        absl::StrCat(dir, ": ", error.message()));
  }
  if (names.empty()) {
    return absl::NotFoundError(absl::StrCat(dir, ": no trace files (*.json, *.json.gz)"));
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> files;
  files.reserve(names.size());
  for (const std::string& name : names) files.push_back((fs::path(dir) / name).string());
  return files;
}

}  // namespace

bool IsTraceFileName(std::string_view name) {
  const absl::string_view view(name.data(), name.size());
  return absl::EndsWithIgnoreCase(view, ".json") || absl::EndsWithIgnoreCase(view, ".json.gz");
}

absl::StatusOr<std::vector<TraceFile>> ExpandTracePaths(const std::vector<std::string>& paths) {
  if (paths.empty()) return absl::InvalidArgumentError("no trace files given");
  std::vector<TraceFile> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!fs::is_directory(path, error)) {
      files.push_back({path, false});
      continue;
    }
    absl::StatusOr<std::vector<std::string>> in_dir = TraceFilesIn(path);
    if (!in_dir.ok()) return in_dir.status();
    for (std::string& file : *in_dir) files.push_back({std::move(file), true});
  }
  return files;
}

}  // namespace bubblescope
