#include "rank_simulator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace bubblescope::bench {
namespace {

// Nominal costs, in ns. GPU figures are those of a mid-sized transformer layer on one H100.
constexpr TimeNs kCpuNestOffset = 350;     // a nested op starts this long after its parent
constexpr TimeNs kCpuUnwind = 600;         // a parent ends this long after its child
constexpr TimeNs kCpuGap = 1500;           // between top-level CPU ops
constexpr TimeNs kLaunchCost = 4500;       // one cudaLaunchKernel / cudaMemcpyAsync call
constexpr TimeNs kLaunchLatency = 3000;    // runtime call end to earliest GPU start
constexpr TimeNs kDataLoader = 180000;     // host-side batch fetch at the start of a step
constexpr TimeNs kStepTail = 20000;        // after the step's final synchronisation
constexpr TimeNs kRecvMinimum = 6000;      // a receive whose data already arrived
constexpr TimeNs kSendFixed = 5000;        // NCCL p2p set-up
constexpr int64_t kLinkBytesPerUs = 50000;  // 50 GB/s between neighbouring stages
constexpr int64_t kActivationBytes = int64_t{4096} * 4096 * 2;  // one microbatch, BFloat16
constexpr int64_t kInputBytes = int64_t{4096} * 8;               // token ids
constexpr int64_t kMiB = int64_t{1} << 20;

constexpr std::string_view kSendRecvKernel = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
constexpr std::string_view kGemmKernel =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
    "segment_k_off_kernel__5x_cublas";

int32_t DeviceOf(int stage) { return stage % 8; }
int64_t PidOf(int stage) { return 4000 + stage; }

}  // namespace

SendCompletions::SendCompletions(int steps, int microbatches, int stages)
    : microbatches_(microbatches), stages_(stages) {
  size_t size = static_cast<size_t>(steps) * 2 * static_cast<size_t>(microbatches) *
                static_cast<size_t>(stages);
  ends_.assign(size, 0);
  known_.assign(size, false);
}

size_t SendCompletions::Index(int step, Pass pass, int microbatch, int sender) const {
  size_t pass_index = pass == Pass::kForward ? 0 : 1;
  return ((static_cast<size_t>(step) * 2 + pass_index) * static_cast<size_t>(microbatches_) +
          static_cast<size_t>(microbatch)) * static_cast<size_t>(stages_) +
         static_cast<size_t>(sender);
}

bool SendCompletions::Known(int step, Pass pass, int microbatch, int sender) const {
  return known_[Index(step, pass, microbatch, sender)];
}

TimeNs SendCompletions::Get(int step, Pass pass, int microbatch, int sender) const {
  return ends_[Index(step, pass, microbatch, sender)];
}

void SendCompletions::Set(int step, Pass pass, int microbatch, int sender, TimeNs end) {
  ends_[Index(step, pass, microbatch, sender)] = end;
  known_[Index(step, pass, microbatch, sender)] = true;
}

RankSimulator::RankSimulator(int stage, const GeneratorOptions& options)
    : stage_(stage), options_(options),
      rng_(options.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(stage)),
      cpu_now_(options.start_time_ns), stream_free_{options.start_time_ns, options.start_time_ns},
      next_correlation_(1000 + int64_t{stage} * 100000000),
      allocated_bytes_(int64_t{8192} * kMiB + stage * 64 * kMiB) {
  rank_.rank = stage;
  rank_.world_size = options.ranks;
  rank_.backend = "nccl";
  rank_.pid = PidOf(stage);
  for (int32_t device = 0; device < 8; ++device) {
    rank_.devices.push_back(DeviceInfo{device, "NVIDIA H100 80GB HBM3", 85029158912, 9, 0, 132});
  }
  ProcessGroup pipeline{"pipeline_parallel", {}};
  for (int32_t r = 0; r < options.ranks; ++r) pipeline.ranks.push_back(r);
  rank_.process_groups.push_back(std::move(pipeline));
  rank_.timelines.push_back(Timeline{TimelineKind::kCpuThread, -1, rank_.pid, rank_.pid, {}});
  rank_.timelines.push_back(Timeline{TimelineKind::kGpuStream, DeviceOf(stage), 0, 7, {}});
  rank_.timelines.push_back(Timeline{TimelineKind::kGpuStream, DeviceOf(stage), 0, 20, {}});

  for (int step = 0; step < options.steps; ++step) {
    program_.push_back({InstructionKind::kStepBegin, step, {}});
    for (PipelineOp op : OneForwardOneBackwardOrder(stage, options.ranks, options.microbatches)) {
      program_.push_back({InstructionKind::kPass, step, op});
    }
    program_.push_back({InstructionKind::kStepEnd, step, {}});
  }
}

TimeNs RankSimulator::Jitter(TimeNs nominal) {
  if (!options_.jitter) return nominal;
  // +-10% and a sub-microsecond remainder, so timestamps exercise the ns fraction. Raw engine
  // output keeps the sequence identical on every standard library.
  uint64_t permille = rng_() % 201;
  TimeNs jittered = nominal / 1000 * static_cast<TimeNs>(900 + permille);
  return jittered + static_cast<TimeNs>(rng_() % 1000);
}

bool RankSimulator::RunNext(SendCompletions* sends) {
  if (done()) return false;
  const Instruction& instruction = program_[next_];
  if (instruction.kind == InstructionKind::kPass) {
    bool forward = instruction.op.pass == Pass::kForward;
    bool receives = forward ? stage_ > 0 : stage_ < options_.ranks - 1;
    int sender = forward ? stage_ - 1 : stage_ + 1;
    if (receives &&
        !sends->Known(instruction.step, instruction.op.pass, instruction.op.microbatch, sender)) {
      return false;
    }
  }
  switch (instruction.kind) {
    case InstructionKind::kStepBegin: BeginStep(instruction.step); break;
    case InstructionKind::kPass: RunPass(instruction.step, instruction.op, sends); break;
    case InstructionKind::kStepEnd: EndStep(instruction.step); break;
  }
  ++next_;
  return true;
}

RankSimulator::Launch RankSimulator::EmitLaunch(std::initializer_list<CpuOpSpec> chain,
                                                std::string_view runtime_name) {
  Timeline& cpu = rank_.timelines[0];
  TimeNs start = cpu_now_;
  size_t depth = chain.size();
  size_t first = cpu.intervals.size();
  size_t level = 0;
  for (const CpuOpSpec& spec : chain) {
    Interval op;
    op.start = start + static_cast<TimeNs>(level++) * kCpuNestOffset;
    op.name = rank_.names.Intern(spec.name);
    op.kind = spec.kind;
    cpu.intervals.push_back(op);
  }
  Interval runtime;
  runtime.start = start + static_cast<TimeNs>(depth) * kCpuNestOffset + Jitter(200);
  runtime.end = runtime.start + Jitter(kLaunchCost);
  runtime.correlation = next_correlation_++;
  runtime.name = rank_.names.Intern(runtime_name);
  runtime.kind = IntervalKind::kRuntime;
  cpu.intervals.push_back(runtime);
  for (size_t i = 0; i < depth; ++i) {
    cpu.intervals[first + i].end = runtime.end + static_cast<TimeNs>(depth - i) * kCpuUnwind;
  }
  TimeNs outer_end = depth > 0 ? cpu.intervals[first].end : runtime.end;
  cpu_now_ = outer_end + Jitter(kCpuGap);
  return {runtime.end, runtime.correlation};
}

Interval RankSimulator::PlaceDeviceOp(Stream stream, IntervalKind kind, std::string_view name,
                                      TimeNs earliest, TimeNs duration, TimeNs min_end,
                                      int64_t correlation, uint32_t comm) {
  Interval op;
  op.start = std::max(stream_free_[stream], earliest);
  op.end = std::max(op.start + duration, min_end);
  op.correlation = correlation;
  op.name = rank_.names.Intern(name);
  op.comm = comm;
  op.kind = kind;
  stream_free_[stream] = op.end;
  rank_.timelines[1 + stream].intervals.push_back(op);
  DeviceOpKind truth_kind = kind == IntervalKind::kComputeKernel ? DeviceOpKind::kCompute
                            : kind == IntervalKind::kCommKernel  ? DeviceOpKind::kComm
                                                                 : DeviceOpKind::kCopy;
  device_ops_.push_back({op.start, op.end, truth_kind});
  return op;
}

Interval RankSimulator::Kernel(std::initializer_list<CpuOpSpec> chain,
                               std::string_view kernel_name, TimeNs nominal, TimeNs not_before) {
  Launch launch = EmitLaunch(chain, "cudaLaunchKernel");
  return PlaceDeviceOp(kComputeStream, IntervalKind::kComputeKernel, kernel_name,
                       std::max(launch.runtime_end + kLaunchLatency, not_before), Jitter(nominal),
                       0, launch.correlation, kNoIndex);
}

Interval RankSimulator::Copy(std::initializer_list<CpuOpSpec> chain, IntervalKind kind,
                             std::string_view name, int64_t bytes, TimeNs not_before) {
  Launch launch = EmitLaunch(chain, kind == IntervalKind::kMemset ? "cudaMemsetAsync"
                                                                  : "cudaMemcpyAsync");
  // Host-to-device copies run at ~25 GB/s, device memsets at ~1 TB/s, plus a fixed cost.
  int64_t bytes_per_us = kind == IntervalKind::kMemset ? 1000000 : 25000;
  TimeNs duration = Jitter(2000 + bytes * 1000 / bytes_per_us);
  return PlaceDeviceOp(kComputeStream, kind, name,
                       std::max(launch.runtime_end + kLaunchLatency, not_before), duration, 0,
                       launch.correlation, kNoIndex);
}

Interval RankSimulator::P2p(bool send, int peer, TimeNs not_before, TimeNs arrival) {
  Launch launch = EmitLaunch({{send ? "c10d::send" : "c10d::recv_", IntervalKind::kCpuCommOp},
                              {"record_param_comms", IntervalKind::kCpuOp}},
                             "cudaLaunchKernel");
  // Activations go forward and gradients of the same shape come back, so both carry the same
  // payload.
  CommInfo comm;
  comm.bytes = kActivationBytes;
  comm.peer = peer;
  comm.group_size = options_.ranks;
  comm.process_group = 0;
  comm.collective = rank_.names.Intern(send ? "send" : "recv");
  comm.dtype = rank_.names.Intern("BFloat16");
  comm.kind = send ? CommKind::kSend : CommKind::kRecv;
  rank_.comms.push_back(comm);
  uint32_t comm_index = static_cast<uint32_t>(rank_.comms.size() - 1);
  TimeNs earliest = std::max(launch.runtime_end + kLaunchLatency, not_before);
  if (send) {
    TimeNs duration = Jitter(kSendFixed + kActivationBytes * 1000 / kLinkBytesPerUs);
    return PlaceDeviceOp(kCommStream, IntervalKind::kCommKernel, kSendRecvKernel, earliest,
                         duration, 0, launch.correlation, comm_index);
  }
  return PlaceDeviceOp(kCommStream, IntervalKind::kCommKernel, kSendRecvKernel, earliest,
                       Jitter(kRecvMinimum), arrival, launch.correlation, comm_index);
}

void RankSimulator::SampleMemory(int64_t allocated_delta) {
  allocated_bytes_ += allocated_delta;
  // The caching allocator grows in 512 MiB segments and never gives memory back within a run.
  int64_t segment = 512 * kMiB;
  reserved_bytes_ =
      std::max(reserved_bytes_, (allocated_bytes_ + segment - 1) / segment * segment);
  rank_.memory.push_back({cpu_now_, allocated_bytes_, reserved_bytes_, DeviceOf(stage_)});
  peak_allocated_ = std::max(peak_allocated_, allocated_bytes_);
  peak_reserved_ = std::max(peak_reserved_, reserved_bytes_);
}

void RankSimulator::BeginStep(int step) {
  (void)step;
  step_start_ = cpu_now_;
  Timeline& cpu = rank_.timelines[0];
  Interval loader;
  loader.start = cpu_now_ + 1000;
  loader.end = loader.start + Jitter(kDataLoader);
  loader.name = rank_.names.Intern("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  loader.kind = IntervalKind::kCpuOp;
  cpu.intervals.push_back(loader);
  cpu_now_ = loader.end + Jitter(kCpuGap);
  Copy({{"Optimizer.zero_grad#AdamW.zero_grad", IntervalKind::kCpuOp},
        {"aten::zero_", IntervalKind::kCpuOp}},
       IntervalKind::kMemset, "Memset (Device)", 64 * kMiB, 0);
  SampleMemory(0);
}

void RankSimulator::RunPass(int step, PipelineOp op, SendCompletions* sends) {
  bool forward = op.pass == Pass::kForward;
  int upstream = forward ? stage_ - 1 : stage_ + 1;     // where the input comes from
  int downstream = forward ? stage_ + 1 : stage_ - 1;   // where the output goes
  bool receives = upstream >= 0 && upstream < options_.ranks;
  bool sends_on = downstream >= 0 && downstream < options_.ranks;
  TimeNs cpu_begin = cpu_now_;
  TimeNs ready = 0;
  if (receives) {
    TimeNs arrival = sends->Get(step, op.pass, op.microbatch, upstream);
    ready = P2p(false, upstream, 0, arrival).end;
  }
  if (forward && (stage_ == 0 || stage_ == options_.ranks - 1)) {
    // The first stage loads the tokens, the last the labels.
    ready = std::max(ready, Copy({{"aten::to", IntervalKind::kCpuOp},
                                  {"aten::_to_copy", IntervalKind::kCpuOp},
                                  {"aten::copy_", IntervalKind::kCpuOp}},
                                 IntervalKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)",
                                 kInputBytes, 0).end);
  }
  int64_t activation_bytes = kActivationBytes * 3 * options_.layers_per_stage;
  if (forward) SampleMemory(activation_bytes);
  TimeNs first_start = -1;
  TimeNs last_end = ready;
  auto kernel = [&](std::initializer_list<CpuOpSpec> chain, std::string_view name, TimeNs ns) {
    Interval placed = Kernel(chain, name, ns, ready);
    if (first_start < 0) first_start = placed.start;
    last_end = placed.end;
  };
  for (int layer = 0; layer < options_.layers_per_stage; ++layer) {
    if (forward) {
      kernel({{"aten::layer_norm", IntervalKind::kCpuOp}, {"aten::native_layer_norm", IntervalKind::kCpuOp}},
             "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
             40000);
      kernel({{"aten::linear", IntervalKind::kCpuOp}, {"aten::addmm", IntervalKind::kCpuOp}}, kGemmKernel, 310000);
      kernel({{"aten::scaled_dot_product_attention", IntervalKind::kCpuOp},
              {"aten::_scaled_dot_product_flash_attention", IntervalKind::kCpuOp},
              {"aten::_flash_attention_forward", IntervalKind::kCpuOp}},
             "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
             420000);
      kernel({{"aten::gelu", IntervalKind::kCpuOp}},
             "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
             60000);
    } else {
      kernel({{"autograd::engine::evaluate_function: GeluBackward0", IntervalKind::kCpuOp},
              {"GeluBackward0", IntervalKind::kCpuOp}, {"aten::gelu_backward", IntervalKind::kCpuOp}},
             "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3>)",
             90000);
      kernel({{"autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0", IntervalKind::kCpuOp},
              {"aten::_flash_attention_backward", IntervalKind::kCpuOp}},
             "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, true, false, false, false, false, true, false, false>(pytorch_flash::Flash_bwd_params)",
             900000);
      kernel({{"aten::_flash_attention_backward", IntervalKind::kCpuOp}},
             "void pytorch_flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, true>(pytorch_flash::Flash_bwd_params, int)",
             30000);
      kernel({{"autograd::engine::evaluate_function: AddmmBackward0", IntervalKind::kCpuOp},
              {"AddmmBackward0", IntervalKind::kCpuOp}, {"aten::mm", IntervalKind::kCpuOp}},
             kGemmKernel, 300000);
      kernel({{"AddmmBackward0", IntervalKind::kCpuOp}, {"aten::mm", IntervalKind::kCpuOp}}, kGemmKernel, 300000);
      kernel({{"autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", IntervalKind::kCpuOp},
              {"aten::add_", IntervalKind::kCpuOp}},
             "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
             45000);
      kernel({{"autograd::engine::evaluate_function: NativeLayerNormBackward0", IntervalKind::kCpuOp},
              {"aten::native_layer_norm_backward", IntervalKind::kCpuOp}},
             "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)",
             50000);
      kernel({{"aten::native_layer_norm_backward", IntervalKind::kCpuOp}},
             "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<c10::BFloat16, float>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)",
             35000);
    }
  }
  if (sends_on) {
    Interval send = P2p(true, downstream, last_end, 0);
    sends->Set(step, op.pass, op.microbatch, stage_, send.end);
  }
  if (!forward) SampleMemory(-activation_bytes);
  std::string label = absl::StrCat(forward ? "PP:F" : "PP:B", op.microbatch);
  NameId name = rank_.names.Intern(label);
  rank_.annotations.push_back({cpu_begin, cpu_now_, name, AnnotationScope::kCpu, -1, rank_.pid});
  rank_.annotations.push_back(
      {first_start, last_end, name, AnnotationScope::kGpu, DeviceOf(stage_), 7});
}

void RankSimulator::EndStep(int step) {
  for (int layer = 0; layer < options_.layers_per_stage; ++layer) {
    Kernel({{"Optimizer.step#AdamW.step", IntervalKind::kCpuOp},
            {"aten::_fused_adamw_", IntervalKind::kCpuOp}},
           "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, double, bool*, bool*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, double, bool*, bool*)",
           120000, 0);
  }
  if (stage_ == options_.ranks - 1) {
    Copy({{"aten::item", IntervalKind::kCpuOp}, {"aten::_local_scalar_dense", IntervalKind::kCpuOp}},
         IntervalKind::kMemcpy, "Memcpy DtoH (Device -> Pageable)", 4, 0);
  }
  // The host waits for both streams before the next step.
  Interval sync;
  sync.start = cpu_now_;
  sync.end = std::max(sync.start + Jitter(3000),
                      std::max(stream_free_[kComputeStream], stream_free_[kCommStream]) + 2000);
  sync.correlation = next_correlation_++;
  sync.name = rank_.names.Intern("cudaDeviceSynchronize");
  sync.kind = IntervalKind::kRuntime;
  rank_.timelines[0].intervals.push_back(sync);
  cpu_now_ = sync.end + Jitter(kStepTail);
  rank_.steps.push_back({options_.first_step_number + step, step_start_, cpu_now_});
  cpu_now_ += Jitter(kCpuGap);
}

Rank RankSimulator::TakeRank() {
  auto by_start_longer_first = [](const Interval& a, const Interval& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  };
  for (Timeline& timeline : rank_.timelines) {
    std::stable_sort(timeline.intervals.begin(), timeline.intervals.end(), by_start_longer_first);
  }
  std::stable_sort(rank_.annotations.begin(), rank_.annotations.end(),
                   [](const Annotation& a, const Annotation& b) { return a.start < b.start; });
  return std::move(rank_);
}

RankTruth RankSimulator::Truth() const {
  RankTruth truth = TruthFromDeviceOps(stage_, device_ops_);
  truth.steps = options_.steps;
  truth.peak_allocated_bytes = peak_allocated_;
  truth.peak_reserved_bytes = peak_reserved_;
  return truth;
}

}  // namespace bubblescope::bench
