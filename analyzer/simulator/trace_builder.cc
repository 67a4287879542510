#include "simulator/trace_builder.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "simulator/memory.h"
#include "simulator/parallel_groups.h"

namespace bubblescope::sim {
namespace {

// Runtime calls and GEMM names per vendor (index: Vendor).
constexpr std::array<std::string_view, 2> kLaunchNames = {"cudaLaunchKernel", "hipLaunchKernel"};
constexpr std::array<std::string_view, 2> kSyncNames = {"cudaDeviceSynchronize",
                                                        "hipDeviceSynchronize"};
constexpr std::string_view kSendRecvKernel =
    "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
// cuBLAS GEMM names (LaunchStyle::kTorch), one per phase as the operand layouts differ; none
// says which phase it is.
constexpr std::array<std::array<std::string_view, 3>, 2> kGemmKernels = {{
    {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn",
     "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn",
     "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_nt"},
    {"Cijk_Alik_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_LDSB1_GRVW8_ISA90a_WG32_8_1",
     "Cijk_Ailk_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_LDSB1_GRVW8_ISA90a_WG32_8_1",
     "Cijk_Ailk_Bjlk_BBS_BH_MT128x64x32_MI32x32x8x1_SN_LDSB1_GRVW8_ISA90a_WG32_8_1"}}};
constexpr std::string_view kOptimizerKernel = "void multi_tensor_apply_kernel<adam>(...)";
constexpr std::string_view kAllReduceKernel =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
constexpr std::string_view kAllRanksGroup = "pp_all";
constexpr std::string_view kParamCommsName = "record_param_comms";
constexpr std::string_view kCoalescedName = "nccl:coalesced";

const char* OpWord(OpType type) {
  switch (type) {
    case OpType::kForward:
      return "forward";
    case OpType::kBackward:
      return "backward";
    case OpType::kWeightGrad:
      return "weight_grad";
  }
  return "unknown";
}

const char* CpuAnnotationWord(OpType type) {
  switch (type) {
    case OpType::kForward:
      return "Forward";
    case OpType::kBackward:
      return "Backward";
    case OpType::kWeightGrad:
      return "WeightGrad";
  }
  return "Unknown";
}

void SortTimeline(std::vector<Interval>* intervals) {
  std::stable_sort(intervals->begin(), intervals->end(), [](const Interval& a, const Interval& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
}

class RankBuilder {
 public:
  // The rank running `record` in `replica` of the pipeline (ModelParallel).
  RankBuilder(const Config& config, const RankRecord& record, Replica replica)
      : config_(config),
        record_(record),
        replica_(replica),
        global_(GlobalRank(config, record.rank, replica)),
        offset_(config.clock_offsets_ns.empty()
                    ? 0
                    : config.clock_offsets_ns[static_cast<size_t>(record.rank)]) {
    if (config.parallel.replicas() > 1) groups_ = GroupsOf(config, record.rank, replica);
  }

  Rank Build();

 private:
  NameId ComputeKernelName(const KernelRecord& kernel);
  // A send's or recv's metadata as torch records it: peer, size and process group.
  uint32_t TransferCommIndex(bool send, int32_t peer, int64_t bytes, uint32_t group,
                             int32_t group_size);
  uint32_t AllReduceCommIndex(const KernelRecord& kernel);
  uint32_t AllRanksGroup();
  // The pipeline's process group: PIPELINE_MODEL_PARALLEL_GROUP with replicas, else "pp_all".
  uint32_t PipelineGroup() { return groups_ ? GroupIndex(groups_->pipeline) : AllRanksGroup(); }
  // With replicas (ModelParallel): the index of one of the rank's groups, added on first use.
  uint32_t GroupIndex(const ProcessGroup& group);
  uint32_t CollectiveCommIndex(const KernelRecord& kernel);
  // The global rank of pipeline rank `pipeline_rank` in this rank's replica.
  int32_t Global(int32_t pipeline_rank) const {
    return GlobalRank(config_, pipeline_rank, replica_);
  }
  // The c10d::send / c10d::recv_ operator over [start, end) (it names no peer).
  void AddC10dOp(bool send, TimeNs start, TimeNs end, Timeline* cpu);
  // A transfer batch_isend_irecv queues: its c10d operator, and inside it record_param_comms
  // with the transfer's metadata (`comm`).
  void AddQueuedTransfer(bool send, TimeNs start, TimeNs end, uint32_t comm, Timeline* cpu);
  // The `nccl:coalesced` range ProcessGroupNCCL::endCoalescing launches a batch's kernel in, and
  // (AnnotationStyle::kPpMirrored) Kineto's copy over the kernel on its stream.
  void AddCoalescedRange(const Interval& launch, const Interval& kernel, int64_t thread,
                         int64_t stream);
  // One KV exchange of ring attention (KernelRole::kContextParallel), written as Transformer
  // Engine issues it: a send to the next CP rank and a receive from the previous one in a
  // forward, the other way round in a backward, the even CP ranks sending first; both in one
  // batch_isend_irecv, or each an isend / irecv with its own kernel on the stream of its pair's
  // communicator.
  void AddRingExchange(const KernelRecord& kernel, Timeline* thread,
                       std::vector<Timeline>* streams);
  void AddAnnotations();

  const Config& config_;
  const RankRecord& record_;
  const Replica replica_;
  const int32_t global_;
  const TimeNs offset_;
  std::optional<RankGroups> groups_;  // with replicas only
  Rank rank_;
  std::vector<NameId> kernel_names_;     // by virtual stage * 3 + op type
  uint32_t all_ranks_group_ = kNoIndex;  // process group of the iteration-end all-reduce
};

NameId RankBuilder::ComputeKernelName(const KernelRecord& kernel) {
  if (kernel.role == KernelRole::kOptimizer) return rank_.names.Intern(kOptimizerKernel);
  const Op& op = record_.ops[static_cast<size_t>(kernel.op)].op;
  if (config_.launches == LaunchStyle::kTorch) {
    return rank_.names.Intern(
        kGemmKernels[static_cast<size_t>(config_.vendor)][static_cast<size_t>(op.type)]);
  }
  size_t virtual_stage = static_cast<size_t>(op.chunk) * static_cast<size_t>(config_.stages) +
                         static_cast<size_t>(record_.stage);
  size_t slot = virtual_stage * 3 + static_cast<size_t>(op.type);
  if (kernel_names_[slot] == kNoName) {
    kernel_names_[slot] = rank_.names.Intern(
        absl::StrCat("void pp_stage", virtual_stage, "_", OpWord(op.type), "_kernel<bf16>(...)"));
  }
  return kernel_names_[slot];
}

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

void RankBuilder::AddC10dOp(bool send, TimeNs start, TimeNs end, Timeline* cpu) {
  Interval op;
  op.start = start + offset_;
  op.end = end + offset_;
  op.name = rank_.names.Intern(send ? "c10d::send" : "c10d::recv_");
  op.kind = IntervalKind::kCpuCommOp;
  op.comm = static_cast<uint32_t>(rank_.comms.size());
  rank_.comms.push_back(CommInfo{.kind = send ? CommKind::kSend : CommKind::kRecv});
  cpu->intervals.push_back(op);
}

void RankBuilder::AddQueuedTransfer(bool send, TimeNs start, TimeNs end, uint32_t comm,
                                    Timeline* cpu) {
  AddC10dOp(send, start, end, cpu);
  Interval params = cpu->intervals.back();
  params.name = rank_.names.Intern(kParamCommsName);
  params.comm = comm;
  cpu->intervals.push_back(params);
}

void RankBuilder::AddCoalescedRange(const Interval& launch, const Interval& kernel,
                                    int64_t thread, int64_t stream) {
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
  const bool forward =
      record_.ops[static_cast<size_t>(kernel.op)].op.type == OpType::kForward;
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
  device.start = kernel.start + offset_;
  device.end = kernel.end + offset_;
  device.kind = IntervalKind::kCommKernel;
  device.name = rank_.names.Intern(CollectiveKernelName(CommKind::kSendRecv));
  Interval launch;
  launch.kind = IntervalKind::kRuntime;
  launch.name = rank_.names.Intern(kLaunchNames[static_cast<size_t>(config_.vendor)]);
  const TimeNs gap = config_.launch_gap_ns;
  if (RingExchangeBatched(config_.parallel)) {
    for (size_t t = 0; t < transfers.size(); ++t) {
      const TimeNs start = kernel.post_start + static_cast<TimeNs>(t) * gap;
      AddQueuedTransfer(transfers[t].send, start, start + gap,
                        TransferCommIndex(transfers[t].send, transfers[t].peer, kernel.bytes,
                                          group, group_size),
                        thread);
    }
    launch.start = kernel.launch_start + offset_;
    launch.end = kernel.launch_end + offset_;
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
    launch.start = issued[t].first + offset_;
    launch.end = launch.start + gap;
    launch.correlation = issued[t].second;
    AddC10dOp(transfers[t].send, issued[t].first, issued[t].first + gap, thread);
    thread->intervals.push_back(launch);
    device.correlation = issued[t].second;
    device.comm = TransferCommIndex(transfers[t].send, transfers[t].peer, kernel.bytes, group,
                                    group_size);
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

void RankBuilder::AddAnnotations() {
  if (config_.annotations == AnnotationStyle::kNone) return;
  const int64_t thread = ProcessId(global_);
  for (const OpRecord& op : record_.ops) {
    const std::string letter(1, OpLetter(op.op.type));
    Annotation annotation;
    switch (config_.annotations) {
      case AnnotationStyle::kPpGpu:
      case AnnotationStyle::kPpMirrored:
        annotation.name = rank_.names.Intern(absl::StrCat(
            "PP:", op.op.chunk * config_.stages + record_.stage, letter, op.op.microbatch));
        break;
      case AnnotationStyle::kPpCpu:
        annotation.name = rank_.names.Intern(
            absl::StrCat(CpuAnnotationWord(op.op.type), " ", op.op.microbatch));
        break;
      case AnnotationStyle::kPpShortCpu:
        annotation.name = rank_.names.Intern(absl::StrCat("PP:", letter, op.op.microbatch));
        break;
      case AnnotationStyle::kNone:
        return;
    }
    const bool on_gpu = config_.annotations == AnnotationStyle::kPpGpu ||
                        config_.annotations == AnnotationStyle::kPpMirrored;
    const bool on_cpu = config_.annotations != AnnotationStyle::kPpGpu;
    if (on_cpu) {
      // Over the op's launches on the CPU thread.
      annotation.start = op.cpu_start + offset_;
      annotation.end = op.cpu_end + offset_;
      annotation.scope = AnnotationScope::kCpu;
      annotation.thread_or_stream = thread;
      rank_.annotations.push_back(annotation);
    }
    if (on_gpu) {
      // Over the op's kernels on the compute stream.
      annotation.start = op.start + offset_;
      annotation.end = op.end + offset_;
      annotation.scope = AnnotationScope::kGpu;
      annotation.device = 0;
      annotation.thread_or_stream = kComputeStreamId;
      rank_.annotations.push_back(annotation);
    }
  }
}

Rank RankBuilder::Build() {
  rank_.rank = global_;
  rank_.world_size = config_.stages * config_.parallel.replicas();
  if (config_.ranks_per_host > 0) {
    rank_.host = absl::StrCat("sim-host-", global_ / config_.ranks_per_host);
  }
  rank_.pid = ProcessId(global_);
  rank_.backend = "nccl";
  rank_.devices.push_back(
      config_.vendor == Vendor::kRocm
          ? DeviceInfo{0, "AMD Instinct MI250X", int64_t{64} << 30, 9, 0, 110}
          : DeviceInfo{0, "Simulated GPU", int64_t{80} << 30, 9, 0, 132});
  kernel_names_.assign(
      3 * static_cast<size_t>(config_.stages) * static_cast<size_t>(config_.virtual_stages),
      kNoName);

  Timeline cpu;
  cpu.kind = TimelineKind::kCpuThread;
  cpu.pid = rank_.pid;
  cpu.id = rank_.pid;
  // LaunchStyle::kTorch: torch's autograd engine thread, which launches the backward compute.
  Timeline autograd;
  autograd.kind = TimelineKind::kCpuThread;
  autograd.pid = rank_.pid;
  autograd.id = AutogradThreadId(global_);
  std::vector<Timeline> streams(kStreamRoleCount);
  for (size_t role = 0; role < streams.size(); ++role) {
    streams[role].kind = TimelineKind::kGpuStream;
    streams[role].device = 0;
    streams[role].id = StreamId(static_cast<StreamRole>(role));
  }
  const NameId launch_name =
      rank_.names.Intern(kLaunchNames[static_cast<size_t>(config_.vendor)]);
  const NameId comm_name = rank_.names.Intern(kSendRecvKernel);
  const bool batched = config_.p2p == P2pStyle::kBatched;
  for (const KernelRecord& kernel : record_.kernels) {
    const bool p2p = kernel.role == KernelRole::kSend || kernel.role == KernelRole::kRecv;
    const bool send = kernel.role == KernelRole::kSend;
    // torch's autograd thread launches the backward's compute and its in-stage communication.
    const bool backward_work =
        config_.launches == LaunchStyle::kTorch &&
        (kernel.role == KernelRole::kCompute || InStageRole(kernel.role)) &&
        record_.ops[static_cast<size_t>(kernel.op)].op.type != OpType::kForward;
    Timeline& thread = backward_work ? autograd : cpu;
    if (kernel.role == KernelRole::kContextParallel) {
      AddRingExchange(kernel, &thread, &streams);
      continue;
    }
    if (batched && p2p) {
      AddQueuedTransfer(send, kernel.post_start, kernel.post_end,
                        TransferCommIndex(send, Global(kernel.peer_rank), kernel.bytes,
                                          PipelineGroup(), config_.stages),
                        &cpu);
      // The batch is one kernel: its first transfer's launch and times stand for all of them.
      if (kernel.batch_follower) continue;
    }
    Interval launch;
    launch.start = kernel.launch_start + offset_;
    launch.end = kernel.launch_end + offset_;
    launch.correlation = kernel.correlation;
    launch.name = launch_name;
    launch.kind = IntervalKind::kRuntime;

    Interval device;
    device.start = kernel.start + offset_;
    device.end = kernel.end + offset_;
    device.correlation = kernel.correlation;
    device.kind = IntervalKind::kCommKernel;
    if (batched && p2p) {
      // The batch's kernel names no direction, peer or size: only the process group it ran on.
      device.name = comm_name;
      device.comm = static_cast<uint32_t>(rank_.comms.size());
      rank_.comms.push_back(CommInfo{.group_size = config_.stages,
                                     .process_group = PipelineGroup(),
                                     .collective = rank_.names.Intern("coalesced"),
                                     .kind = CommKind::kSendRecv});
      AddCoalescedRange(launch, device, cpu.id, StreamId(kernel.stream));
    } else if (p2p) {
      // PyTorch launches each p2p kernel inside its c10d operator; the operator (which records
      // no peer) is what tells a send from a receive when the kernel carries no NCCL args.
      AddC10dOp(send, kernel.launch_start, kernel.launch_end, &cpu);
      device.name = comm_name;
      device.comm = TransferCommIndex(send, Global(kernel.peer_rank), kernel.bytes,
                                      PipelineGroup(), config_.stages);
    } else if (kernel.role == KernelRole::kAllReduce) {
      device.name = rank_.names.Intern(kAllReduceKernel);
      device.comm = AllReduceCommIndex(kernel);
    } else if (InStageRole(kernel.role) || kernel.role == KernelRole::kDataParallel) {
      device.name = rank_.names.Intern(CollectiveKernelName(kernel.collective));
      device.comm = CollectiveCommIndex(kernel);
    } else {
      device.kind = IntervalKind::kComputeKernel;
      device.name = ComputeKernelName(kernel);
    }
    thread.intervals.push_back(launch);  // after its c10d operator, which encloses it
    streams[static_cast<size_t>(kernel.stream)].intervals.push_back(device);
  }
  const NameId sync_name = rank_.names.Intern(kSyncNames[static_cast<size_t>(config_.vendor)]);
  for (const StepRecord& step : record_.steps) {
    Interval sync;
    sync.start = step.sync_start + offset_;
    sync.end = step.end + offset_;
    sync.correlation = step.sync_correlation;
    sync.name = sync_name;
    sync.kind = IntervalKind::kRuntime;
    cpu.intervals.push_back(sync);
    rank_.steps.push_back(ProfilerStep{step.iteration, step.start + offset_, step.end + offset_});
  }
  SortTimeline(&cpu.intervals);
  rank_.timelines.push_back(std::move(cpu));
  if (!autograd.intervals.empty()) {
    SortTimeline(&autograd.intervals);
    rank_.timelines.push_back(std::move(autograd));
  }
  for (Timeline& stream : streams) {
    if (stream.intervals.empty()) continue;
    SortTimeline(&stream.intervals);
    rank_.timelines.push_back(std::move(stream));
  }
  AddAnnotations();
  std::stable_sort(rank_.annotations.begin(), rank_.annotations.end(),
                   [](const Annotation& a, const Annotation& b) {
                     return a.start != b.start ? a.start < b.start : a.end > b.end;
                   });
  for (MemorySample sample : MemorySamples(config_, record_)) {
    sample.time += offset_;
    rank_.memory.push_back(sample);
  }
  return std::move(rank_);
}

}  // namespace

int64_t StreamId(StreamRole role) {
  switch (role) {
    case StreamRole::kCompute:
      return kComputeStreamId;
    case StreamRole::kSendNext:
      return 20;
    case StreamRole::kRecvPrev:
      return 24;
    case StreamRole::kSendPrev:
      return 28;
    case StreamRole::kRecvNext:
      return 32;
    case StreamRole::kCollective:
      return 36;
    case StreamRole::kBatchedP2p:
      return 40;
    case StreamRole::kTensorParallel:
      return 44;
    case StreamRole::kDataParallel:
      return 48;
    case StreamRole::kContextParallel:
      return 52;
    case StreamRole::kContextParallelPrev:
      return 56;
    case StreamRole::kExpertParallel:
      return 60;
  }
  return -1;
}

int64_t ProcessId(int32_t rank) { return 10000 + rank; }

int64_t AutogradThreadId(int32_t rank) { return 20000 + rank; }

Trace BuildTrace(const Config& config, const Records& records) {
  Trace trace;
  const ModelParallel& parallel = config.parallel;
  trace.ranks.reserve(records.ranks.size() * static_cast<size_t>(parallel.replicas()));
  for (const RankRecord& record : records.ranks) {
    for (int32_t data = 0; data < parallel.data; ++data) {
      for (int32_t tensor = 0; tensor < parallel.tensor; ++tensor) {
        for (int32_t context = 0; context < parallel.context; ++context) {
          trace.ranks.push_back(
              RankBuilder(config, record, Replica{tensor, context, data}).Build());
        }
      }
    }
  }
  std::sort(trace.ranks.begin(), trace.ranks.end(),
            [](const Rank& a, const Rank& b) { return a.rank < b.rank; });
  return trace;
}

}  // namespace bubblescope::sim
