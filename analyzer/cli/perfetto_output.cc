#include "cli/perfetto_output.h"

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "cli/command.h"
#include "cli/id_ranges.h"
#include "common/out_of_memory.h"
#include "common/spooled_output.h"
#include "perfetto/perfetto_overlay.h"

namespace bubblescope {

int ChooseMergedRanks(const PerfettoRequest& request, const LoadedJob& loaded, std::ostream& err,
                      std::vector<size_t>* ranks) {
  ranks->clear();
  if (request.path.empty()) return kExitOk;
  // The lists' syntax was checked when the flags were parsed.
  perfetto::OverlayChoice choice;
  if (!request.pipelines.empty()) choice.pipelines = *ParseIdRanges(request.pipelines);
  if (!request.ranks.empty()) choice.ranks = *ParseIdRanges(request.ranks);
  // Each flag checked alone first, so that an error names the flag it is about.
  const std::pair<const char*, perfetto::OverlayChoice> limits[] = {
      {"--perfetto-pipelines", {.pipelines = choice.pipelines, .ranks = {}}},
      {"--perfetto-ranks", {.pipelines = {}, .ranks = choice.ranks}},
      {"--perfetto-pipelines and --perfetto-ranks", choice}};
  for (const auto& [flag, limit] : limits) {
    absl::StatusOr<std::vector<size_t>> chosen =
        perfetto::ChooseRanks(loaded.trace, loaded.job, limit);
    if (!chosen.ok()) {
      err << "bubblescope: " << flag << ": " << MessageLine(chosen.status()) << "\n";
      return kExitBadInput;
    }
    *ranks = *std::move(chosen);
  }
  return kExitOk;
}

int WriteMergedTrace(const std::string& path, const LoadedJob& loaded,
                     const std::vector<size_t>& ranks, const OutputFileOptions& options,
                     std::ostream& err) {
  // Streamed rank by rank: the trace is never held whole, however many ranks the job has.
  absl::StatusOr<std::unique_ptr<SpooledOutput>> output =
      SpooledOutput::Open(path, options, absl::EndsWith(path, ".gz"));
  if (!output.ok()) {
    err << "bubblescope: --perfetto: " << MessageLine(output.status()) << "\n";
    return kExitFailure;
  }
  perfetto::OverlayCounts counts;
  absl::StatusOr<perfetto::MergedFrame> frame =
      perfetto::WriteOverlay(loaded.trace, loaded.job, ranks, &(*output)->body(), &counts);
  if (!frame.ok()) {
    err << "bubblescope: --perfetto: " << MessageLine(frame.status()) << "\n";
    // Memory running out re-reading a trace is the input's size, and a digest given where the
    // trace's events are needed is the input's kind: neither is a failed write.
    const bool input = IsOutOfMemory(frame.status()) ||
                       frame.status().code() == absl::StatusCode::kInvalidArgument;
    return input ? kExitBadInput : kExitFailure;
  }
  if (absl::Status written = (*output)->Finish(frame->head, frame->tail); !written.ok()) {
    err << "bubblescope: --perfetto: " << MessageLine(written) << "\n";
    return kExitFailure;
  }
  if (counts.left_out > 0) {
    err << "note: --perfetto: " << counts.left_out
        << " events the Chrome trace format cannot hold were left out (bubblescope skips them "
           "too)\n";
  }
  return kExitOk;
}

}  // namespace bubblescope
