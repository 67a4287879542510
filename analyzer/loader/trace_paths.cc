#include "loader/trace_paths.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;

// What a directory entry with a trace file name is, when it is no regular file.
std::string NotARegularFile(const fs::directory_entry& entry) {
  std::error_code error;
  const fs::file_status status = entry.status(error);
  if (error || !fs::exists(status)) {
    return entry.is_symlink(error) ? "a symbolic link to nothing" : "gone while listed";
  }
  switch (status.type()) {
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO, not a file";
    case fs::file_type::socket:
      return "a socket, not a file";
    case fs::file_type::character:
    case fs::file_type::block:
      return "a device, not a file";
    default:
      return "not a regular file";
  }
}

constexpr std::string_view kNsightReportSuffixes[] = {".nsys-rep", ".qdrep"};

// The error for an Nsight Systems report, which only nsys itself can read: the command that
// writes the SQLite export bubblescope reads, with the export's name beside the report.
absl::Status NsightReportError(const std::string& path) {
  std::string export_path = path;
  for (std::string_view suffix : kNsightReportSuffixes) {
    if (absl::EndsWithIgnoreCase(export_path, absl::string_view(suffix.data(), suffix.size()))) {
      export_path.resize(export_path.size() - suffix.size());
      break;
    }
  }
  export_path += ".sqlite";
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": an Nsight Systems report; bubblescope reads its SQLite export: nsys "
                   "export --type sqlite --include-blobs=true --output ", export_path, " ", path));
}

absl::StatusOr<std::vector<std::string>> TraceFilesIn(const std::string& dir,
                                                      std::vector<SkippedFile>* skipped) {
  std::error_code error;
  fs::directory_iterator it(dir, error);
  std::vector<std::string> names;
  std::vector<SkippedFile> passed_over;
  std::string first_report;  // an Nsight report, named when the directory holds no trace
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (IsNsightReportName(name) && (first_report.empty() || it->path().string() < first_report)) {
      first_report = it->path().string();
    }
    if (!IsTraceFileName(name)) continue;
    std::error_code type_error;  // a dangling symlink is simply not a regular file
    if (it->is_regular_file(type_error)) {
      names.push_back(name);
    } else {
      passed_over.push_back({it->path().string(), NotARegularFile(*it), std::nullopt});
    }
  }
  if (error) {
    return absl::Status(absl::ErrnoToStatusCode(error.value()),
                        absl::StrCat(dir, ": ", error.message()));
  }
  if (names.empty()) {
    if (!first_report.empty()) return NsightReportError(first_report);
    return absl::NotFoundError(
        absl::StrCat(dir, ": no trace files (*.json, *.json.gz, *.bsdigest, *.sqlite)"));
  }
  std::sort(names.begin(), names.end());
  std::sort(passed_over.begin(), passed_over.end(),
            [](const SkippedFile& a, const SkippedFile& b) { return a.path < b.path; });
  skipped->insert(skipped->end(), passed_over.begin(), passed_over.end());
  std::vector<std::string> files;
  files.reserve(names.size());
  for (const std::string& name : names) files.push_back((fs::path(dir) / name).string());
  return files;
}

}  // namespace

bool IsTraceFileName(std::string_view name) {
  const absl::string_view view(name.data(), name.size());
  return absl::EndsWithIgnoreCase(view, ".json") || absl::EndsWithIgnoreCase(view, ".json.gz") ||
         absl::EndsWithIgnoreCase(view, ".bsdigest") || absl::EndsWithIgnoreCase(view, ".sqlite");
}

bool IsNsightReportName(std::string_view name) {
  const absl::string_view view(name.data(), name.size());
  for (std::string_view suffix : kNsightReportSuffixes) {
    if (absl::EndsWithIgnoreCase(view, absl::string_view(suffix.data(), suffix.size()))) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<TraceFile>> ExpandTracePaths(const std::vector<std::string>& paths,
                                                        std::vector<SkippedFile>* skipped) {
  if (paths.empty()) return absl::InvalidArgumentError("no trace files given");
  std::vector<TraceFile> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!fs::is_directory(path, error)) {
      if (IsNsightReportName(path)) return NsightReportError(path);
      files.push_back({path, false});
      continue;
    }
    absl::StatusOr<std::vector<std::string>> in_dir = TraceFilesIn(path, skipped);
    if (!in_dir.ok()) return in_dir.status();
    for (std::string& file : *in_dir) files.push_back({std::move(file), true});
  }
  return files;
}

}  // namespace bubblescope
