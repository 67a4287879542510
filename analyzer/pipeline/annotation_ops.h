// Pipeline ops read from user annotations.
//
// torch.distributed.pipelining's runtime schedules name each action `PP:{stage}{F|B|I|W}{mb}`
// (the stage is the virtual stage); hand-written NVTX ranges often drop the stage
// (`PP:F{mb}`, `PP:B{mb}`); ScheduleGPipe writes `Forward {mb}` / `Backward {mb}`, and the
// simulator adds `WeightGrad {mb}` for zero-bubble W ops. The stageless forms get their stage from
// the p2p order. Transfer, wait and sharding actions
// (`PP:0SEND_F0`, `PP:1WAIT_RECV_B2`, `PP:0UNSHARD`, ...) are not compute and are not ops.
// DualPipeV's overlapped pairs (`PP:(0F3;3B1)OVERLAP_F_B`) are one op per action, marked
// overlapped: they count, but share one range's compute.
//
// An op's compute is the union of the compute intervals it covers: for a GPU range, the compute
// kernels of its device overlapping it; for a CPU range on a GPU rank, the kernels whose launch
// starts inside it; on a CPU-only rank, the top-level compute ops of the model thread starting
// inside it.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "bubblescope/trace.h"
#include "index/rank_index.h"
#include "pipeline/pipeline_op.h"
#include "pipeline/step_map.h"

namespace bubblescope::pipeline {

struct ParsedOpName {
  OpType type = OpType::kForward;
  bool input_grad_only = false;
  int32_t virtual_stage = -1;  // -1 for the stageless forms (`Forward {mb}`, `PP:F{mb}`)
  int32_t microbatch = 0;
};

// Consumes a run of decimal digits from the front of `text` into `value`; false when there is
// none or it does not fit an int32 (then `text` is left as it was).
bool ConsumeLeadingNumber(std::string_view* text, int32_t* value);

std::optional<ParsedOpName> ParseOpAnnotation(std::string_view name);

// torch's DualPipeV runs a forward and a backward of different stages together and names the
// pair `PP:({action};{action})OVERLAP_F_B`, e.g. `PP:(0F3;3B1)OVERLAP_F_B`: every action, each
// `{stage}{F|B|I|W}{mb}`. Empty when the name is not of that form or an action does not parse.
std::vector<ParsedOpName> ParseOverlappedOps(std::string_view name);

// The annotated ops of one rank, in start order; ops starting in no step (step_map.h) are left
// out.
std::vector<PipelineOp> AnnotatedOps(const Rank& rank, const index::RankIndex& rank_index,
                                     const StepMap& steps);

}  // namespace bubblescope::pipeline
