// The options of one simulated pipeline-parallel job, and their validation.
//
// Units: every time is int64 nanoseconds, every size is bytes, link bandwidth is gigabits per
// second (1 Gbit/s moves one bit per nanosecond). Per-stage vectors are indexed by pipeline stage;
// per-rank vectors by global rank (ranks are the processes; stage_to_rank says which rank runs
// which stage).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "bubblescope/trace.h"

namespace bubblescope::sim {

enum class Schedule : uint8_t {
  kGpipe,            // all forwards, then all backwards (v > 1: torch's ScheduleLoopedBFS)
  k1F1B,             // one-forward-one-backward (PipeDream-Flush)
  kInterleaved1F1B,  // Megatron's interleaved 1F1B with virtual_stages chunks per rank
  kZeroBubbleH1,     // ZB-H1: backward split into input-grad B and weight-grad W
  kForwardOnly,      // inference: forwards only, no backward, no optimizer
};

// Stable short names: "gpipe", "1f1b", "interleaved", "zb-h1", "fwd-only".
std::string_view ScheduleName(Schedule schedule);

// Cost of one microbatch on one stage. With virtual_stages > 1 each of a rank's chunks costs
// cost / virtual_stages (rounded down). `backward` is the cost of the B op in every schedule;
// `weight_grad` is the cost of the separate W op and is used only by kZeroBubbleH1 (for the other
// schedules the weight gradient is part of `backward`).
struct StageCost {
  TimeNs forward = 0;
  TimeNs backward = 0;
  TimeNs weight_grad = 0;
};

// A point-to-point link. A transfer of `bytes` takes latency_ns + ceil(bytes * 8 / gbps) ns;
// gbps must be >= 0.01 and may be +infinity (an infinitely fast link).
struct Link {
  double gbps = 100.0;
  TimeNs latency_ns = 0;
};

// Replaces the default link for transfers from src_rank to dst_rank (directed).
struct LinkOverride {
  int32_t src_rank = 0;
  int32_t dst_rank = 0;
  Link link;
};

enum class AnnotationStyle : uint8_t {
  kNone,
  // "PP:{stage}{F|B|W}{mb}" gpu_user_annotation ranges on the compute stream, one per op, from
  // its first kernel start to its last kernel end (interleaved: stage = chunk * p + stage).
  kPpGpu,
  // "Forward {mb}" / "Backward {mb}" (zb-h1 W ops: "WeightGrad {mb}") user_annotation ranges on
  // the CPU thread, one per op, from its first launch start to its last launch end.
  kPpCpu,
  // "PP:{F|B|W}{mb}" user_annotation ranges on the CPU thread, like kPpCpu but without the stage:
  // the form hand-written NVTX ranges often take.
  kPpShortCpu,
  // What Kineto writes for a `record_function("PP:{stage}{F|B|W}{mb}")` range on a GPU job: the
  // user_annotation on the CPU thread over the op's launches, and its gpu_user_annotation copy
  // on the compute stream over the kernels launched inside it. One range seen twice.
  kPpMirrored,
};

// "none", "pp-gpu", "pp-cpu", "pp-short", "pp-mirrored": the spelling used by the CLI and the
// truth file.
std::string_view AnnotationStyleName(AnnotationStyle style);

// How point-to-point transfers reach NCCL.
enum class P2pStyle : uint8_t {
  // One kernel per send and per recv, each launched inside its c10d::send / c10d::recv_ op:
  // torch.distributed.isend / irecv / send / recv (torch's P2POp schedules, DeepSpeed's
  // PipelineEngine).
  kPerOp,
  // torch.distributed.batch_isend_irecv, as Megatron-LM's 1F1B (batch_p2p_comm, its default) and
  // torch.distributed.pipelining issue them: each c10d::send / c10d::recv_ only queues its
  // transfer (its record_param_comms names the peer and size); one ncclDevKernel_SendRecv per
  // batch is launched afterwards inside an `nccl:coalesced` range, on the one stream of the
  // pipeline's process group, and carries no direction, peer or size. A batch runs until all of
  // its transfers completed, and the compute stream waits for it (Megatron waits on the batch's
  // requests before the next op). Batches follow Megatron's 1F1B and interleaved schedules;
  // see engine.h, "Batched p2p".
  kBatched,
};

// "per-op", "batched": the spelling used by the CLI and the truth file.
std::string_view P2pStyleName(P2pStyle style);

// How the host launches compute kernels and what they are called.
enum class LaunchStyle : uint8_t {
  // Every launch from the one CPU thread; compute kernels named after their stage and phase
  // ("void pp_stage2_backward_kernel<bf16>(...)").
  kOneThread,
  // As torch runs a GPU job: the compute kernels of backward ops (B and W) are launched from the
  // autograd engine's own CPU thread, everything else from the main thread, and compute kernels
  // carry cuBLAS GEMM names that say nothing of the phase.
  kTorch,
};

// "one-thread", "torch": the spelling used by the CLI and the truth file.
std::string_view LaunchStyleName(LaunchStyle style);

// Whose GPU runtime the job ran on, as the trace spells it.
enum class Vendor : uint8_t {
  kCuda,  // cudaLaunchKernel, cudaDeviceSynchronize
  // ROCm through Kineto's roctracer: hipLaunchKernel, hipDeviceSynchronize with the stream as a
  // text handle ("0x0"), an MI250X device, and (LaunchStyle::kTorch) hipBLASLt GEMM names.
  kRocm,
};

// "cuda", "rocm": the spelling used by the CLI and the truth file.
std::string_view VendorName(Vendor vendor);

// Every value of each choice, in the order the CLI lists them.
inline constexpr std::array<Schedule, 5> kSchedules = {
    Schedule::kGpipe, Schedule::k1F1B, Schedule::kInterleaved1F1B, Schedule::kZeroBubbleH1,
    Schedule::kForwardOnly};
inline constexpr std::array<AnnotationStyle, 5> kAnnotationStyles = {
    AnnotationStyle::kNone, AnnotationStyle::kPpGpu, AnnotationStyle::kPpCpu,
    AnnotationStyle::kPpShortCpu, AnnotationStyle::kPpMirrored};
inline constexpr std::array<P2pStyle, 2> kP2pStyles = {P2pStyle::kPerOp, P2pStyle::kBatched};
inline constexpr std::array<LaunchStyle, 2> kLaunchStyles = {LaunchStyle::kOneThread,
                                                             LaunchStyle::kTorch};
inline constexpr std::array<Vendor, 2> kVendors = {Vendor::kCuda, Vendor::kRocm};

// Tensor, context, expert and data parallelism beside the pipeline, laid out as Megatron-Core
// does (default order tp-cp-ep-dp-pp: global rank = tp_rank + tensor * (cp_rank + context *
// (dp_rank + data * pipeline_rank))), so the job has tensor * context * data * p ranks and
// tensor * context * data pipelines, each running the same schedule.
// Inside every F, B and W op each compute kernel gives `tensor_share` of its time to a
// tensor-parallel collective on the group's own stream: an all-reduce after it, or with sequence
// parallelism an all-gather before and a reduce-scatter after; the compute stream waits for it.
// With `overlap`, a backward (B, W) kernel other than its op's last launches its all-reduce
// asynchronously beside the op's next kernel (the weight-gradient GEMM) and keeps its whole
// time; the op's last collective is waited for.
// With context > 1 each op's first kernel is its attention, run as Transformer Engine's ring
// attention (AttnFuncWithCPAndKVP2P): its compute splits into `context` attention steps and one
// closing piece (the output projection, the dKV correction), and the KV chunks travel around the
// context-parallel ring, one exchange of `context_exchange_ns` beside each step but the last
// in a forward (to the next CP rank, from the previous), beside every step in a backward (KV and
// dKV to the previous, from the next); each step waits for the exchange before it, the closing
// piece for the last. With expert > 1 each op's last kernel is a MoE layer: `expert_share` of
// its time goes to the token dispatch all-to-all before its compute and the combine all-to-all
// after it, over the expert-parallel group, and the compute stream waits for both.
// After its last backward each rank all-reduces its gradients over the data-parallel group with
// context parallelism (Megatron's DDP reduces over data x context ranks; `dp_sync_ns`, when
// data * context > 1) on that group's stream, before the optimizer.
struct ModelParallel {
  int32_t tensor = 1;
  int32_t data = 1;
  bool sequence_parallel = false;
  bool overlap = false;
  double tensor_share = 0.15;  // in [0, 1)
  TimeNs dp_sync_ns = 0;
  // The gradient sync as Megatron's distributed optimizer issues it under `_coalescing_manager`:
  // a `c10d::reduce_scatter_tensor_coalesced_` whose kernel carries no args (torch records no
  // record_param_comms for it), then the loss all-reduce over the same group, with args, on
  // the group's stream (kLossAllReduceBytes).
  bool dp_sync_coalesced = false;
  // Element count of one tensor-parallel collective, expert all-to-all or KV exchange (bf16), as
  // the args record it.
  int64_t tensor_elements = 4 << 20;
  int32_t context = 1;
  TimeNs context_exchange_ns = 100'000;
  // Expert-parallel ranks: they must divide context * data (Megatron-Core's expert layout
  // tp-ep-dp-pp over the same ranks, the expert tensor-parallel size being tensor's).
  int32_t expert = 1;
  double expert_share = 0.1;  // in [0, 1)

  int32_t replicas() const { return tensor * context * data; }
};

struct Config {
  int32_t stages = 4;          // p
  int32_t microbatches = 8;    // m
  int32_t virtual_stages = 1;  // v: chunks per rank, > 1 only for kInterleaved1F1B and kGpipe
  Schedule schedule = Schedule::k1F1B;
  int32_t iterations = 1;        // K profiler steps
  std::vector<StageCost> costs;  // size p
  int32_t kernels_per_op = 2;    // each op is this many back-to-back kernels splitting its cost
  int64_t activation_bytes = 0;  // payload of every p2p message (one microbatch's activation)
  Link link;                     // default for every directed link
  std::vector<LinkOverride> link_overrides;
  TimeNs launch_gap_ns = 0;  // CPU time of one kernel launch
  TimeNs optimizer_ns = 0;   // one optimizer kernel per rank per iteration; 0 = none
  double jitter = 0.0;       // relative, in [0, 1): compute kernel cost x (1 + u), |u| <= jitter
  uint64_t seed = 1;         // of the jitter generator
  std::vector<TimeNs> clock_offsets_ns;  // per rank, empty = all zero
  // Global ranks r with one r / ranks_per_host run on one host and name it ("sim-host-<r / n>",
  // as Kineto's `host_name` does since 2026); they must then share one clock offset. With the
  // Megatron rank order of ModelParallel, 8 a host puts the same stages of 8 / (tensor * context)
  // data-parallel replicas on one machine. 0: no host named (traces before that).
  int32_t ranks_per_host = 0;
  // Each host's clock, by host (global rank / ranks_per_host; needs ranks_per_host > 0, one
  // entry per host), on top of clock_offsets_ns: a rank of host h writes the true time t as
  // t + offset_ns + drift_ppm * 1e-6 * (t - start_time_ns), rounded to the nanosecond. NTP leaves
  // hosts milliseconds apart, drifting by tens of ppm. Empty: every host on the true clock.
  struct HostClock {
    TimeNs offset_ns = 0;
    double drift_ppm = 0.0;
  };
  std::vector<HostClock> host_clocks;
  // Host names are written only with ranks_per_host > 0; false: the hosts still have their own
  // clocks (host_clocks) but no trace names its host (Kineto before 2026).
  bool write_host_names = true;
  // Idle time between two iterations of every rank (data loading, logging): a long trace with
  // few iterations, over which clock drift adds up.
  TimeNs iteration_gap_ns = 0;
  // Each transfer's time (both ends) is scaled by 1 + u, u in [-transfer_spread, transfer_spread]
  // drawn from the message (iteration, stages, microbatch) and seed: transfers of varying length.
  double transfer_spread = 0.0;  // in [0, 1)
  // Each member of the iteration-end all-reduce ends up to this much after the common end of the
  // reduction (work after it, drawn per iteration and rank from seed), so the recorded ends of one
  // collective differ as those of real ones do.
  TimeNs collective_tail_ns = 0;
  // False: the process groups carry no description and no pg_config is written (torch before
  // 2.4, or groups created without names).
  bool describe_groups = true;
  std::vector<int32_t> stage_to_rank;  // per stage, a permutation of ranks; empty = identity
  std::vector<int64_t> weights_bytes;  // per stage (all of a rank's chunks), empty = all zero
  int64_t activation_stash_bytes = 0;  // per in-flight microbatch per chunk
  AnnotationStyle annotations = AnnotationStyle::kNone;
  P2pStyle p2p = P2pStyle::kPerOp;
  LaunchStyle launches = LaunchStyle::kOneThread;
  Vendor vendor = Vendor::kCuda;
  // Ends every iteration of every rank with a small all-reduce across all ranks (the gradient-norm
  // reduction real trainers run before clipping), so no rank starts iteration i+1 before every
  // rank has finished iteration i. See engine.h, "Iterations".
  bool iteration_barrier = true;
  TimeNs start_time_ns = 1700000000000000000;  // absolute time the first iteration starts
  ModelParallel parallel;
};

// Checks every field; the error message names the offending field and value.
absl::Status ValidateConfig(const Config& config);

// The rank running `stage` (identity when stage_to_rank is empty). Assumes a valid config.
int32_t RankOfStage(const Config& config, int32_t stage);

// The link used for a transfer from `src_rank` to `dst_rank`.
const Link& LinkBetween(const Config& config, int32_t src_rank, int32_t dst_rank);

// Duration of one transfer of config.activation_bytes over `link`.
TimeNs TransferNs(const Link& link, int64_t bytes);

// Number of hosts (ranks_per_host > 0), else 0.
int32_t HostCount(const Config& config);
// The time a rank of global rank `global_rank` writes for true time `true_time` (clock_offsets_ns
// of its pipeline rank plus its host's clock).
TimeNs RecordedTime(const Config& config, int32_t pipeline_rank, int32_t global_rank,
                    TimeNs true_time);

// A uniform draw in [-1, 1] from a key, the same wherever it is asked for (the two ends of one
// transfer, the members of one collective), independent of the jitter sequence.
double KeyedUniform(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);

}  // namespace bubblescope::sim
