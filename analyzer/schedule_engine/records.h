// What the engine recorded: every kernel, launch, op and profiler step of every rank, on the true
// (offset-free) clock. Both the Trace and the Truth are derived from these records alone.
#pragma once

#include <cstdint>
#include <vector>

#include "bubblescope/trace.h"
#include "schedule_engine/program.h"

namespace bubblescope::sim {

// kAllReduce is the iteration-end barrier (Config::iteration_barrier): one small all-reduce over
// every rank of the pipeline. kTensorParallel is a tensor-parallel collective inside an op,
// kContextParallel one KV exchange of ring attention, kExpertParallel a MoE all-to-all: the
// stage's own work. kDataParallel is the gradient sync after the rank's last backward
// (Config::parallel, ModelParallel).
enum class KernelRole : uint8_t {
  kCompute,
  kOptimizer,
  kSend,
  kRecv,
  kAllReduce,
  kTensorParallel,
  kDataParallel,
  kContextParallel,
  kExpertParallel,
};

// The communication that is the stage's own work (ModelParallel).
inline bool InStageRole(KernelRole role) {
  return role == KernelRole::kTensorParallel || role == KernelRole::kContextParallel ||
         role == KernelRole::kExpertParallel;
}

// Payload of the iteration-end all-reduce: one f32 (the squared gradient norm).
inline constexpr int64_t kBarrierBytes = 4;
// The loss all-reduce over the data-parallel group after a coalesced gradient sync
// (ModelParallel::dp_sync_coalesced): one fp32 loss.
inline constexpr int64_t kLossAllReduceBytes = 4;

// The streams of a rank: the compute stream, one FIFO stream per p2p direction and neighbour, and
// the collective stream of the iteration-end all-reduce; batched p2p (P2pStyle::kBatched) runs
// every transfer on the one stream of the pipeline's process group instead. "Next" is the stage
// after this one (for the last stage of an interleaved job, stage 0, which runs the next chunk);
// "prev" the stage before (for stage 0 of an interleaved job, the last).
enum class StreamRole : uint8_t {
  kCompute,
  kSendNext,
  kRecvPrev,
  kSendPrev,
  kRecvNext,
  kCollective,
  kBatchedP2p,
  kTensorParallel,  // the tensor-parallel group's NCCL stream
  kDataParallel,    // the data-parallel group's NCCL stream
  // Ring attention's exchanges: the engine runs them in order on kContextParallel; the trace
  // shows each transfer on the stream of its pair's communicator, the one with the next CP rank
  // (kContextParallel) or with the previous (kContextParallelPrev, in the trace only).
  kContextParallel,
  kContextParallelPrev,
  kExpertParallel,  // the expert-parallel group's NCCL stream
};
inline constexpr int kStreamRoleCount = 12;

struct KernelRecord {
  int32_t iteration = 0;
  KernelRole role = KernelRole::kCompute;
  StreamRole stream = StreamRole::kCompute;
  // Index into RankRecord::ops: the op a compute kernel belongs to, the op a recv feeds or the op
  // a send carries the output of; -1 for the optimizer and the all-reduce.
  int32_t op = -1;
  int32_t peer_rank = -1;  // send / recv only: the global rank on the other end
  int64_t bytes = 0;       // send / recv / collectives only
  // kTensorParallel / kDataParallel: kAllReduce, kReduceScatter or kAllGather; kExpertParallel:
  // kAllToAll; kContextParallel: kSendRecv.
  CommKind collective = CommKind::kUnknown;
  int64_t correlation = 0;  // shared with its launch
  TimeNs launch_start = 0;  // the cudaLaunchKernel call on the CPU thread
  TimeNs launch_end = 0;
  TimeNs start = 0;  // on the device
  TimeNs end = 0;
  // Batched p2p (P2pStyle::kBatched): the transfers of one batch are consecutive records that
  // share one kernel, so one launch (launch_start/end) and one start and end; every one but the
  // first is a follower. `post_start`/`post_end` is the c10d::send / c10d::recv_ call that queued
  // this transfer on the CPU thread, before the launch.
  bool batch_follower = false;
  TimeNs post_start = 0;
  TimeNs post_end = 0;
  // kContextParallel: one exchange is two transfers (a send and a receive). Batched, both calls
  // come before the one kernel: the first at post_start, the second right after it. Otherwise
  // each has its own kernel: the first launched at post_start with this correlation id, the
  // second at launch_start.
  int64_t post_correlation = 0;
  // kDataParallel: a coalesced collective (ModelParallel::dp_sync_coalesced), written as torch
  // writes one: inside its c10d op and nccl: range, the kernel without any args.
  bool coalesced = false;
};

struct OpRecord {
  int32_t iteration = 0;
  Op op;
  int32_t first_kernel = 0;  // index into RankRecord::kernels; an op's kernels are consecutive
  int32_t kernel_count = 0;
  TimeNs start = 0;  // first kernel start
  TimeNs end = 0;    // last kernel end
  // First launch start (its recv's, if it has one) and last launch end (its send's); with
  // batched p2p its compute launches only.
  TimeNs cpu_start = 0;
  TimeNs cpu_end = 0;
};

struct StepRecord {
  int32_t iteration = 0;
  TimeNs start = 0;       // the CPU begins launching the iteration
  TimeNs sync_start = 0;  // last launch done; the CPU waits for the device
  TimeNs end = 0;         // the device finished every kernel of the iteration
  int64_t sync_correlation = 0;
};

struct RankRecord {
  int32_t rank = 0;
  int32_t stage = 0;
  std::vector<KernelRecord> kernels;  // in launch order
  std::vector<OpRecord> ops;          // in launch order (iteration by iteration)
  std::vector<StepRecord> steps;      // one per iteration
};

struct Records {
  std::vector<RankRecord> ranks;  // indexed by global rank
};

}  // namespace bubblescope::sim
