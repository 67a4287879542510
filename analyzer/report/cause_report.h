// A pipeline's root causes (findings/root_causes.h) as text and JSON: each cause with what it
// costs per iteration, what fixing it is predicted to save, the next step, and its findings
// under it; and one finding as JSON, shared with the report's flat "findings" list.
#pragma once

#include <string>

#include "job/job.h"
#include "text/json_writer.h"

namespace bubblescope {

// "  causes, by ...:\n    1. ...", or "  findings: none\n".
std::string CausesText(const job::Pipeline& pipeline);

// The pipeline's "root_causes" member: an array of causes, each with its findings.
void WriteCausesMember(const job::Pipeline& pipeline, JsonWriter& json);

void WriteFindingJson(const findings::Finding& finding, JsonWriter& json);

// "slow_link (the link stage 1 (rank 1) -> stage 2 (rank 2) is slow): fixing it (...) is
// predicted to save 7.962 ms per iteration" — the cause in a sentence, for the diagnosis.
std::string CauseSentence(const root_causes::RootCause& cause);

}  // namespace bubblescope
