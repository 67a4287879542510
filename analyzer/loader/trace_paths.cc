#include "loader/trace_paths.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "loader/nsys_export.h"

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

// The most trace sets a message names; the rest are counted.
constexpr size_t kTraceSetsListed = 6;

// Whether `dir` directly holds a file with a trace file name (or an Nsight report).
bool HoldsTraceFiles(const fs::path& dir) {
  std::error_code error;
  fs::directory_iterator it(dir, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (IsTraceFileName(name) || IsNsightReportName(name)) return true;
  }
  return false;
}

// "it holds 2 trace sets in subfolders: a, b; name one: bubblescope analyze DIR/a", or empty
// when no subfolder of `dir` holds a trace file.
std::string TraceSetsIn(const std::string& dir, std::vector<std::string> subfolders) {
  std::sort(subfolders.begin(), subfolders.end());
  std::vector<std::string> sets;
  for (const std::string& name : subfolders) {
    if (HoldsTraceFiles(fs::path(dir) / name)) sets.push_back(name);
  }
  if (sets.empty()) return "";
  std::vector<std::string> listed(sets.begin(),
                                  sets.begin() + std::min(sets.size(), kTraceSetsListed));
  std::string list = absl::StrJoin(listed, ", ");
  if (sets.size() > listed.size())
    absl::StrAppend(&list, " and ", sets.size() - listed.size(), " more");
  return absl::StrCat(dir, " holds ", sets.size(), sets.size() == 1 ? " trace set" : " trace sets",
                      " in subfolders (", list, "); name one: bubblescope analyze ",
                      (fs::path(dir) / sets.front()).string());
}

absl::StatusOr<std::vector<std::string>> TraceFilesIn(const std::string& dir,
                                                      std::vector<SkippedFile>* skipped,
                                                      std::string* trace_sets) {
  std::error_code error;
  fs::directory_iterator it(dir, error);
  std::vector<std::string> names;
  std::vector<SkippedFile> passed_over;
  std::vector<std::string> reports;  // Nsight reports, exported when the directory holds no trace
  std::vector<std::string> subfolders;
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code folder_error;
    if (!IsTraceFileName(name) && it->is_directory(folder_error)) subfolders.push_back(name);
    if (IsNsightReportName(name)) reports.push_back(it->path().string());
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
  if (names.empty() && !reports.empty()) {
    // Reports beside no export: each exported through nsys (the first that cannot be is the
    // error). Beside their exports they are passed over, the exports being what is read.
    std::sort(reports.begin(), reports.end());
    std::vector<std::string> exported;
    for (const std::string& report : reports) {
      BUBBLESCOPE_ASSIGN_OR_RETURN(std::string path, ExportNsightReport(report));
      exported.push_back(std::move(path));
    }
    return exported;
  }
  // Only where the files here may be no traces at all: a folder of ranks has no subfolders to
  // look into, and a large one is listed once.
  std::string sets = subfolders.empty() ? "" : TraceSetsIn(dir, std::move(subfolders));
  if (names.empty()) {
    const std::string none = "no trace files (*.json, *.json.gz, *.bsdigest, *.sqlite)";
    // The sets first: naming one is what the user meant.
    return absl::NotFoundError(sets.empty() ? absl::StrCat(dir, ": ", none)
                                            : absl::StrCat(sets, "; ", none, " beside them"));
  }
  if (!sets.empty() && trace_sets->empty()) *trace_sets = std::move(sets);
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
                                                        std::vector<SkippedFile>* skipped,
                                                        std::string* trace_sets_below) {
  std::string unused_sets;
  if (trace_sets_below == nullptr) trace_sets_below = &unused_sets;
  if (paths.empty()) return absl::InvalidArgumentError("no trace files given");
  std::vector<TraceFile> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!fs::is_directory(path, error)) {
      if (IsNsightReportName(path)) {
        BUBBLESCOPE_ASSIGN_OR_RETURN(std::string exported, ExportNsightReport(path));
        files.push_back({std::move(exported), false});
        continue;
      }
      files.push_back({path, false});
      continue;
    }
    BUBBLESCOPE_ASSIGN_OR_RETURN(std::vector<std::string> in_dir,
                                 TraceFilesIn(path, skipped, trace_sets_below));
    for (std::string& file : in_dir) files.push_back({std::move(file), true});
  }
  return files;
}

}  // namespace bubblescope
