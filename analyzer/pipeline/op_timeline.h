// The measured schedule, op by op, for pictures of it (the HTML report, the Perfetto overlay):
// every op the shape was measured from (schedule_inference::Result::ops) placed on the
// pipeline's reference clock, in the bubble iteration it lies in, with its stage, chunk and
// microbatch.
//
// Labels: annotations name the microbatch (and, `PP:{stage}...`, the chunk). Elsewhere they come
// from the inferred schedule's own program (sim::StageProgram at the shape's p, v, m and family):
// when one rank's ops of one step run in exactly the program's order of op types, the k-th op is
// the program's k-th. Where they do not (a step cut short, ops mis-split, a schedule the
// simulator does not model, such as DualPipeV), the ops of that rank and step stay unlabelled
// rather than guessed.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/bubble.h"
#include "analysis/clock_offsets.h"
#include "bubblescope/trace.h"
#include "pipeline/pipeline_op.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::op_timeline {

enum class LabelSource : uint8_t {
  kAnnotation,  // the op's own annotation
  kSchedule,    // its position in the inferred schedule's program
  kNone,        // unlabelled: microbatch (and chunk, unless annotated) unknown
};

// "annotation", "schedule", "none".
std::string_view LabelSourceName(LabelSource source);

struct TimelineOp {
  int32_t rank = -1;
  int32_t stage = -1;  // pipeline position of the rank
  int32_t chunk = -1;  // the rank's model chunk (virtual stage = chunk * p + stage); -1 unknown
  pipeline::OpType type = pipeline::OpType::kForward;
  bool input_grad_only = false;  // an `I` op
  bool overlapped = false;       // shares its range with another op (DualPipeV)
  int32_t microbatch = -1;       // -1 unknown
  LabelSource label = LabelSource::kNone;
  // Number of the bubble iteration (bubble::IterationFigures::number) the op's start lies in:
  // the one whose span of its rank's work (first_compute_start..last_compute_end) holds it, else
  // the one whose window does; -1 when none does. The pipeline's windows overlap where one rank
  // starts an iteration before another ends the last, so the rank's own spans decide first.
  int64_t iteration = -1;
  // Its compute's first start and last end on the pipeline's reference clock; equal when it
  // covered no compute.
  TimeNs start = 0;
  TimeNs end = 0;
};

struct Result {
  std::vector<TimelineOp> ops;  // by pipeline position, then start
  int64_t unlabelled = 0;       // ops with LabelSource::kNone
};

// `shape` must be the pipeline's (its stage_order gives each rank's position) and `bubble` its
// bubble on the clock `offsets` align it to. Linear in the ops, plus one program per stage.
Result Build(const schedule_inference::Result& shape, const bubble::Result& bubble,
             const ClockOffsets& offsets);

}  // namespace bubblescope::op_timeline
