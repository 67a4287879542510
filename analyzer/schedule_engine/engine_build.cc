// Building the engine's kernels: each rank's iterations, its ops' compute and in-stage
// communication, its transfers and batches (engine.h states the semantics, engine_state.h the
// state).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "schedule_engine/engine_state.h"
#include "schedule_engine/parallel_groups.h"

namespace bubblescope::sim::engine_internal {

TimeNs Engine::Jittered(TimeNs cost) {
  // The draw happens even without jitter so the sequence never depends on the jitter amount.
  uint64_t bits = rng_();
  double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;  // uniform in [0, 1)
  double u = config_.jitter * (2.0 * unit - 1.0);
  return static_cast<TimeNs>(std::llround(static_cast<double>(cost) * (1.0 + u)));
}

int32_t Engine::NewCollective(int32_t rank, int32_t iteration, int32_t op_index, KernelRole role,
                              CommKind collective, TimeNs duration, int32_t after,
                              int32_t* launch) {
  const StreamRole stream = role == KernelRole::kExpertParallel ? StreamRole::kExpertParallel
                                                                : StreamRole::kTensorParallel;
  const int32_t node = NewNode(rank, iteration, role, stream, op_index, launch);
  Node& added = nodes_[static_cast<size_t>(node)];
  added.record.collective = collective;
  added.record.bytes = config_.parallel.tensor_elements * 2;  // bf16
  added.duration = duration;
  added.compute_prev = after;
  return node;
}

int32_t Engine::NewExchange(int32_t rank, int32_t iteration, int32_t op_index, int32_t after,
                            int32_t* launch) {
  const bool batched = RingExchangeBatched(config_.parallel);
  const int32_t post = *launch;
  *launch += batched ? 2 : 1;  // batched: both calls before the one kernel
  const int64_t post_correlation = batched ? 0 : ++correlations_[static_cast<size_t>(rank)];
  const int32_t node = NewNode(rank, iteration, KernelRole::kContextParallel,
                               StreamRole::kContextParallel, op_index, launch);
  Node& added = nodes_[static_cast<size_t>(node)];
  added.post_index = post;
  added.record.collective = CommKind::kSendRecv;
  added.record.bytes = config_.parallel.tensor_elements * 2;  // bf16
  added.record.post_correlation = post_correlation;
  added.duration = config_.parallel.context_exchange_ns;
  added.compute_prev = after;
  return node;
}

int32_t Engine::NewNode(int32_t rank, int32_t iteration, KernelRole role, StreamRole stream,
                        int32_t op, int32_t* launch) {
  Node node;
  node.rank = rank;
  node.launch_index = (*launch)++;
  node.record.iteration = iteration;
  node.record.role = role;
  node.record.stream = stream;
  node.record.op = op;
  node.record.correlation = ++correlations_[static_cast<size_t>(rank)];
  auto index = static_cast<int32_t>(nodes_.size());
  std::vector<int32_t>& stream_list =
      stream_nodes_[static_cast<size_t>(rank)][static_cast<size_t>(stream)];
  if (!stream_list.empty()) node.stream_prev = stream_list.back();
  stream_list.push_back(index);
  rank_nodes_[static_cast<size_t>(rank)].push_back(index);
  ++iterations_[static_cast<size_t>(rank)][static_cast<size_t>(iteration)].pending;
  nodes_.push_back(node);
  return index;
}

int32_t Engine::NewP2pNode(int32_t rank, int32_t iteration, KernelRole role, StreamRole stream,
                           int32_t op_index, int32_t peer, int32_t last_compute, int32_t* launch) {
  const bool batched = config_.p2p == P2pStyle::kBatched;
  // Megatron's 1F1B batches a send with the next op's receive when both go to the same
  // neighbour (send_forward_recv_backward, send_backward_recv_forward); every other transfer is
  // a batch of its own. Its interleaved schedule batches everything between two steps.
  const bool step_batches = batched && config_.schedule == Schedule::kInterleaved1F1B;
  const bool joins =
      batched && open_batch_ >= 0 &&
      (step_batches ||
       (role == KernelRole::kRecv && nodes_[static_cast<size_t>(open_batch_)].batch_size == 1 &&
        nodes_[static_cast<size_t>(open_batch_)].record.role == KernelRole::kSend &&
        nodes_[static_cast<size_t>(open_batch_)].record.peer_rank == peer));
  if (batched && !joins) CloseBatch(launch);
  const int32_t index =
      NewNode(rank, iteration, role, batched ? StreamRole::kBatchedP2p : stream, op_index, launch);
  Node& node = nodes_[static_cast<size_t>(index)];
  node.record.peer_rank = peer;
  node.record.bytes = config_.activation_bytes;
  const int32_t src = role == KernelRole::kSend ? rank : peer;
  const int32_t dst = role == KernelRole::kSend ? peer : rank;
  node.duration = TransferNs(LinkBetween(config_, src, dst), config_.activation_bytes);
  node.compute_prev = last_compute;
  if (batched) {
    node.post_index = node.launch_index;
    if (joins) {
      node.batch_leader = open_batch_;
      node.record.batch_follower = true;
      ++nodes_[static_cast<size_t>(open_batch_)].batch_size;
    } else {
      node.batch_leader = index;
      node.batch_size = 1;
      open_batch_ = index;
    }
  }
  return index;
}

void Engine::CloseBatch(int32_t* launch) {
  if (open_batch_ < 0) return;
  const int32_t slot = (*launch)++;
  const auto first = static_cast<size_t>(open_batch_);
  const auto size = static_cast<size_t>(nodes_[first].batch_size);
  for (size_t i = first; i < first + size; ++i) nodes_[i].launch_index = slot;
  last_batch_ = open_batch_;
  open_batch_ = -1;
}

absl::Status Engine::Build() {
  const int32_t m = config_.microbatches;
  const int32_t v = config_.virtual_stages;
  stage_of_rank_.assign(static_cast<size_t>(p_), 0);
  for (int32_t s = 0; s < p_; ++s) stage_of_rank_[static_cast<size_t>(RankOfStage(config_, s))] = s;
  for (int32_t s = 0; s < p_; ++s) {
    programs_.push_back(StageProgram(config_, s));
    positions_.emplace_back(3 * static_cast<size_t>(v) * static_cast<size_t>(m), -1);
    for (size_t i = 0; i < programs_.back().size(); ++i) {
      const Op& op = programs_.back()[i];
      size_t flat =
          (static_cast<size_t>(op.type) * static_cast<size_t>(v) + static_cast<size_t>(op.chunk)) *
              static_cast<size_t>(m) +
          static_cast<size_t>(op.microbatch);
      positions_.back()[flat] = static_cast<int32_t>(i);
    }
  }
  ops_.resize(static_cast<size_t>(p_));
  barriers_.resize(static_cast<size_t>(config_.iterations));
  for (auto& per_rank : iterations_) per_rank.resize(static_cast<size_t>(config_.iterations));
  for (int32_t r = 0; r < p_; ++r) {
    iterations_[static_cast<size_t>(r)][0].start_known = true;
    iterations_[static_cast<size_t>(r)][0].start = config_.start_time_ns;
  }
  absl::flat_hash_map<MessageKey, int32_t> sends;
  absl::flat_hash_map<MessageKey, int32_t> recvs;
  for (int32_t it = 0; it < config_.iterations; ++it) {
    for (int32_t r = 0; r < p_; ++r) {
      BUBBLESCOPE_RETURN_IF_ERROR(BuildIteration(r, it, &sends, &recvs));
    }
  }
  if (sends.size() != recvs.size()) {
    return absl::InternalError(
        absl::StrCat("simulator: ", sends.size(), " sends but ", recvs.size(), " recvs"));
  }
  for (const auto& [key, send] : sends) {
    auto recv = recvs.find(key);
    if (recv == recvs.end()) {
      return absl::InternalError(absl::StrCat("simulator: a send of iteration ", std::get<0>(key),
                                              " from stage ", std::get<1>(key), " has no recv"));
    }
    nodes_[static_cast<size_t>(send)].partner = recv->second;
    nodes_[static_cast<size_t>(recv->second)].partner = send;
    if (config_.transfer_spread > 0.0) {
      // One draw per message, so both ends agree on how long it takes.
      const auto& [iteration, stage, index] = key;
      const double scale =
          1.0 + config_.transfer_spread *
                    KeyedUniform(config_.seed, static_cast<uint64_t>(iteration),
                                 static_cast<uint64_t>(stage), static_cast<uint64_t>(index));
      for (int32_t end : {send, recv->second}) {
        Node& node = nodes_[static_cast<size_t>(end)];
        node.duration =
            static_cast<TimeNs>(std::llround(static_cast<double>(node.duration) * scale));
      }
    }
  }
  return absl::OkStatus();
}

int32_t Engine::PostRecv(IterationBuild& build, size_t index, int32_t for_op) {
  const Op& op = (*build.program)[index];
  const std::optional<StageOp> input = InputOf(config_, StageOp{build.stage, op});
  if (!input.has_value() || input->stage == build.stage) return -1;
  const StreamRole stream =
      op.type == OpType::kForward ? StreamRole::kRecvPrev : StreamRole::kRecvNext;
  const int32_t node =
      NewP2pNode(build.rank, build.iteration, KernelRole::kRecv, stream, for_op,
                 RankOfStage(config_, input->stage), build.last_compute, &build.launch);
  build.recvs->emplace(MessageKey{build.iteration, input->stage, ProgramIndex(*input)}, node);
  return node;
}

void Engine::PostSend(IterationBuild& build, size_t index, int32_t for_op, int32_t after) {
  const Op& op = (*build.program)[index];
  const std::optional<StageOp> consumer = RemoteConsumerOf(config_, StageOp{build.stage, op});
  if (!consumer.has_value()) return;
  const StreamRole stream =
      op.type == OpType::kForward ? StreamRole::kSendNext : StreamRole::kSendPrev;
  const int32_t node = NewP2pNode(build.rank, build.iteration, KernelRole::kSend, stream, for_op,
                                  RankOfStage(config_, consumer->stage), after, &build.launch);
  build.sends->emplace(MessageKey{build.iteration, build.stage, static_cast<int32_t>(index)}, node);
}

bool Engine::OpensStepPair(const IterationBuild& build, size_t index) const {
  const std::vector<Op>& program = *build.program;
  return build.step_batches && index >= build.warmup && program[index].type == OpType::kForward &&
         index + 1 < program.size() && program[index + 1].type == OpType::kBackward;
}

absl::StatusOr<int32_t> Engine::InputNode(IterationBuild& build, size_t index, int32_t op_index) {
  const Op& op = (*build.program)[index];
  const std::optional<StageOp> input = InputOf(config_, StageOp{build.stage, op});
  if (!input.has_value()) return -1;
  if (input->stage != build.stage) {
    return build.posted_recv[index] >= 0 ? build.posted_recv[index]
                                         : PostRecv(build, index, op_index);
  }
  const int32_t producer = ProgramIndex(*input);
  const int32_t node = producer < 0 ? -1 : build.last_kernel_of[static_cast<size_t>(producer)];
  if (node < 0) {
    return absl::InternalError(absl::StrCat("simulator: stage ", build.stage, " runs ",
                                            std::string(1, OpLetter(op.type)), op.microbatch,
                                            " (chunk ", op.chunk, ") before the op it depends on"));
  }
  return node;
}

void Engine::AddOpKernels(IterationBuild& build, const Op& op, int32_t op_index,
                          int32_t input_node) {
  const int32_t v = config_.virtual_stages;
  const int32_t k = config_.kernels_per_op;
  const StageCost& cost = config_.costs[static_cast<size_t>(build.stage)];
  const int32_t rank = build.rank;
  const int32_t iteration = build.iteration;
  int32_t& launch = build.launch;
  int32_t& last_compute = build.last_compute;
  TimeNs op_cost = op.type == OpType::kForward    ? cost.forward / v
                   : op.type == OpType::kBackward ? cost.backward / v
                                                  : cost.weight_grad / v;
  // Every node of the op up to its first compute kernel waits for its input and for the
  // batch of transfers before it (the all-gather and the first KV exchange need the input).
  const int32_t op_batch = std::exchange(last_batch_, -1);
  bool awaiting_input = true;
  const auto starts_op = [&](int32_t node) {
    if (!awaiting_input) return;
    nodes_[static_cast<size_t>(node)].input = input_node;
    nodes_[static_cast<size_t>(node)].batch_wait = op_batch;
  };
  const auto add_collective = [&](KernelRole role, CommKind kind, TimeNs duration) {
    const int32_t node =
        NewCollective(rank, iteration, op_index, role, kind, duration, last_compute, &launch);
    starts_op(node);
    return node;
  };
  const auto add_compute = [&](TimeNs duration) {
    const int32_t node =
        NewNode(rank, iteration, KernelRole::kCompute, StreamRole::kCompute, op_index, &launch);
    nodes_[static_cast<size_t>(node)].duration = Jittered(duration);
    // The compute stream waits for the in-stage communication before it (ModelParallel).
    if (last_compute >= 0 &&
        nodes_[static_cast<size_t>(last_compute)].record.stream != StreamRole::kCompute) {
      nodes_[static_cast<size_t>(node)].compute_prev = last_compute;
    }
    starts_op(node);
    awaiting_input = false;
    last_compute = node;
  };
  for (int32_t i = 0; i < k; ++i) {
    TimeNs share = op_cost / k + (i < op_cost % k ? 1 : 0);
    const KernelShares shares = SplitKernel(config_.parallel, share, op.type, i, k);
    if (shares.before > 0) {
      last_compute =
          add_collective(KernelRole::kTensorParallel, CommKind::kAllGather, shares.before);
    }
    if (shares.dispatch > 0) {
      last_compute =
          add_collective(KernelRole::kExpertParallel, CommKind::kAllToAll, shares.dispatch);
    }
    // Ring attention: `ring_steps` attention steps and a closing piece; step s waits for the
    // exchange beside step s - 1, which brought its KV (the closing piece: the last dKV).
    const int32_t pieces = shares.ring_steps + 1;
    const int32_t exchanges = shares.ring_steps > 0 ? RingExchanges(config_.parallel, op.type) : 0;
    int32_t exchange = -1;
    for (int32_t piece = 0; piece < pieces; ++piece) {
      int32_t next_exchange = -1;
      if (piece < exchanges) {
        next_exchange = NewExchange(rank, iteration, op_index, last_compute, &launch);
        starts_op(next_exchange);
      }
      add_compute(shares.compute / pieces + (piece < shares.compute % pieces ? 1 : 0));
      if (exchange >= 0) nodes_[static_cast<size_t>(last_compute)].compute_prev = exchange;
      exchange = next_exchange;
    }
    if (shares.combine > 0) {
      last_compute =
          add_collective(KernelRole::kExpertParallel, CommKind::kAllToAll, shares.combine);
    }
    if (shares.after > 0) {
      const int32_t collective = add_collective(
          KernelRole::kTensorParallel,
          config_.parallel.sequence_parallel ? CommKind::kReduceScatter : CommKind::kAllReduce,
          shares.after);
      // An asynchronous one runs beside the next kernel, which does not wait for it.
      if (!shares.async) last_compute = collective;
    }
  }
}

absl::Status Engine::BuildOp(IterationBuild& build, size_t index) {
  std::vector<OpRecord>& ops = ops_[static_cast<size_t>(build.rank)];
  const std::vector<int32_t>& rank_nodes = rank_nodes_[static_cast<size_t>(build.rank)];
  const Op& op = (*build.program)[index];
  auto op_index = static_cast<int32_t>(ops.size());
  OpRecord record;
  record.iteration = build.iteration;
  record.op = op;

  absl::StatusOr<int32_t> input_node = InputNode(build, index, op_index);
  BUBBLESCOPE_RETURN_IF_ERROR(input_node.status());
  if (OpensStepPair(build, index)) {
    build.posted_recv[index + 1] = PostRecv(build, index + 1, op_index + 1);
  }

  CloseBatch(&build.launch);
  record.first_kernel = static_cast<int32_t>(rank_nodes.size());
  AddOpKernels(build, op, op_index, *input_node);
  record.kernel_count = static_cast<int32_t>(rank_nodes.size()) - record.first_kernel;
  build.last_kernel_of[index] = build.last_compute;

  if (index > 0 && OpensStepPair(build, index - 1)) {
    // The step's forward sends now, with its backward.
    PostSend(build, index - 1, op_index - 1, build.last_compute);
    PostSend(build, index, op_index, build.last_compute);
  } else if (!OpensStepPair(build, index)) {
    PostSend(build, index, op_index, build.last_compute);
  }
  ops.push_back(record);
  return absl::OkStatus();
}

void Engine::AddGradientSync(IterationBuild& build) {
  if (config_.parallel.data * config_.parallel.context <= 1 || config_.parallel.dp_sync_ns <= 0 ||
      config_.schedule == Schedule::kForwardOnly) {
    return;
  }
  // The gradient all-reduce over the data- and context-parallel replicas, after the last
  // backward and before the optimizer; the replicas run the same schedule, so none waits for
  // another.
  const int32_t node = NewNode(build.rank, build.iteration, KernelRole::kDataParallel,
                               StreamRole::kDataParallel, -1, &build.launch);
  Node& sync = nodes_[static_cast<size_t>(node)];
  const bool coalesced = config_.parallel.dp_sync_coalesced;
  sync.record.collective = coalesced ? CommKind::kReduceScatter : CommKind::kAllReduce;
  sync.record.coalesced = coalesced;
  sync.record.bytes = config_.parallel.tensor_elements * 2;
  sync.duration = config_.parallel.dp_sync_ns;
  sync.compute_prev = build.last_compute;
  build.last_compute = node;
  if (coalesced) {
    // The loss all-reduce after it on the group's stream: the one collective of the group
    // whose kernel names the group.
    const int32_t loss = NewNode(build.rank, build.iteration, KernelRole::kDataParallel,
                                 StreamRole::kDataParallel, -1, &build.launch);
    Node& reduce = nodes_[static_cast<size_t>(loss)];
    reduce.record.collective = CommKind::kAllReduce;
    reduce.record.bytes = kLossAllReduceBytes;
    reduce.duration = TransferNs(config_.link, kLossAllReduceBytes);
    reduce.compute_prev = build.last_compute;
    build.last_compute = loss;
  }
}

void Engine::AddOptimizer(IterationBuild& build) {
  if (config_.optimizer_ns <= 0 || config_.schedule == Schedule::kForwardOnly) return;
  int32_t node = NewNode(build.rank, build.iteration, KernelRole::kOptimizer, StreamRole::kCompute,
                         -1, &build.launch);
  nodes_[static_cast<size_t>(node)].duration = Jittered(config_.optimizer_ns);
  nodes_[static_cast<size_t>(node)].batch_wait = std::exchange(last_batch_, -1);
  nodes_[static_cast<size_t>(node)].compute_prev = build.last_compute;
  build.last_compute = node;
}

void Engine::AddIterationBarrier(IterationBuild& build) {
  if (!config_.iteration_barrier) return;
  int32_t node = NewNode(build.rank, build.iteration, KernelRole::kAllReduce,
                         StreamRole::kCollective, -1, &build.launch);
  Node& barrier = nodes_[static_cast<size_t>(node)];
  barrier.record.bytes = kBarrierBytes;
  barrier.duration = TransferNs(config_.link, kBarrierBytes);
  barrier.compute_prev = build.last_compute;
  barrier.batch_wait = std::exchange(last_batch_, -1);
  barriers_[static_cast<size_t>(build.iteration)].push_back(node);
}

absl::Status Engine::BuildIteration(int32_t rank, int32_t iteration,
                                    absl::flat_hash_map<MessageKey, int32_t>* sends,
                                    absl::flat_hash_map<MessageKey, int32_t>* recvs) {
  const int32_t stage = stage_of_rank_[static_cast<size_t>(rank)];
  const std::vector<Op>& program = programs_[static_cast<size_t>(stage)];
  const int32_t v = config_.virtual_stages;
  IterationBuild build;
  build.rank = rank;
  build.iteration = iteration;
  build.stage = stage;
  build.program = &program;
  build.sends = sends;
  build.recvs = recvs;
  build.last_kernel_of.assign(program.size(), -1);
  build.posted_recv.assign(program.size(), -1);
  // Batched interleaved (engine.h, "Batched p2p"): a steady-state step is a forward and the
  // backward after it. The backward's receive is posted with the forward's, before the step,
  // and the forward's send waits for the backward, so one batch between two steps holds the
  // sends of the one and the receives of the next.
  build.step_batches =
      config_.p2p == P2pStyle::kBatched && config_.schedule == Schedule::kInterleaved1F1B;
  // Steps pair up only after the warm-up forwards (none when every forward is warm-up).
  build.warmup =
      static_cast<size_t>(std::min(config_.microbatches * v, 2 * (p_ - stage - 1) + (v - 1) * p_));
  for (size_t index = 0; index < program.size(); ++index) {
    BUBBLESCOPE_RETURN_IF_ERROR(BuildOp(build, index));
  }
  CloseBatch(&build.launch);
  AddGradientSync(build);
  AddOptimizer(build);
  AddIterationBarrier(build);
  IterationState& state = iterations_[static_cast<size_t>(rank)][static_cast<size_t>(iteration)];
  last_batch_ = -1;
  state.launches = build.launch;
  state.sync_correlation = ++correlations_[static_cast<size_t>(rank)];
  return absl::OkStatus();
}

}  // namespace bubblescope::sim::engine_internal
