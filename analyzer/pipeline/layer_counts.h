// Layer counts a job declares in its own trace, for the rebalance suggestion (rebalance.h).
//
// No profiler records how many model layers a pipeline stage holds, so bubblescope reads a
// convention of its own: each rank opens one annotation named `bubblescope:layers=N` (a
// torch.profiler.record_function range or an NVTX range, CPU or GPU scope, anywhere in the
// trace), N being the layers that rank holds (all its chunks together on an interleaved job).
// The counts are used only when every rank of the pipeline declares exactly one value; a
// pipeline where no rank declares any has no counts and no problem. docs/bubble.md describes
// the convention.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bubblescope/trace.h"

namespace bubblescope::layer_counts {

inline constexpr std::string_view kAnnotationPrefix = "bubblescope:layers=";

struct Options {
  std::vector<int32_t> stage_order;  // rank of stage 0 .. p-1 (schedule_inference::Result)
};

struct Result {
  std::vector<int32_t> layers_per_stage;  // by stage; empty unless every rank declared one count
  // Why declared counts cannot be used (a rank without one, two different counts on one rank, a
  // count that is not a whole number from 1 to 1,000,000); empty when usable or none declared.
  std::string problem;
  bool declared() const { return !layers_per_stage.empty() || !problem.empty(); }
};

// The count in an annotation name, or -1 when the name is not `bubblescope:layers=N` with N a
// whole number from 1 to 1,000,000 (no sign, no spaces). 0 when the prefix is there but N is not.
int32_t ParseLayerAnnotation(std::string_view name);

Result Analyze(const Trace& trace, const Options& options);

}  // namespace bubblescope::layer_counts
