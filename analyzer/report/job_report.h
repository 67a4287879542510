// Renders the job summary (job_pipelines::JobSummary): how many pipelines the p2p graph gave,
// the worst one and the spread of bubble fractions between them, ranks outside every pipeline,
// and, for a job without any pipeline, its collectives (docs/json-report.md, "job").
#pragma once

#include <string>

#include "crossrank/job_pipelines.h"
#include "report/json_writer.h"

namespace bubblescope {

std::string JobText(const job_pipelines::JobSummary& job);

// The "job" member, written into the object `json` has open.
void WriteJobMember(const job_pipelines::JobSummary& job, JsonWriter& json);

}  // namespace bubblescope
