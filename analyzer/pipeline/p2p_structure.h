// Pipeline structure from point-to-point traffic alone: stage order, m, v and the schedule
// family, read from the issue order of sends and receives in each rank's step 0 (the pipeline's
// reference iteration, step_map.h).
// schedule_inference.h states the rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pipeline/issued_items.h"

namespace bubblescope::pipeline {

// True when any transfer of the timelines records its peer rank.
bool PeersKnown(const std::vector<IssuedTimeline>& timelines);

// Ranks from first to last stage. The first stage is the one rank whose first transfer is a
// send. With peers, the order follows each rank's first send. Without: on GPU ranks, each next
// stage is the rank whose activation receives complete with the gaps of this stage's activation
// sends (NCCL completes both ends together, so clock offsets do not matter); on CPU ranks, or
// when that cannot be read, the order of first-receive completions. FailedPreconditionError when
// the traffic does not single out a first stage or does not reach every rank.
absl::StatusOr<std::vector<int32_t>> InferStageOrder(const std::vector<IssuedTimeline>& timelines);

// Without peers, on GPU ranks: the pipelines of the ranks, each as its stage order. Every rank
// whose first transfer is a send starts one; with k of them among n ranks each has n/k stages.
// NCCL completes a send and its receive together, so the gaps between a stage's successive
// activation sends repeat in its successor's activation receives whatever the clock offset
// between them; stage by stage, the best-matching (pipeline, rank) pairs are taken first. Nullopt
// on CPU ranks, when n is not a multiple of k, or when a training job's phases cannot be read.
std::optional<std::vector<std::vector<int32_t>>> ChainByCompletionGaps(
    const std::vector<IssuedTimeline>& timelines);

struct P2pSchedule {
  int32_t m = 0;
  int32_t v = 1;
  bool has_backward = false;
  // Last stage: every forward input (v·m) arrives before its first gradient send.
  bool all_forwards_first = false;
  std::vector<std::string> notes;
};

// What the compute between transfers says, when phase hints split it (segment_ops.h).
struct ComputeCounts {
  int64_t first_stage_forwards = 0;   // forward ops in the first stage's step 0
  int64_t first_stage_backwards = 0;  // its backward (or input-gradient) ops
  bool any_backward = false;          // some rank has backward or weight-gradient ops
};

// `order` from InferStageOrder; `timelines` indexed like the ranks of `order` refer to.
// `compute`, when known, gives v where the traffic alone cannot (p = 2, or no peer ranks).
absl::StatusOr<P2pSchedule> InferP2pSchedule(const std::vector<IssuedTimeline>& timelines,
                                             const std::vector<int32_t>& order,
                                             const std::optional<ComputeCounts>& compute);

}  // namespace bubblescope::pipeline
