// Text and JSON of what-if predictions (whatif/whatif.h) for the pipelines of one job:
// per pipeline, the measured figures, the model's own prediction of the measured configuration
// (how well it reproduces the job), and each candidate's predicted iteration, bubble and peak
// memory per stage, with whether it fits the measured memory headroom. JSON schema
// `bubblescope.whatif/1` (docs/whatif.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "text/json_writer.h"
#include "whatif/whatif.h"

namespace bubblescope {

// One pipeline's what-if, or why there is none.
struct PipelineWhatIf {
  int32_t pipeline = 0;        // index in the job's pipelines
  std::vector<int32_t> ranks;  // in stage order
  absl::StatusOr<whatif::Result> result;
  // For the HTML page only: the trade-off's predictions (whatif::TradeoffCandidates); nullopt
  // when not made.
  std::optional<absl::StatusOr<whatif::Result>> tradeoff;
};

std::string WhatIfText(const std::vector<PipelineWhatIf>& pipelines);

// The label of a candidate's row: whatif::CandidateLabel, and for a candidate of another m than
// the measured one that keeps each microbatch as measured, " (microbatch size kept)", so it is
// never read as one of the same global batch (analyze's findings predict m that way, and
// CandidateLabel marks those " (same global batch)").
std::string CandidateRowLabel(const whatif::Candidate& candidate, int32_t measured_microbatches);

// `key`: the prediction's peak allocated bytes by stage, or null when its memory is unknown.
void WritePeaksByStage(std::string_view key, const whatif::Prediction& prediction,
                       JsonWriter& json);
absl::StatusOr<std::string> WhatIfJson(const std::vector<PipelineWhatIf>& pipelines,
                                       const std::string& tool_version);

}  // namespace bubblescope
