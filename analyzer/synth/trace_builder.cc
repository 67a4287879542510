#include "synth/trace_builder.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bubblescope/rank_finish.h"
#include "schedule_engine/memory.h"
#include "schedule_engine/parallel_groups.h"
#include "synth/rank_builder.h"

namespace bubblescope::sim {
namespace {

// Runtime calls and GEMM names per vendor (index: Vendor; the launch call's in rank_builder.h).
constexpr std::array<std::string_view, 2> kSyncNames = {"cudaDeviceSynchronize",
                                                        "hipDeviceSynchronize"};
constexpr std::string_view kSendRecvKernel =
    "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
// cuBLAS GEMM names (LaunchStyle::kTorch), one per phase as the operand layouts differ; none
// says which phase it is.
constexpr std::array<std::array<std::string_view, 3>, 2> kGemmKernels = {
    {{"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn",
      "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn",
      "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_nt"},
     {"Cijk_Alik_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_LDSB1_GRVW8_ISA90a_WG32_8_1",
      "Cijk_Ailk_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_LDSB1_GRVW8_ISA90a_WG32_8_1",
      "Cijk_Ailk_Bjlk_BBS_BH_MT128x64x32_MI32x32x8x1_SN_LDSB1_GRVW8_ISA90a_WG32_8_1"}}};
constexpr std::string_view kOptimizerKernel = "void multi_tensor_apply_kernel<adam>(...)";
constexpr std::string_view kAllReduceKernel =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
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

}  // namespace

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
        annotation.name =
            rank_.names.Intern(absl::StrCat(CpuAnnotationWord(op.op.type), " ", op.op.microbatch));
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
      annotation.start = Recorded(op.cpu_start);
      annotation.end = Recorded(op.cpu_end);
      annotation.scope = AnnotationScope::kCpu;
      annotation.thread_or_stream = thread;
      rank_.annotations.push_back(annotation);
    }
    if (on_gpu) {
      // Over the op's kernels on the compute stream.
      annotation.start = Recorded(op.start);
      annotation.end = Recorded(op.end);
      annotation.scope = AnnotationScope::kGpu;
      annotation.device = 0;
      annotation.thread_or_stream = kComputeStreamId;
      rank_.annotations.push_back(annotation);
    }
  }
}

void RankBuilder::SetIdentity() {
  rank_.rank = global_;
  rank_.world_size = config_.stages * config_.parallel.replicas();
  if (config_.ranks_per_host > 0 && config_.write_host_names) {
    rank_.host = absl::StrCat(kSimulatedHostName, "-", global_ / config_.ranks_per_host);
  }
  rank_.pid = ProcessId(global_);
  rank_.backend = "nccl";
  rank_.devices.push_back(config_.vendor == Vendor::kRocm
                              ? DeviceInfo{0, "AMD Instinct MI250X", int64_t{64} << 30, 9, 0, 110}
                              : DeviceInfo{0, "Simulated GPU", int64_t{80} << 30, 9, 0, 132});
}

RankBuilder::Threads RankBuilder::MakeThreads() const {
  Threads threads;
  threads.cpu.kind = TimelineKind::kCpuThread;
  threads.cpu.pid = rank_.pid;
  threads.cpu.id = rank_.pid;
  threads.autograd.kind = TimelineKind::kCpuThread;
  threads.autograd.pid = rank_.pid;
  threads.autograd.id = AutogradThreadId(global_);
  threads.streams.resize(kStreamRoleCount);
  for (size_t role = 0; role < threads.streams.size(); ++role) {
    threads.streams[role].kind = TimelineKind::kGpuStream;
    threads.streams[role].device = 0;
    threads.streams[role].id = StreamId(static_cast<StreamRole>(role));
  }
  return threads;
}

void RankBuilder::AddKernel(const KernelRecord& kernel, const SharedNames& names,
                            Threads* threads) {
  const bool batched = config_.p2p == P2pStyle::kBatched;
  const bool p2p = kernel.role == KernelRole::kSend || kernel.role == KernelRole::kRecv;
  const bool send = kernel.role == KernelRole::kSend;
  Timeline& cpu = threads->cpu;
  // torch's autograd thread launches the backward's compute and its in-stage communication.
  const bool backward_work =
      config_.launches == LaunchStyle::kTorch &&
      (kernel.role == KernelRole::kCompute || InStageRole(kernel.role)) &&
      record_.ops[static_cast<size_t>(kernel.op)].op.type != OpType::kForward;
  Timeline& thread = backward_work ? threads->autograd : cpu;
  if (kernel.role == KernelRole::kContextParallel) {
    AddRingExchange(kernel, &thread, &threads->streams);
    return;
  }
  if (batched && p2p) {
    AddQueuedTransfer(send, kernel.post_start, kernel.post_end,
                      TransferCommIndex(send, Global(kernel.peer_rank), kernel.bytes,
                                        PipelineGroup(), config_.stages),
                      &cpu);
    // The batch is one kernel: its first transfer's launch and times stand for all of them.
    if (kernel.batch_follower) return;
  }
  Interval launch;
  launch.start = Recorded(kernel.launch_start);
  launch.end = Recorded(kernel.launch_end);
  launch.correlation = kernel.correlation;
  launch.name = names.launch;
  launch.kind = IntervalKind::kRuntime;

  Interval device;
  device.start = Recorded(kernel.start);
  device.end = Recorded(kernel.end);
  device.correlation = kernel.correlation;
  device.kind = IntervalKind::kCommKernel;
  if (batched && p2p) {
    // The batch's kernel names no direction, peer or size: only the process group it ran on.
    device.name = names.send_recv;
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
    device.name = names.send_recv;
    device.comm = TransferCommIndex(send, Global(kernel.peer_rank), kernel.bytes, PipelineGroup(),
                                    config_.stages);
  } else if (kernel.role == KernelRole::kAllReduce) {
    device.name = rank_.names.Intern(kAllReduceKernel);
    device.comm = AllReduceCommIndex(kernel);
  } else if (kernel.coalesced) {
    device.name = rank_.names.Intern(CollectiveKernelName(kernel.collective));
    device.comm = AddCoalescedCollective(kernel, &cpu);
  } else if (InStageRole(kernel.role) || kernel.role == KernelRole::kDataParallel) {
    device.name = rank_.names.Intern(CollectiveKernelName(kernel.collective));
    device.comm = CollectiveCommIndex(kernel);
  } else {
    device.kind = IntervalKind::kComputeKernel;
    device.name = ComputeKernelName(kernel);
  }
  thread.intervals.push_back(launch);  // after its c10d operator, which encloses it
  threads->streams[static_cast<size_t>(kernel.stream)].intervals.push_back(device);
}

void RankBuilder::AddSteps(Timeline* cpu) {
  const NameId sync_name = rank_.names.Intern(kSyncNames[static_cast<size_t>(config_.vendor)]);
  for (const StepRecord& step : record_.steps) {
    Interval sync;
    sync.start = Recorded(step.sync_start);
    sync.end = Recorded(step.end);
    sync.correlation = step.sync_correlation;
    sync.name = sync_name;
    sync.kind = IntervalKind::kRuntime;
    cpu->intervals.push_back(sync);
    rank_.steps.push_back(ProfilerStep{step.iteration, Recorded(step.start), Recorded(step.end)});
  }
}

void RankBuilder::PlaceTimelines(Threads threads) {
  // Intervals in the model's order, as every reader leaves them. The timelines keep the
  // simulator's own order (the main thread first), which the sets it writes are laid out by.
  SortIntervals(&threads.cpu.intervals);
  rank_.timelines.push_back(std::move(threads.cpu));
  if (!threads.autograd.intervals.empty()) {
    SortIntervals(&threads.autograd.intervals);
    rank_.timelines.push_back(std::move(threads.autograd));
  }
  for (Timeline& stream : threads.streams) {
    if (stream.intervals.empty()) continue;
    SortIntervals(&stream.intervals);
    rank_.timelines.push_back(std::move(stream));
  }
}

Rank RankBuilder::Build() {
  SetIdentity();
  kernel_names_.assign(
      3 * static_cast<size_t>(config_.stages) * static_cast<size_t>(config_.virtual_stages),
      kNoName);
  Threads threads = MakeThreads();
  const SharedNames names{
      .launch = rank_.names.Intern(kLaunchNames[static_cast<size_t>(config_.vendor)]),
      .send_recv = rank_.names.Intern(kSendRecvKernel)};
  for (const KernelRecord& kernel : record_.kernels) AddKernel(kernel, names, &threads);
  AddSteps(&threads.cpu);
  PlaceTimelines(std::move(threads));
  AddAnnotations();
  SortAnnotations(&rank_.annotations);
  for (MemorySample sample : MemorySamples(config_, record_)) {
    sample.time = Recorded(sample.time);
    rank_.memory.push_back(sample);
  }
  if (!config_.describe_groups) {
    for (ProcessGroup& group : rank_.process_groups) group.description.clear();
  }
  return std::move(rank_);
}

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
