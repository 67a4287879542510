// Renders what each inferred fact of a pipeline rests on (job::Pipeline::evidence,
// pipeline/inference_evidence.h): one text line in the pipeline's block that calls a weak fact a
// guess, and the `evidence` member of its JSON object (docs/json-report.md). Reports only read
// results.
#pragma once

#include <string>

#include "pipeline/inference_evidence.h"
#include "text/json_writer.h"

namespace bubblescope {

// "  evidence: stage order from annotations (read); ..." with a newline.
std::string EvidenceText(const inference_evidence::Evidence& evidence);

// The member "evidence" written into the pipeline object `json` has open.
void WriteEvidenceMember(const inference_evidence::Evidence& evidence, JsonWriter& json);

}  // namespace bubblescope
