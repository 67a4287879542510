// The global ranks and process groups of a simulated job with tensor and data parallelism beside
// the pipeline (ModelParallel, config.h), as Megatron-Core creates them: default rank order
// tp-dp-pp (global rank = tensor + T * (data + D * pipeline rank)), every group described with
// the group_desc Megatron-Core passes (megatron/core/parallel_state.py) and named with torch's
// running group number ("0" is the default group; each new_group call, on every rank, takes the
// next one: here the data-parallel groups, then the tensor-parallel ones, then the pipelines).
#pragma once

#include <cstdint>
#include <string_view>

#include "bubblescope/trace.h"
#include "simulator/config.h"
#include "simulator/program.h"

namespace bubblescope::sim {

// One copy of the pipeline: its tensor-parallel and data-parallel rank.
struct Replica {
  int32_t tensor = 0;
  int32_t data = 0;
};

int32_t GlobalRank(const Config& config, int32_t pipeline_rank, Replica replica);

// The groups of the rank running pipeline rank `pipeline_rank` in `replica`.
struct RankGroups {
  ProcessGroup world;     // "default_pg", every rank
  ProcessGroup pipeline;  // PIPELINE_MODEL_PARALLEL_GROUP
  ProcessGroup tensor;    // TENSOR_MODEL_PARALLEL_GROUP
  ProcessGroup data;      // DATA_PARALLEL_GROUP
};
RankGroups GroupsOf(const Config& config, int32_t pipeline_rank, Replica replica);

// How one compute kernel's share of its op splits with its tensor-parallel collectives: the one
// before it (sequence parallelism's all-gather), its own compute, and the one after it (an
// all-reduce, or sequence parallelism's reduce-scatter). For a backward with overlap that one
// is asynchronous, beside the op's next kernel (Megatron-Core launches the input gradient's
// all-reduce and computes the weight gradient meanwhile), except after the op's last kernel:
// the op waits for it there, and the group's stream runs its collectives in order, so the op
// ends after every one. Without tensor parallelism: all compute.
struct KernelShares {
  TimeNs before = 0;
  TimeNs compute = 0;
  TimeNs after = 0;
  bool async = false;
};
KernelShares SplitForTensorParallel(const ModelParallel& parallel, TimeNs share, OpType type,
                                    bool last_of_op);

// NCCL's kernel for a bf16 collective, as a profiler names it
// ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)").
std::string_view CollectiveKernelName(CommKind kind);
// The `Collective name` torch records for it ("allreduce", "_reduce_scatter_base", ...).
std::string_view CollectiveName(CommKind kind);

}  // namespace bubblescope::sim
