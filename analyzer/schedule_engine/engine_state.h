// The discrete-event engine's state (engine.h states its semantics), shared by the files that
// build its kernels (engine_build.cc: each rank's iterations, ops, transfers and in-stage
// communication) and resolve their times (engine.cc).
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schedule_engine/config.h"
#include "schedule_engine/program.h"
#include "schedule_engine/records.h"

namespace bubblescope::sim::engine_internal {

// One kernel while the engine resolves its times.
struct Node {
  KernelRecord record;
  int32_t rank = 0;
  int32_t launch_index = 0;  // position among its rank's launches of the iteration
  TimeNs duration = 0;       // compute: the (jittered) cost; p2p: the transfer time
  int32_t stream_prev = -1;  // previous node on the same stream, any iteration
  // Communication: the node the compute stream ran last before it this iteration; a compute
  // kernel: the in-stage communication it waits for (a collective, the KV exchange before it).
  int32_t compute_prev = -1;
  // An op's nodes up to its first compute kernel: the node whose end is its input's arrival.
  int32_t input = -1;
  int32_t partner = -1;  // p2p: the matching recv / send (the all-reduce uses barriers_)
  // Batched p2p: the first node of its batch (itself for the first), and on that node the
  // number of nodes in the batch; -1 / 0 for every other kernel.
  int32_t batch_leader = -1;
  int32_t batch_size = 0;
  int32_t post_index = -1;  // batched p2p: the launch slot of its c10d call
  int32_t batch_wait = -1;  // batched p2p: the batch this kernel waits for (Megatron's req.wait)
  bool started = false;
  bool done = false;
};

struct IterationState {
  bool start_known = false;
  TimeNs start = 0;
  int32_t launches = 0;
  int32_t pending = 0;  // kernels not finished yet
  TimeNs gpu_end = 0;
  int64_t sync_correlation = 0;
};

// (iteration, producer stage, producer's index in its program): names one cross-rank message.
using MessageKey = std::tuple<int32_t, int32_t, int32_t>;

inline bool IsP2p(KernelRole role) {
  return role == KernelRole::kSend || role == KernelRole::kRecv;
}

// One rank's iteration while its kernels are built, op by op (Engine::BuildIteration).
struct IterationBuild {
  int32_t rank = 0;
  int32_t iteration = 0;
  int32_t stage = 0;
  const std::vector<Op>* program = nullptr;                   // the stage's program
  absl::flat_hash_map<MessageKey, int32_t>* sends = nullptr;  // every rank's, by message
  absl::flat_hash_map<MessageKey, int32_t>* recvs = nullptr;
  int32_t launch = 0;                   // the next launch slot
  int32_t last_compute = -1;            // the node the compute stream runs last so far
  std::vector<int32_t> last_kernel_of;  // by program index: the op's last compute node
  std::vector<int32_t> posted_recv;     // by program index: its receive posted ahead, else -1
  // Batched interleaved: steady-state forwards pair with the backward after them into one step,
  // from program index `warmup` on (engine.h, "Batched p2p").
  bool step_batches = false;
  size_t warmup = 0;
};

class Engine {
 public:
  explicit Engine(const Config& config)
      : config_(config),
        p_(config.stages),
        rng_(config.seed),
        iterations_(static_cast<size_t>(p_)),
        steps_(static_cast<size_t>(p_)),
        rank_nodes_(static_cast<size_t>(p_)),
        stream_nodes_(static_cast<size_t>(p_)),
        correlations_(static_cast<size_t>(p_), 0) {}

  absl::Status Build();
  absl::Status Resolve();
  Records Collect() const;

 private:
  int32_t ProgramIndex(const StageOp& stage_op) const {
    const Op& op = stage_op.op;
    size_t flat = (static_cast<size_t>(op.type) * static_cast<size_t>(config_.virtual_stages) +
                   static_cast<size_t>(op.chunk)) *
                      static_cast<size_t>(config_.microbatches) +
                  static_cast<size_t>(op.microbatch);
    return positions_[static_cast<size_t>(stage_op.stage)][flat];
  }
  TimeNs Jittered(TimeNs cost);
  // An in-stage collective (kTensorParallel, kExpertParallel) of `duration` after node `after`
  // (-1: none) on its group's stream; returns its node.
  int32_t NewCollective(int32_t rank, int32_t iteration, int32_t op_index, KernelRole role,
                        CommKind collective, TimeNs duration, int32_t after, int32_t* launch);
  // One KV exchange of ring attention after node `after`, with the launch slots of its two
  // transfers (ModelParallel, records.h); returns its node.
  int32_t NewExchange(int32_t rank, int32_t iteration, int32_t op_index, int32_t after,
                      int32_t* launch);
  int32_t NewNode(int32_t rank, int32_t iteration, KernelRole role, StreamRole stream, int32_t op,
                  int32_t* launch);
  absl::Status BuildIteration(int32_t rank, int32_t iteration,
                              absl::flat_hash_map<MessageKey, int32_t>* sends,
                              absl::flat_hash_map<MessageKey, int32_t>* recvs);
  // One op of the program: its input (a local kernel or a receive), its kernels with their
  // in-stage communication, and the sends of its output.
  absl::Status BuildOp(IterationBuild& build, size_t index);
  // The node whose end is program[index]'s input arriving, -1 for none, or an internal error
  // when a local input has not run yet.
  absl::StatusOr<int32_t> InputNode(IterationBuild& build, size_t index, int32_t op_index);
  // The op's compute kernels and, around them, its tensor-, expert- and context-parallel
  // communication (ModelParallel), the first of them waiting for `input_node`.
  void AddOpKernels(IterationBuild& build, const Op& op, int32_t op_index, int32_t input_node);
  // The receive of program[index]'s input when it comes from another rank (its node), else -1.
  int32_t PostRecv(IterationBuild& build, size_t index, int32_t for_op);
  // The send of program[index]'s output, after node `after`, when another rank consumes it.
  void PostSend(IterationBuild& build, size_t index, int32_t for_op, int32_t after);
  // Batched interleaved: whether program[index] is the forward that opens a step pair.
  bool OpensStepPair(const IterationBuild& build, size_t index) const;
  // After the last op: the data-parallel gradient sync (and, coalesced, the loss all-reduce),
  // the optimizer and the iteration-end all-reduce, each when the config has it.
  void AddGradientSync(IterationBuild& build);
  void AddOptimizer(IterationBuild& build);
  void AddIterationBarrier(IterationBuild& build);
  // Adds a send or recv of `op_index` to or from `peer` (batched: joins or opens a batch).
  int32_t NewP2pNode(int32_t rank, int32_t iteration, KernelRole role, StreamRole stream,
                     int32_t op_index, int32_t peer, int32_t last_compute, int32_t* launch);
  // Batched p2p: launches the open batch of `rank` (one kernel launch after its c10d calls).
  void CloseBatch(int32_t* launch);
  bool TryStart(Node& node);
  bool TryFinish(Node& node);
  void FinishIteration(int32_t rank, int32_t iteration);
  absl::Status Deadlock(const std::vector<std::array<size_t, kStreamRoleCount>>& heads) const;

  const Config& config_;
  const int32_t p_;
  std::mt19937_64 rng_;
  std::vector<int32_t> stage_of_rank_;
  std::vector<std::vector<Op>> programs_;        // per stage
  std::vector<std::vector<int32_t>> positions_;  // per stage: (type, chunk, mb) -> index
  std::vector<Node> nodes_;
  std::vector<std::vector<IterationState>> iterations_;  // per rank, per iteration
  std::vector<std::vector<StepRecord>> steps_;           // per rank, in iteration order
  std::vector<std::vector<int32_t>> barriers_;           // per iteration: its all-reduce nodes
  std::vector<std::vector<OpRecord>> ops_;               // per rank
  std::vector<std::vector<int32_t>> rank_nodes_;         // per rank, launch order
  std::vector<std::array<std::vector<int32_t>, kStreamRoleCount>> stream_nodes_;
  std::vector<int64_t> correlations_;  // per rank: last id handed out
  // Batched p2p, while one rank's iteration is built: the batch being queued (its first node)
  // and the last batch launched, until the next kernel on the compute stream waits for it.
  int32_t open_batch_ = -1;
  int32_t last_batch_ = -1;
};

}  // namespace bubblescope::sim::engine_internal
