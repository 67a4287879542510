// The what-if trade-off of the HTML report (docs/html-report.md, "What if"): the bubble and the
// peak memory the pipeline's what-if model (whatif/whatif.h) predicts for m/2 .. 4m microbatches
// of the same global batch, under the measured schedule and the alternatives the simulator
// models, drawn as lines against m, with the measured job marked.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "job/job.h"
#include "whatif/whatif.h"

namespace bubblescope::html {

// The chart section: `result` holds the predictions of whatif::TradeoffCandidates(model) (or
// why there are none), which the chart only draws.
std::string WhatIfChart(const whatif::Model& model, const absl::StatusOr<whatif::Result>& result);

// The section without a chart: a sentence quoting `problem`.
std::string WhatIfUnavailable(const std::string& problem);

// The same for an analysed pipeline (its model and trade-off, or why it has none).
std::string WhatIfSection(const job::Pipeline& pipeline);

// The predictions of `bubblescope whatif` as a table: the measured figures, the measured
// configuration as the model reproduces it, each candidate (or why it could not be predicted)
// with its iteration, bubble, largest peak and whether it fits; a row that does not fit in red.
std::string PredictionTable(const whatif::Result& result);

}  // namespace bubblescope::html
