#include "simulator/parallel_groups.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace bubblescope::sim {

int32_t GlobalRank(const Config& config, int32_t pipeline_rank, Replica replica) {
  const ModelParallel& parallel = config.parallel;
  return replica.tensor + parallel.tensor * (replica.data + parallel.data * pipeline_rank);
}

RankGroups GroupsOf(const Config& config, int32_t pipeline_rank, Replica replica) {
  const ModelParallel& parallel = config.parallel;
  const int32_t p = config.stages;
  const int32_t world = parallel.replicas() * p;
  RankGroups groups;
  groups.world = ProcessGroup{"0", {}, "default_pg"};
  for (int32_t r = 0; r < world; ++r) groups.world.ranks.push_back(r);
  // torch numbers groups in creation order: data (one per tensor rank and pipeline rank), then
  // tensor (one per data rank and pipeline rank), then pipeline (one per replica).
  const int32_t data_index = replica.tensor + parallel.tensor * pipeline_rank;
  groups.data = ProcessGroup{std::to_string(1 + data_index), {}, "DATA_PARALLEL_GROUP"};
  for (int32_t d = 0; d < parallel.data; ++d) {
    groups.data.ranks.push_back(GlobalRank(config, pipeline_rank, Replica{replica.tensor, d}));
  }
  const int32_t tensor_index = replica.data + parallel.data * pipeline_rank;
  groups.tensor = ProcessGroup{std::to_string(1 + parallel.tensor * p + tensor_index), {},
                               "TENSOR_MODEL_PARALLEL_GROUP"};
  for (int32_t t = 0; t < parallel.tensor; ++t) {
    groups.tensor.ranks.push_back(GlobalRank(config, pipeline_rank, Replica{t, replica.data}));
  }
  const int32_t pipeline_index = replica.tensor + parallel.tensor * replica.data;
  groups.pipeline = ProcessGroup{std::to_string(1 + 2 * parallel.replicas() * p + pipeline_index),
                                 {}, "PIPELINE_MODEL_PARALLEL_GROUP"};
  for (int32_t r = 0; r < p; ++r) groups.pipeline.ranks.push_back(GlobalRank(config, r, replica));
  return groups;
}

KernelShares SplitForTensorParallel(const ModelParallel& parallel, TimeNs share, OpType type,
                                    bool last_of_op) {
  KernelShares shares{.before = 0, .compute = share, .after = 0, .async = false};
  if (parallel.tensor <= 1 || parallel.tensor_share <= 0.0) return shares;
  // At least 1 ns of compute stays with the kernel.
  const TimeNs comm = std::min<TimeNs>(
      share - 1, static_cast<TimeNs>(std::llround(static_cast<double>(share) *
                                                  parallel.tensor_share)));
  if (comm <= 0) return shares;
  if (parallel.overlap && type != OpType::kForward && !last_of_op) {
    shares.after = comm;  // under the next kernel: the kernel keeps its whole share
    shares.async = true;
    return shares;
  }
  shares.compute = share - comm;
  if (parallel.sequence_parallel) {
    shares.before = comm / 2;
    shares.after = comm - comm / 2;
  } else {
    shares.after = comm;
  }
  return shares;
}

std::string_view CollectiveKernelName(CommKind kind) {
  switch (kind) {
    case CommKind::kReduceScatter:
      return "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    case CommKind::kAllGather:
      return "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    default:
      return "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  }
}

std::string_view CollectiveName(CommKind kind) {
  switch (kind) {
    case CommKind::kReduceScatter:
      return "_reduce_scatter_base";
    case CommKind::kAllGather:
      return "_allgather_base";
    default:
      return "allreduce";
  }
}

}  // namespace bubblescope::sim
