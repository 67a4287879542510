// Which rank runs which stage of one pipeline: decided once per pipeline by the job driver and
// read by everything after it (schedule inference, clock alignment, the bubble's rank order,
// links, reports). docs/schedule-inference.md, "Stage order".
//
// Sources, in order of trust:
//  1. `PP:{stage}{F|B|I|W}{mb}` annotations on every rank of the pipeline that put each virtual
//     stage 0..S-1 (S a multiple of p) on one rank: the ranks in order of their lowest virtual
//     stage, and the virtual stage -> rank placement itself.
//  2. Point-to-point traffic in each rank's reference step (p2p_structure.h), or the chain the
//     pipeline was found as when no peer ranks are recorded (ChainByCompletionGaps).
// When neither tells, the ranks are listed in id order and the order is marked unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pipeline/issued_items.h"
#include "pipeline/pipeline_op.h"

namespace bubblescope::pipeline {

enum class ShapeSource : uint8_t { kAnnotations, kP2p };

std::string_view ShapeSourceName(ShapeSource source);  // "annotations", "p2p"

struct StageOrder {
  std::vector<int32_t> ranks;  // rank of stage 0 .. p-1; unknown: the ranks in id order
  bool known = false;
  ShapeSource source = ShapeSource::kP2p;
  // Annotations only: the rank of each virtual stage 0 .. p·v-1.
  std::vector<int32_t> virtual_stage_ranks;
  std::string problem;  // unknown: why the traffic gave no order
  // Every rank carries staged annotations but they could not be used: why.
  std::string annotation_problem;
};

// The virtual stage -> rank placement that staged annotation ops describe for `rank_count`
// ranks. FailedPreconditionError when a stage is on two ranks or the stages are not 0..S-1 with
// S a multiple of rank_count.
absl::StatusOr<std::vector<int32_t>> StagedPlacement(const std::vector<PipelineOp>& ops,
                                                     size_t rank_count);

// `timelines` and `annotated` hold the pipeline's ranks (the same ranks in the same order);
// `chain`, when the pipeline was found as a chain without peer ranks, is its order.
StageOrder FindStageOrder(const std::vector<IssuedTimeline>& timelines,
                          const std::vector<std::vector<PipelineOp>>& annotated,
                          const std::optional<std::vector<int32_t>>& chain);

}  // namespace bubblescope::pipeline
