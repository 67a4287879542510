#include "cli/compare_input.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cli/job_input.h"
#include "common/output_file.h"
#include "common/status_macros.h"
#include "compare/report_reader.h"
#include "loader/file_source.h"
#include "loader/trace_loader.h"
#include "report/pipeline_report.h"
#include "text/one_line.h"

namespace bubblescope {
namespace {

// Enough of a file's beginning to see whether it opens a bubblescope report.
constexpr std::streamsize kHeadBytes = 4096;

// Whether a --rank PATH names a file of the side at `side`: the side itself, a path inside the
// side's directory, or a file name the directory holds (as analyze matches them).
bool NamesAFileOf(const std::string& override_path, const std::string& side) {
  namespace fs = std::filesystem;
  const fs::path named = fs::path(override_path).lexically_normal();
  const fs::path root = fs::path(side).lexically_normal();
  if (named == root) return true;
  std::error_code ignored;
  if (!fs::is_directory(side, ignored)) return false;
  if (!named.has_parent_path()) return fs::exists(fs::path(side) / named, ignored);
  const fs::path relative = named.lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

// Why the figures of `job` cannot be read (`direct` says it without a document), in the words
// the reader uses for a report file: the member and where the report holds it. Only for a
// figure no report can carry (a time past the model's range, NaN), so the report is written and
// read back here alone.
absl::Status RefusalInReport(const std::string& path, const std::string& tool_version,
                             const job::Result& job, const absl::Status& direct) {
  SummaryReportOptions options;
  options.tool_version = tool_version;
  options.json_indent = 0;
  const absl::StatusOr<std::string> json = AnalyzeJson(job, options);
  BUBBLESCOPE_RETURN_IF_ERROR(json.status());
  const absl::Status read = compare::ReadAnalyzeReport(path, *json).status();
  return read.ok() ? direct : read;
}

}  // namespace

void CompareCommand::DefineTraceOptions(CLI::App* command) {
  command
      ->add_option("-j,--jobs", jobs_,
                   "For a side that is traces: threads that read the "
                   "files and analyse them; 0 = one per core")
      ->check(WholeNumberAtLeast(0))
      ->capture_default_str();
  iteration_marker_option_ =
      command
          ->add_option("--iteration-marker", iteration_marker_,
                       "For a side that is traces: regular expression naming the CPU annotations "
                       "that mark iterations (default: the ProfilerStep#N ranges)")
          ->type_name("REGEX");
  const std::string scope = "For a side that is traces. ";
  DefineStrict(command, &selection_.strict, scope);
  DefineTraceSelection(command, &selection_, scope);
  DefineQuiet(command, &quiet_);
}

absl::StatusOr<bool> IsReportFile(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) return false;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", text::OneLine(path), ": ", std::strerror(errno)));
  }
  // A regular file's head is read as its whole text will be, gzip inflated, so a gzip'd report
  // is told as a report (it was read as a trace: "no traceEvents array"); a stream's head is
  // read as it comes, and what is read of it is gone.
  absl::StatusOr<FileHead> inflated = ReadFileHead(path, static_cast<size_t>(kHeadBytes));
  if (inflated.ok() && inflated->regular) {
    return compare::LooksLikeBubblescopeReport(inflated->bytes);
  }
  std::string head(static_cast<size_t>(kHeadBytes), '\0');
  file.read(head.data(), kHeadBytes);
  head.resize(static_cast<size_t>(file.gcount()));
  return compare::LooksLikeBubblescopeReport(head);
}

absl::StatusOr<compare::RunFigures> ReadReportFile(const std::string& path) {
  // The one reading path and budget of every file bubblescope reads (loader/file_source.h): a
  // stream or a huge file stops at the budget, memory running out is said as such.
  absl::StatusOr<FileContents> contents = ReadFileSource(path, ReadingBudgetBytes(1));
  BUBBLESCOPE_RETURN_IF_ERROR(contents.status());
  return compare::ReadPaddedAnalyzeReport(text::OneLine(path), contents->text);
}

absl::StatusOr<compare::GateThresholds> ReadGateConfigFile(const std::string& path) {
  // Read as every file is, under a budget of its own: a config is a few lines.
  absl::StatusOr<FileContents> contents = ReadFileSource(path, kMaxGateConfigBytes);
  BUBBLESCOPE_RETURN_IF_ERROR(contents.status());
  return compare::ParseGateConfig(std::string_view(contents->text.data(), contents->text.size()),
                                  text::OneLine(path));
}

std::optional<compare::RunFigures> CompareCommand::ReadSide(const std::string& path,
                                                            std::ostream& err) {
  const absl::StatusOr<bool> is_report = IsReportFile(path);
  if (!is_report.ok()) {
    err << "bubblescope: " << MessageLine(is_report.status()) << "\n";
    return std::nullopt;
  }
  std::optional<compare::RunFigures> figures =
      *is_report ? ReadReport(path, err) : AnalyseTraces(path, err);
  if (!figures.has_value()) return std::nullopt;
  if (figures->pipelines.empty()) {
    err << "bubblescope: " << text::OneLine(path)
        << ": no pipeline (no rank has point-to-point traffic): nothing to compare\n";
    return std::nullopt;
  }
  return figures;
}

std::optional<compare::RunFigures> CompareCommand::ReadReport(const std::string& path,
                                                              std::ostream& err) {
  files_read_.push_back(path);
  absl::StatusOr<compare::RunFigures> figures = ReadReportFile(path);
  if (!figures.ok()) {
    err << "bubblescope: " << MessageLine(figures.status()) << "\n";
    return std::nullopt;
  }
  return *std::move(figures);
}

std::optional<compare::RunFigures> CompareCommand::AnalyseTraces(const std::string& path,
                                                                 std::ostream& err) {
  JobSource source;
  source.paths = {path};
  source.load.jobs = jobs_;
  source.quiet = quiet_;
  if (iteration_marker_option_ != nullptr && iteration_marker_option_->count() > 0) {
    source.iteration_marker = iteration_marker_;
  }
  if (!ApplyTraceSelection(selection_, &source, err)) return std::nullopt;
  // One --rank list serves both sides: each side takes the overrides that name its files.
  std::vector<RankOverride> mine;
  for (size_t i = 0; i < source.load.rank_overrides.size(); ++i) {
    if (!NamesAFileOf(source.load.rank_overrides[i].path, path)) continue;
    mine.push_back(source.load.rank_overrides[i]);
    overrides_used_.insert(i);
  }
  source.load.rank_overrides = std::move(mine);
  int status = kExitOk;
  std::optional<LoadedJob> loaded = LoadAndAnalyzeJob(source, job::Options{}, err, &status);
  if (!loaded.has_value()) return std::nullopt;
  for (const Rank& rank : loaded->trace.ranks) files_read_.push_back(rank.source_path);
  for (const SkippedFile& skipped : loaded->trace.skipped_files) {
    files_read_.push_back(skipped.path);
  }
  // The figures the report would hold, read from the result through the same rows the writer
  // writes them from: no document written and parsed back.
  absl::StatusOr<compare::RunFigures> figures = AnalyzeFigures(loaded->job, path, tool_version_);
  if (!figures.ok()) {
    err << "bubblescope: internal error: "
        << MessageLine(RefusalInReport(path, tool_version_, loaded->job, figures.status())) << "\n";
    return std::nullopt;
  }
  return *std::move(figures);
}

bool CompareCommand::RankOverridesUsed(std::ostream& err) const {
  for (size_t i = 0; i < selection_.rank_args.size(); ++i) {
    if (overrides_used_.contains(i)) continue;
    err << "bubblescope: --rank " << text::OneLine(selection_.rank_args[i])
        << ": names no trace file of either side\n";
    return false;
  }
  return true;
}

bool CompareCommand::WriteOutput(const std::string& path, const std::string& contents,
                                 std::ostream& err) const {
  OutputFileOptions options;
  options.protected_files = files_read_;
  if (absl::Status written = WriteOutputFile(path, contents, options); !written.ok()) {
    err << "bubblescope: " << MessageLine(written) << "\n";
    return false;
  }
  SayWritten(path, "the report", quiet_, err);
  return true;
}

}  // namespace bubblescope
