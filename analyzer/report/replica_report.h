// Renders the data-parallel replica sets of a job (job::Result::replica_sets, job/replica_sets.h)
// as the text report's folded block and as the "replica_sets" member of the analyze JSON
// document (docs/json-report.md); the HTML page draws the same columns (SpreadColumns). Reports
// only read the spreads the job computed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "job/job.h"
#include "text/json_writer.h"

namespace bubblescope {

// One column of a per-stage spread table: its header, the stage's spread in it (nullopt: not
// measured on every replica) and how a value is spelled.
template <typename Stage>
struct StageColumn {
  std::string header;
  std::function<std::optional<job::Spread>(const Stage&)> spread;
  std::function<std::string(double)> format;
};
using SpreadColumn = StageColumn<job::StageSpread>;

// The columns a set's table has: bubble share, the idle kinds and compute per iteration, the op
// times per microbatch and the memory peak; an op kind or the memory only when some stage has it.
std::vector<SpreadColumn> SpreadColumns(const job::ReplicaSet& set);

// Ascending indices as runs: "0-3,7,9-12".
std::string IndexRuns(const std::vector<int32_t>& indices);

// The set's first lines, shared by the text and the HTML report: which pipelines, what joins
// them; then the pipeline-level spreads (bubble, excess, median iteration). Lines without '\n'.
std::vector<std::string> ReplicaSetHeadline(const job::Result& result, size_t set_index);

// The text report's block for one replica set: its headline, the worst replica named (the text
// report prints it in full after the block), and the per-stage table of min, median and max.
std::string ReplicaSetText(const job::Result& result, size_t set_index);

// A large job's per-rank table without the ranks of its replica sets: those ranks (ascending),
// and in their place each set's per-stage spread of the per-rank figures
// (job::ReplicaSet::rank_summaries) as text. Empty when no set has them.
struct FoldedRanks {
  std::vector<int32_t> ranks;
  std::string text;
};
FoldedRanks FoldRankTable(const job::Result& result);

// The "replica_sets" member, written into the object `json` has open.
void WriteReplicaSetsMember(const std::vector<job::ReplicaSet>& sets, JsonWriter& json);

}  // namespace bubblescope
