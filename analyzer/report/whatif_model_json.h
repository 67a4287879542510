// Each pipeline's what-if model (whatif::Model) in analyze's JSON report, and reading it back,
// so `bubblescope whatif REPORT.json` predicts without the traces (docs/whatif.md, "From a
// report"). The member is written and read here only; times are ns as JSON doubles, which
// round-trip exactly, so a prediction from the report equals one from the traces.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
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

// True when `path` is a regular file opening with a `bubblescope.analyze/` schema member.
bool IsAnalyzeReport(const std::string& path);

// Every pipeline's model in the report at `path`. InvalidArgumentError naming the file (and the
// byte offset, for broken JSON) when it is not a readable analyze report of a known major
// version; a pipeline whose model is missing or invalid carries that as its model's status.
absl::StatusOr<std::vector<ReportedPipeline>> ReadReportModels(const std::string& path);
// The same on the report's text; `path` only names it in messages.
absl::StatusOr<std::vector<ReportedPipeline>> ParseReportModels(std::string_view json,
                                                               const std::string& path);

}  // namespace bubblescope
