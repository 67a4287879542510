// The communication of a simulated rank as torch records it (rank_builder.h).
#include <array>
#include <string>
#include <utility>

#include "synth/rank_builder.h"
#include "synth/trace_builder.h"

namespace bubblescope::sim {
namespace {

constexpr std::string_view kAllRanksGroup = "pp_all";
constexpr std::string_view kParamCommsName = "record_param_comms";
constexpr std::string_view kCoalescedName = "nccl:coalesced";

}  // namespace

// The group torch records is the one the transfer was issued on (for a pipeline hand-off the
// whole pipeline: Megatron's and torch pipelining's pp group, DeepSpeed's default group), not
// the pair, even though NCCL runs it on a two-rank communicator.
uint32_t RankBuilder::TransferCommIndex(bool send, int32_t peer, int64_t bytes, uint32_t group,
                                        int32_t group_size) {
  CommInfo info;
  info.bytes = bytes;
  info.peer = peer;
  info.group_size = group_size;
  info.process_group = group;
  info.collective = rank_.names.Intern(send ? "send" : "recv");
  info.dtype = rank_.names.Intern("BFloat16");
  info.kind = send ? CommKind::kSend : CommKind::kRecv;
  rank_.comms.push_back(info);
  return static_cast<uint32_t>(rank_.comms.size() - 1);
}

uint32_t RankBuilder::GroupIndex(const ProcessGroup& group) {
  for (size_t g = 0; g < rank_.process_groups.size(); ++g) {
    if (rank_.process_groups[g].name == group.name) return static_cast<uint32_t>(g);
  }
  rank_.process_groups.push_back(group);
  return static_cast<uint32_t>(rank_.process_groups.size() - 1);
}

// A tensor-, expert- or data-parallel collective as torch records it on an NCCL kernel.
uint32_t RankBuilder::CollectiveCommIndex(const KernelRecord& kernel) {
  const ProcessGroup& group = kernel.role == KernelRole::kTensorParallel   ? groups_->tensor
                              : kernel.role == KernelRole::kExpertParallel ? groups_->expert
                                                                           : groups_->data;
  CommInfo info;
  info.bytes = kernel.bytes;
  info.group_size = static_cast<int32_t>(group.ranks.size());
  info.process_group = GroupIndex(group);
  info.collective = rank_.names.Intern(CollectiveName(kernel.collective));
  info.dtype = rank_.names.Intern("BFloat16");
  info.kind = kernel.collective;
  rank_.comms.push_back(info);
  return static_cast<uint32_t>(rank_.comms.size() - 1);
}

uint32_t RankBuilder::AllRanksGroup() {
  if (all_ranks_group_ == kNoIndex) {
    ProcessGroup group{std::string(kAllRanksGroup), {}};
    for (int32_t r = 0; r < config_.stages; ++r) group.ranks.push_back(r);
    all_ranks_group_ = static_cast<uint32_t>(rank_.process_groups.size());
    rank_.process_groups.push_back(std::move(group));
  }
  return all_ranks_group_;
}

void RankBuilder::AddCpuCommOp(std::string_view name, CommKind kind, TimeNs start, TimeNs end,
                               Timeline* cpu) {
  Interval op;
  op.start = Recorded(start);
  op.end = Recorded(end);
  op.name = rank_.names.Intern(name);
  op.kind = IntervalKind::kCpuCommOp;
  op.comm = static_cast<uint32_t>(rank_.comms.size());
  rank_.comms.push_back(CommInfo{.kind = kind});
  cpu->intervals.push_back(op);
}

void RankBuilder::AddC10dOp(bool send, TimeNs start, TimeNs end, Timeline* cpu) {
  AddCpuCommOp(send ? "c10d::send" : "c10d::recv_", send ? CommKind::kSend : CommKind::kRecv, start,
               end, cpu);
}

uint32_t RankBuilder::AddCoalescedCollective(const KernelRecord& kernel, Timeline* cpu) {
  const CoalescedNames names = CoalescedCollectiveNames(kernel.collective);
  AddCpuCommOp(names.op, kernel.collective, kernel.launch_start, kernel.launch_end, cpu);
  Annotation range;
  range.name = rank_.names.Intern(names.range);
  range.start = Recorded(kernel.launch_start);
  range.end = Recorded(kernel.launch_end);
  range.scope = AnnotationScope::kCpu;
  range.thread_or_stream = cpu->id;
  rank_.annotations.push_back(range);
  rank_.comms.push_back(CommInfo{.kind = kernel.collective});
  return static_cast<uint32_t>(rank_.comms.size() - 1);
}

void RankBuilder::AddQueuedTransfer(bool send, TimeNs start, TimeNs end, uint32_t comm,
                                    Timeline* cpu) {
  AddC10dOp(send, start, end, cpu);
  Interval params = cpu->intervals.back();
  params.name = rank_.names.Intern(kParamCommsName);
  params.comm = comm;
  cpu->intervals.push_back(params);
}

void RankBuilder::AddCoalescedRange(const Interval& launch, const Interval& kernel, int64_t thread,
                                    int64_t stream) {
  Annotation coalesced;
  coalesced.name = rank_.names.Intern(kCoalescedName);
  coalesced.start = launch.start;
  coalesced.end = launch.end;
  coalesced.scope = AnnotationScope::kCpu;
  coalesced.thread_or_stream = thread;
  rank_.annotations.push_back(coalesced);
  if (config_.annotations == AnnotationStyle::kPpMirrored) {
    coalesced.start = kernel.start;
    coalesced.end = kernel.end;
    coalesced.scope = AnnotationScope::kGpu;
    coalesced.device = 0;
    coalesced.thread_or_stream = stream;
    rank_.annotations.push_back(coalesced);
  }
}

void RankBuilder::AddRingExchange(const KernelRecord& kernel, Timeline* thread,
                                  std::vector<Timeline>* streams) {
  const bool forward = record_.ops[static_cast<size_t>(kernel.op)].op.type == OpType::kForward;
  const int32_t send_peer = RingNeighbour(config_, record_.rank, replica_, forward ? 1 : -1);
  const int32_t recv_peer = RingNeighbour(config_, record_.rank, replica_, forward ? -1 : 1);
  const uint32_t group = GroupIndex(groups_->context);
  const auto group_size = static_cast<int32_t>(groups_->context.ranks.size());
  const bool send_first = replica_.context % 2 == 0;
  // Each transfer in issue order: whether it sends, its peer, and the stream of its pair's
  // communicator (the one to the next CP rank, or the one to the previous).
  struct Transfer {
    bool send;
    int32_t peer;
    StreamRole stream;
  };
  const StreamRole to_next = StreamRole::kContextParallel;
  const StreamRole to_prev = StreamRole::kContextParallelPrev;
  std::array<Transfer, 2> transfers = {Transfer{true, send_peer, forward ? to_next : to_prev},
                                       Transfer{false, recv_peer, forward ? to_prev : to_next}};
  if (!send_first) std::swap(transfers[0], transfers[1]);
  Interval device;
  device.start = Recorded(kernel.start);
  device.end = Recorded(kernel.end);
  device.kind = IntervalKind::kCommKernel;
  device.name = rank_.names.Intern(CollectiveKernelName(CommKind::kSendRecv));
  Interval launch;
  launch.kind = IntervalKind::kRuntime;
  launch.name = rank_.names.Intern(kLaunchNames[static_cast<size_t>(config_.vendor)]);
  const TimeNs gap = config_.launch_gap_ns;
  if (RingExchangeBatched(config_.parallel)) {
    for (size_t t = 0; t < transfers.size(); ++t) {
      const TimeNs start = kernel.post_start + static_cast<TimeNs>(t) * gap;
      AddQueuedTransfer(
          transfers[t].send, start, start + gap,
          TransferCommIndex(transfers[t].send, transfers[t].peer, kernel.bytes, group, group_size),
          thread);
    }
    launch.start = Recorded(kernel.launch_start);
    launch.end = Recorded(kernel.launch_end);
    launch.correlation = kernel.correlation;
    device.correlation = kernel.correlation;
    device.comm = static_cast<uint32_t>(rank_.comms.size());
    rank_.comms.push_back(CommInfo{.group_size = group_size,
                                   .process_group = group,
                                   .collective = rank_.names.Intern("coalesced"),
                                   .kind = CommKind::kSendRecv});
    // Next and previous are one rank: one communicator, one stream.
    AddCoalescedRange(launch, device, thread->id, StreamId(to_next));
    thread->intervals.push_back(launch);
    (*streams)[static_cast<size_t>(to_next)].intervals.push_back(device);
    return;
  }
  const std::array<std::pair<TimeNs, int64_t>, 2> issued = {
      std::pair{kernel.post_start, kernel.post_correlation},
      std::pair{kernel.launch_start, kernel.correlation}};
  for (size_t t = 0; t < transfers.size(); ++t) {
    // Each isend / irecv launches its own kernel inside its c10d operator.
    launch.start = Recorded(issued[t].first);
    launch.end = launch.start + gap;
    launch.correlation = issued[t].second;
    AddC10dOp(transfers[t].send, issued[t].first, issued[t].first + gap, thread);
    thread->intervals.push_back(launch);
    device.correlation = issued[t].second;
    device.comm =
        TransferCommIndex(transfers[t].send, transfers[t].peer, kernel.bytes, group, group_size);
    (*streams)[static_cast<size_t>(transfers[t].stream)].intervals.push_back(device);
  }
}

uint32_t RankBuilder::AllReduceCommIndex(const KernelRecord& kernel) {
  CommInfo info;
  info.bytes = kernel.bytes;
  info.group_size = groups_ ? static_cast<int32_t>(groups_->world.ranks.size()) : config_.stages;
  info.process_group = groups_ ? GroupIndex(groups_->world) : AllRanksGroup();
  info.collective = rank_.names.Intern("allreduce");
  info.dtype = rank_.names.Intern("Float");
  info.kind = CommKind::kAllReduce;
  rank_.comms.push_back(info);
  return static_cast<uint32_t>(rank_.comms.size() - 1);
}
}  // namespace bubblescope::sim
