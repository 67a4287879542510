// Each pipeline's what-if model (whatif::Model) in analyze's JSON report, so `bubblescope whatif
// REPORT.json` predicts without the traces (docs/whatif.md, "From a report"); the one reader of
// the report (compare/report_reader.h) reads it back. Times are ns as JSON doubles, which
// round-trip exactly, so a prediction from the report equals one from the traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compare/run_figures.h"
#include "job/job.h"
#include "text/json_writer.h"
#include "whatif/whatif.h"

namespace bubblescope {

// Writes "whatif_model" (an object, or null) and "whatif_model_problem" (null, or why there is
// no model) into the pipeline's object.
void WriteWhatIfModelMembers(const job::Pipeline& pipeline, JsonWriter& json);

// One pipeline's model as a report (or the job) holds it.
struct ReportedPipeline {
  int32_t pipeline = 0;
  std::vector<int32_t> ranks;  // in stage order
  absl::StatusOr<whatif::Model> model = absl::UnknownError("not read");
  std::vector<int32_t> rebalance_layers_after;  // the suggested split; empty without one
};

// The same from an analysed pipeline, so both inputs of `whatif` meet in one type.
ReportedPipeline ReportedPipelineOf(int32_t index, const job::Pipeline& pipeline);

// The same from a report read by compare::ReadAnalyzeReport (the one reader of analyze's
// report), one per pipeline.
std::vector<ReportedPipeline> ReportedPipelinesOf(const compare::RunFigures& run);

}  // namespace bubblescope
