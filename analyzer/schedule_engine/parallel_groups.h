// The global ranks and process groups of a simulated job with tensor, context, expert and data
// parallelism beside the pipeline (ModelParallel, config.h), as Megatron-Core creates them
// (megatron/core/parallel_state.py): the dense layer's ranks in the default order tp-cp-dp-pp
// (global rank = tensor + T * (context + C * (data + D * pipeline rank))), the expert layer's in
// tp-ep-dp-pp over the same ranks (its own data-parallel size C * D / E), every group described
// with the group_desc Megatron-Core passes and named with torch's running group number ("0" is
// the default group; each new_group call, on every rank, takes the next one). Of the groups
// Megatron-Core creates, those the simulated job communicates on are numbered, in its creation
// order: the data-parallel groups with context parallelism, the context-parallel ones, the
// tensor-parallel ones, the pipelines, then the expert-parallel ones.
#pragma once

#include <cstdint>
#include <string_view>

#include "bubblescope/trace.h"
#include "schedule_engine/config.h"
#include "schedule_engine/program.h"

namespace bubblescope::sim {

// One copy of the pipeline: its tensor-, context- and data-parallel rank.
struct Replica {
  int32_t tensor = 0;
  int32_t context = 0;
  int32_t data = 0;
};

int32_t GlobalRank(const Config& config, int32_t pipeline_rank, Replica replica);

// The groups of the rank running pipeline rank `pipeline_rank` in `replica`.
struct RankGroups {
  ProcessGroup world;     // "default_pg", every rank
  ProcessGroup pipeline;  // PIPELINE_MODEL_PARALLEL_GROUP
  ProcessGroup tensor;    // TENSOR_MODEL_PARALLEL_GROUP
  ProcessGroup context;   // CONTEXT_PARALLEL_GROUP
  ProcessGroup expert;    // EXPERT_MODEL_PARALLEL_GROUP
  // DATA_PARALLEL_GROUP_WITH_CP: the gradient sync of Megatron-Core's DDP (data x context ranks).
  ProcessGroup data;
};
RankGroups GroupsOf(const Config& config, int32_t pipeline_rank, Replica replica);

// The global rank one step along the context-parallel ring from `replica`'s (+1: the next CP
// rank, -1: the previous), at pipeline rank `pipeline_rank`.
int32_t RingNeighbour(const Config& config, int32_t pipeline_rank, Replica replica, int32_t step);

// How one compute kernel's share of its op splits with its in-stage communication:
// - the tensor-parallel collective before it (sequence parallelism's all-gather) and after it (an
//   all-reduce, or sequence parallelism's reduce-scatter). For a backward with overlap the one
//   after is asynchronous, beside the op's next kernel (Megatron-Core launches the input
//   gradient's all-reduce and computes the weight gradient meanwhile), except after the op's
//   last kernel: the op waits for it there, and the group's stream runs its collectives in
//   order, so the op ends after every one;
// - on the op's last kernel with expert parallelism, the MoE dispatch all-to-all before its
//   compute and the combine after it;
// - on the op's first kernel with context parallelism, ring attention: the compute split into
//   `ring_steps` attention steps and a closing piece, with the KV exchanges beside the steps.
// Without any of them: all compute.
struct KernelShares {
  TimeNs before = 0;
  TimeNs dispatch = 0;
  TimeNs compute = 0;
  TimeNs combine = 0;
  TimeNs after = 0;
  bool async = false;
  int32_t ring_steps = 0;  // 0: no ring
};
KernelShares SplitKernel(const ModelParallel& parallel, TimeNs share, OpType type, int32_t kernel,
                         int32_t kernels_per_op);

// The ring's exchanges in an op of `type`: one beside every attention step but the last in a
// forward, beside every step in a backward (the last carries the dKV).
int32_t RingExchanges(const ModelParallel& parallel, OpType type);

// Whether a context-parallel exchange is one batch_isend_irecv (Transformer Engine batches its
// ring's send and receive when the ring has two ranks, whose next and previous rank are one)
// rather than an isend and an irecv of their own.
inline bool RingExchangeBatched(const ModelParallel& parallel) { return parallel.context == 2; }

// NCCL's kernel for a bf16 collective, as a profiler names it
// ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"); NCCL runs an
// all-to-all as grouped sends and receives, in its SendRecv kernel.
std::string_view CollectiveKernelName(CommKind kind);
// What torch writes around a coalesced collective's launch (`_coalescing_manager` over ops of
// one kind): the c10d operator ("c10d::reduce_scatter_tensor_coalesced_") and ProcessGroupNCCL's
// profiling range ("nccl:reduce_scatter_tensor_coalesced"); all-gather's otherwise.
struct CoalescedNames {
  std::string_view op;
  std::string_view range;
};
CoalescedNames CoalescedCollectiveNames(CommKind kind);
// The `Collective name` torch records for it ("allreduce", "_reduce_scatter_base",
// "all_to_allv" for all_to_all_single with split sizes, as Megatron's token dispatcher calls it).
std::string_view CollectiveName(CommKind kind);

}  // namespace bubblescope::sim
