#include "schedule_engine/parallel_groups.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace bubblescope::sim {
namespace {

// A layout of the ranks as Megatron-Core's RankGenerator sees it: four dimensions, innermost
// first (dense: tp, cp, dp, pp; expert: tp, ep, dp, pp); a rank's global number is its
// coordinates read as a mixed-radix number.
using Dims = std::array<int32_t, 4>;

int32_t Flatten(const Dims& sizes, const Dims& coords) {
  int32_t rank = 0;
  for (size_t d = sizes.size(); d-- > 0;) rank = rank * sizes[d] + coords[d];
  return rank;
}

// The group holding `coords` along the dimensions `along` marks: its ranks, ascending (the order
// Megatron-Core lists them in), and its index among the groups of its kind, which Megatron-Core
// creates in the mixed-radix order of the other dimensions.
struct GridGroup {
  std::vector<int32_t> ranks;
  int32_t index = 0;
  int32_t count = 1;  // groups of this kind
};

GridGroup GroupAlong(const Dims& sizes, const Dims& coords, const std::array<bool, 4>& along) {
  GridGroup group;
  int32_t members = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (along[d]) {
      members *= sizes[d];
    } else {
      group.index = group.index * sizes[d] + coords[d];
      group.count *= sizes[d];
    }
  }
  for (int32_t member = 0; member < members; ++member) {
    Dims at = coords;
    int32_t rest = member;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (!along[d]) continue;
      at[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    group.ranks.push_back(Flatten(sizes, at));
  }
  std::sort(group.ranks.begin(), group.ranks.end());
  return group;
}

struct Layout {
  Dims dense_sizes;
  Dims dense;
  Dims expert_sizes;
  Dims expert;
};

Layout LayoutOf(const Config& config, int32_t pipeline_rank, Replica replica) {
  const ModelParallel& parallel = config.parallel;
  Layout layout;
  layout.dense_sizes = {parallel.tensor, parallel.context, parallel.data, config.stages};
  layout.dense = {replica.tensor, replica.context, replica.data, pipeline_rank};
  // The expert layer's data-parallel ranks are what remains of context x data.
  const int32_t spread = replica.context + parallel.context * replica.data;
  layout.expert_sizes = {parallel.tensor, parallel.expert,
                         parallel.context * parallel.data / parallel.expert, config.stages};
  layout.expert = {replica.tensor, spread % parallel.expert, spread / parallel.expert,
                   pipeline_rank};
  return layout;
}

}  // namespace

int32_t GlobalRank(const Config& config, int32_t pipeline_rank, Replica replica) {
  const Layout layout = LayoutOf(config, pipeline_rank, replica);
  return Flatten(layout.dense_sizes, layout.dense);
}

int32_t RingNeighbour(const Config& config, int32_t pipeline_rank, Replica replica, int32_t step) {
  const int32_t size = config.parallel.context;
  replica.context = ((replica.context + step) % size + size) % size;
  return GlobalRank(config, pipeline_rank, replica);
}

RankGroups GroupsOf(const Config& config, int32_t pipeline_rank, Replica replica) {
  const Layout layout = LayoutOf(config, pipeline_rank, replica);
  RankGroups groups;
  const int32_t world =
      layout.dense_sizes[0] * layout.dense_sizes[1] * layout.dense_sizes[2] * layout.dense_sizes[3];
  groups.world = ProcessGroup{"0", {}, "default_pg"};
  for (int32_t r = 0; r < world; ++r) groups.world.ranks.push_back(r);
  // Megatron-Core's creation order; each kind creates all of its groups (singletons too) on
  // every rank, so a group's number counts every group of the kinds before it.
  struct Kind {
    ProcessGroup* out;
    const char* description;
    bool expert_layout;
    std::array<bool, 4> along;
  };
  const std::array<Kind, 5> kinds = {{
      {&groups.data, "DATA_PARALLEL_GROUP_WITH_CP", false, {false, true, true, false}},
      {&groups.context, "CONTEXT_PARALLEL_GROUP", false, {false, true, false, false}},
      {&groups.tensor, "TENSOR_MODEL_PARALLEL_GROUP", false, {true, false, false, false}},
      {&groups.pipeline, "PIPELINE_MODEL_PARALLEL_GROUP", false, {false, false, false, true}},
      {&groups.expert, "EXPERT_MODEL_PARALLEL_GROUP", true, {false, true, false, false}},
  }};
  int32_t created = 1;  // the default group
  for (const Kind& kind : kinds) {
    GridGroup group = kind.expert_layout
                          ? GroupAlong(layout.expert_sizes, layout.expert, kind.along)
                          : GroupAlong(layout.dense_sizes, layout.dense, kind.along);
    *kind.out = ProcessGroup{std::to_string(created + group.index), std::move(group.ranks),
                             kind.description};
    created += group.count;
  }
  return groups;
}

KernelShares SplitKernel(const ModelParallel& parallel, TimeNs share, OpType type, int32_t kernel,
                         int32_t kernels_per_op) {
  KernelShares shares{.compute = share};
  const bool last_of_op = kernel + 1 == kernels_per_op;
  // Each kind of communication takes its share of the kernel's time, at least 1 ns of compute
  // staying with the kernel.
  const auto take = [&shares](double fraction) -> TimeNs {
    const TimeNs comm = std::min<TimeNs>(
        shares.compute - 1,
        static_cast<TimeNs>(std::llround(static_cast<double>(shares.compute) * fraction)));
    return std::max<TimeNs>(comm, 0);
  };
  if (parallel.tensor > 1) {
    const TimeNs comm = take(parallel.tensor_share);
    if (comm > 0 && parallel.overlap && type != OpType::kForward && !last_of_op) {
      shares.after = comm;  // under the next kernel: the kernel keeps its whole share
      shares.async = true;
    } else if (comm > 0) {
      shares.compute -= comm;
      shares.before = parallel.sequence_parallel ? comm / 2 : 0;
      shares.after = comm - shares.before;
    }
  }
  if (parallel.expert > 1 && last_of_op) {
    const TimeNs comm = take(parallel.expert_share);
    shares.compute -= comm;
    shares.dispatch = comm / 2;
    shares.combine = comm - shares.dispatch;
  }
  if (parallel.context > 1 && kernel == 0) shares.ring_steps = parallel.context;
  return shares;
}

int32_t RingExchanges(const ModelParallel& parallel, OpType type) {
  if (parallel.context <= 1) return 0;
  return type == OpType::kForward ? parallel.context - 1 : parallel.context;
}

std::string_view CollectiveKernelName(CommKind kind) {
  switch (kind) {
    case CommKind::kReduceScatter:
      return "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    case CommKind::kAllGather:
      return "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    case CommKind::kAllToAll:
    case CommKind::kSendRecv:
    case CommKind::kSend:
    case CommKind::kRecv:
      return "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
    default:
      return "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  }
}

CoalescedNames CoalescedCollectiveNames(CommKind kind) {
  if (kind == CommKind::kReduceScatter) {
    return {"c10d::reduce_scatter_tensor_coalesced_", "nccl:reduce_scatter_tensor_coalesced"};
  }
  return {"c10d::allgather_into_tensor_coalesced_", "nccl:all_gather_into_tensor_coalesced"};
}

std::string_view CollectiveName(CommKind kind) {
  switch (kind) {
    case CommKind::kReduceScatter:
      return "_reduce_scatter_base";
    case CommKind::kAllGather:
      return "_allgather_base";
    case CommKind::kAllToAll:
      return "all_to_allv";
    case CommKind::kSend:
      return "send";
    case CommKind::kRecv:
      return "recv";
    case CommKind::kSendRecv:
      return "coalesced";
    default:
      return "allreduce";
  }
}

}  // namespace bubblescope::sim
