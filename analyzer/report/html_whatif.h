// The what-if trade-off of the HTML report (docs/html-report.md, "What if"): the bubble and the
// peak memory the pipeline's what-if model (whatif/whatif.h) predicts for m/2 .. 4m microbatches
// of the same global batch, under the measured schedule and the alternatives the simulator
// models, drawn as lines against m, with the measured job marked.
#pragma once

#include <string>
#include <vector>

#include "job/job.h"
#include "whatif/whatif.h"

namespace bubblescope::html {

// The configurations the chart predicts: m/2 (m even), m, 2m and 4m microbatches (the same
// samples) for the measured schedule and, for a training job, 1f1b, interleaved v=2 and zb-h1;
// never the measured configuration itself (whatif::Result::baseline is that).
std::vector<whatif::Candidate> SweepCandidates(const whatif::Model& model);

// The chart section, predicted here on `model`; a sentence quoting `problem` when there is no
// model (null).
std::string WhatIfChart(const whatif::Model* model, const std::string& problem);

// The same for an analysed pipeline (its model, or why it has none).
std::string WhatIfSection(const job::Pipeline& pipeline);

// The predictions of `bubblescope whatif` as a table: the measured figures, the measured
// configuration as the model reproduces it, each candidate (or why it could not be predicted)
// with its iteration, bubble, largest peak and whether it fits; a row that does not fit in red.
std::string PredictionTable(const whatif::Result& result);

}  // namespace bubblescope::html
