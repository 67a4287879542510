// What changed underneath a failed gate check, as the diff of its pipeline says: the pipeline's
// shape changes, then the largest rises of a stage's forward / backward / weight-gradient time and
// of a link's median transfer time. A CI reader sees which stage or link moved without running
// `diff`. Read from the PipelineDiff only, never recomputed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/diff.h"

namespace bubblescope::compare {

// The most changes of op and link times named under one check (shape changes come on top).
inline constexpr size_t kChangesBehindShown = 3;

struct ChangeBehind {
  enum class Kind : uint8_t { kShape, kStageOp, kLink };
  Kind kind = Kind::kShape;
  // kShape: "p", "m", "v" or "schedule"; kStageOp: "forward", "backward" or "weight_grad";
  // kLink: "transfer" (the median transfer time).
  std::string figure;
  int32_t stage = 0;      // kStageOp: the stage's position; kLink: the sending stage's
  int32_t dst_stage = 0;  // kLink: the receiving stage's position
  Change change;          // kStageOp and kLink: microseconds on each side
  std::string a;          // kShape: each side's value ("-" when unknown)
  std::string b;
};

// The changes behind a check of `pipeline`: every shape change; for a pipeline-wide bubble or
// latency check the largest rises, over every stage's op times and every link's transfer time,
// that exceed the iteration-to-iteration spread (up to kChangesBehindShown, largest first); for
// a stage's bubble, those of that stage and its links; for memory, the shape changes only (the
// microbatches in flight are what memory follows).
std::vector<ChangeBehind> ChangesBehind(const PipelineDiff& pipeline, bool memory_check,
                                        std::optional<int32_t> stage);

}  // namespace bubblescope::compare
