// Renders what the cross-rank analysis adds to one pipeline (job::CrossRankFigures):
// clock offsets, the link table and whom each rank's stall waited for, as text lines inside the
// pipeline's block and as members of its JSON object (docs/json-report.md). Reports only read
// results: unit conversions and per-iteration divisions only.
#pragma once

#include <cstdint>
#include <string>

#include "job/job.h"
#include "text/json_writer.h"

namespace bubblescope {

// Lines indented by two spaces: offsets, link table, stall attribution, notes.
std::string LinkText(const job::CrossRankFigures& figures);

// Members interleaved, clock_offsets_us, clock_uncertainty_us, unaligned_ranks, links and
// stall_by_peer, written into the pipeline object `json` has open.
void WriteLinkMembers(const job::CrossRankFigures& figures, JsonWriter& json);

}  // namespace bubblescope
