// Renders a rank_summary::Result as a human-readable table or as machine-readable JSON
// (schema "bubblescope.analyze/1"). Reports only read results; they compute nothing new beyond
// unit conversions and percentages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/rank_summary.h"
#include "text/json_writer.h"

namespace bubblescope {

inline constexpr std::string_view kAnalyzeSchema = "bubblescope.analyze/1";

struct SummaryReportOptions {
  std::string tool_name = "bubblescope";
  std::string tool_version;
  int json_indent = 2;  // spaces per level in JSON output; 0 for one line
  // A job whose pipelines hold more ranks than fold_above_ranks, or whose timelines hold more ops
  // than fold_above_ops, is large: its text and HTML reports fold data-parallel replicas and show
  // only some pipelines in full (report/large_job.h). A negative bound never applies.
  int32_t fold_above_ranks = 256;
  int64_t fold_above_ops = 20'000;
  // Pipelines (indices) a large job's reports show in full besides the worst ones.
  std::vector<int32_t> show_pipelines;
};

// A header line, one aligned row per rank (times in ms, idle as a percentage of the span), then
// every non-zero import counter per file with its severity, count, first byte offset and meaning.
// A large job's table leaves out `folded_ranks` (ascending) and prints `folded_text` (what stands
// for them, report/replica_report.h) under it. The note that a GPU rank's dev_idle is not its
// bubble (which the pipeline table below gives) is printed only when `pipelines_follow`.
std::string SummaryText(const rank_summary::Result& result, const SummaryReportOptions& options,
                        const std::vector<int32_t>& folded_ranks = {},
                        const std::string& folded_text = "", bool pipelines_follow = true);

// Lines under the report's headline, one per rank that launched device work but recorded none
// (ImportCounter::kLaunchWithoutDeviceActivity): its launches counted, and that the CPU thread
// stands in for the device. Past four ranks, one line counts the rest. Empty for none.
std::string MissingDeviceActivityText(const rank_summary::Result& result);

// The JSON document: times in µs (exact to the ns), peaks null when unknown, and per rank only the
// import counters that are non-zero. Fails only if the writer was misused (a bug).
// Writes the summary's members (schema, tool, ranks, import_issues) into the object `json` has
// open, so a larger report can add members of its own beside them.
void WriteSummaryMembers(const rank_summary::Result& result, const SummaryReportOptions& options,
                         JsonWriter& json);

absl::StatusOr<std::string> SummaryJson(const rank_summary::Result& result,
                                        const SummaryReportOptions& options);

}  // namespace bubblescope
