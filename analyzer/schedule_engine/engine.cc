#include "schedule_engine/engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "schedule_engine/engine_state.h"

namespace bubblescope::sim {
namespace engine_internal {

bool Engine::TryStart(Node& node) {
  // A batch starts as one kernel, with its first node.
  if (node.record.batch_follower) return false;
  const IterationState& state =
      iterations_[static_cast<size_t>(node.rank)][static_cast<size_t>(node.record.iteration)];
  if (!state.start_known) return false;
  TimeNs start = state.start + (node.launch_index + 1) * config_.launch_gap_ns;  // launch end
  // The stream predecessor is finished: streams are resolved strictly in order.
  if (node.stream_prev >= 0)
    start = std::max(start, nodes_[static_cast<size_t>(node.stream_prev)].record.end);
  const size_t first = node.batch_leader >= 0 ? static_cast<size_t>(node.batch_leader) : 0;
  const size_t members = node.batch_leader >= 0 ? static_cast<size_t>(node.batch_size) : 1;
  for (size_t k = 0; k < members; ++k) {
    const Node& member = node.batch_leader >= 0 ? nodes_[first + k] : node;
    for (int32_t wait : {member.compute_prev, member.input, member.batch_wait}) {
      if (wait < 0) continue;
      const Node& other = nodes_[static_cast<size_t>(wait)];
      if (!other.done) return false;
      start = std::max(start, other.record.end);
    }
  }
  for (size_t k = 0; k < members; ++k) {
    Node& member = node.batch_leader >= 0 ? nodes_[first + k] : node;
    member.record.launch_start = state.start + member.launch_index * config_.launch_gap_ns;
    member.record.launch_end = member.record.launch_start + config_.launch_gap_ns;
    if (member.post_index >= 0) {
      member.record.post_start = state.start + member.post_index * config_.launch_gap_ns;
      member.record.post_end = member.record.post_start + config_.launch_gap_ns;
    }
    member.record.start = start;
    member.started = true;
  }
  return true;
}

bool Engine::TryFinish(Node& node) {
  if (node.record.role == KernelRole::kAllReduce) {
    TimeNs last_start = node.record.start;
    for (int32_t member : barriers_[static_cast<size_t>(node.record.iteration)]) {
      const Node& other = nodes_[static_cast<size_t>(member)];
      if (!other.started) return false;
      last_start = std::max(last_start, other.record.start);
    }
    node.record.end = last_start + node.duration;
    if (config_.collective_tail_ns > 0) {
      // Work after the reduction: each member's kernel ends a little after the common end.
      const double draw =
          KeyedUniform(config_.seed ^ 0x7461696cULL, static_cast<uint64_t>(node.record.iteration),
                       static_cast<uint64_t>(node.rank), 0);
      node.record.end += static_cast<TimeNs>(
          std::llround(0.5 * (draw + 1.0) * static_cast<double>(config_.collective_tail_ns)));
    }
  } else if (node.batch_leader >= 0) {
    // A batch ends when the last of its transfers has completed.
    const auto first = static_cast<size_t>(node.batch_leader);
    TimeNs end = node.record.start;
    for (size_t k = 0; k < static_cast<size_t>(nodes_[first].batch_size); ++k) {
      const Node& member = nodes_[first + k];
      const Node& partner = nodes_[static_cast<size_t>(member.partner)];
      if (!partner.started) return false;
      end = std::max(end, std::max(member.record.start, partner.record.start) + member.duration);
    }
    node.record.end = end;
  } else if (IsP2p(node.record.role)) {
    const Node& partner = nodes_[static_cast<size_t>(node.partner)];
    if (!partner.started) return false;
    node.record.end = std::max(node.record.start, partner.record.start) + node.duration;
  } else {
    node.record.end = node.record.start + node.duration;
  }
  node.done = true;
  IterationState& state =
      iterations_[static_cast<size_t>(node.rank)][static_cast<size_t>(node.record.iteration)];
  state.gpu_end = std::max(state.gpu_end, node.record.end);
  if (--state.pending == 0) FinishIteration(node.rank, node.record.iteration);
  return true;
}

void Engine::FinishIteration(int32_t rank, int32_t iteration) {
  std::vector<IterationState>& states = iterations_[static_cast<size_t>(rank)];
  const IterationState& state = states[static_cast<size_t>(iteration)];
  StepRecord step;
  step.iteration = iteration;
  step.start = state.start;
  step.sync_start = state.start + state.launches * config_.launch_gap_ns;
  step.end = std::max(step.sync_start, state.gpu_end);
  step.sync_correlation = state.sync_correlation;
  steps_[static_cast<size_t>(rank)].push_back(step);
  if (static_cast<size_t>(iteration) + 1 < states.size()) {
    states[static_cast<size_t>(iteration) + 1].start_known = true;
    states[static_cast<size_t>(iteration) + 1].start = step.end + config_.iteration_gap_ns;
  }
}

absl::Status Engine::Resolve() {
  size_t remaining = nodes_.size();
  std::vector<std::array<size_t, kStreamRoleCount>> heads(static_cast<size_t>(p_));
  for (auto& rank_heads : heads) rank_heads.fill(0);
  // Sweeping the ranks alternately up and down lets forward and backward traffic both travel
  // many hops per sweep.
  bool upward = true;
  while (remaining > 0) {
    bool progress = false;
    for (int32_t i = 0; i < p_; ++i) {
      auto rank = static_cast<size_t>(upward ? i : p_ - 1 - i);
      for (size_t role = 0; role < kStreamRoleCount; ++role) {
        const std::vector<int32_t>& list = stream_nodes_[rank][role];
        size_t& head = heads[rank][role];
        while (head < list.size()) {
          Node& node = nodes_[static_cast<size_t>(list[head])];
          if (!node.started && TryStart(node)) progress = true;
          if (node.started && !node.done && TryFinish(node)) {
            progress = true;
            --remaining;
          }
          if (!node.done) break;
          ++head;
        }
      }
    }
    upward = !upward;
    if (!progress) return Deadlock(heads);
  }
  return absl::OkStatus();
}

absl::Status Engine::Deadlock(
    const std::vector<std::array<size_t, kStreamRoleCount>>& heads) const {
  std::string detail;
  for (size_t rank = 0; rank < heads.size() && detail.empty(); ++rank) {
    const std::vector<int32_t>& list = stream_nodes_[rank][0];
    if (heads[rank][0] < list.size()) {
      const Node& node = nodes_[static_cast<size_t>(list[heads[rank][0]])];
      detail = absl::StrCat("; rank ", rank, " compute stream waits at launch ", node.launch_index,
                            " of iteration ", node.record.iteration);
    }
  }
  return absl::InternalError(absl::StrCat(
      "simulator: schedule ", std::string(ScheduleName(config_.schedule)), " deadlocked", detail));
}

Records Engine::Collect() const {
  Records records;
  records.ranks.resize(static_cast<size_t>(p_));
  for (int32_t r = 0; r < p_; ++r) {
    RankRecord& out = records.ranks[static_cast<size_t>(r)];
    out.rank = r;
    out.stage = stage_of_rank_[static_cast<size_t>(r)];
    out.steps = steps_[static_cast<size_t>(r)];
    out.ops = ops_[static_cast<size_t>(r)];
    for (int32_t index : rank_nodes_[static_cast<size_t>(r)]) {
      out.kernels.push_back(nodes_[static_cast<size_t>(index)].record);
    }
    for (OpRecord& op : out.ops) {
      op.start = out.kernels[static_cast<size_t>(op.first_kernel)].start;
      op.end = out.kernels[static_cast<size_t>(op.first_kernel + op.kernel_count - 1)].end;
      op.cpu_start = out.kernels[static_cast<size_t>(op.first_kernel)].launch_start;
      op.cpu_end =
          out.kernels[static_cast<size_t>(op.first_kernel + op.kernel_count - 1)].launch_end;
    }
    for (const KernelRecord& kernel : out.kernels) {
      if (kernel.op < 0) continue;
      OpRecord& op = out.ops[static_cast<size_t>(kernel.op)];
      // Batched transfers are queued apart from their op (a forward's send may wait for the
      // next backward), as torch pipelining's send and receive actions are: the op's CPU range
      // is its compute.
      if (config_.p2p == P2pStyle::kBatched && IsP2p(kernel.role)) continue;
      // A KV exchange's first call comes before its launch.
      op.cpu_start =
          std::min(op.cpu_start, kernel.role == KernelRole::kContextParallel ? kernel.post_start
                                                                             : kernel.launch_start);
      op.cpu_end = std::max(op.cpu_end, kernel.launch_end);
    }
  }
  return records;
}

}  // namespace engine_internal

absl::StatusOr<Records> RunSchedule(const Config& config) {
  BUBBLESCOPE_RETURN_IF_ERROR(ValidateConfig(config));
  engine_internal::Engine engine(config);
  BUBBLESCOPE_RETURN_IF_ERROR(engine.Build());
  BUBBLESCOPE_RETURN_IF_ERROR(engine.Resolve());
  return engine.Collect();
}

}  // namespace bubblescope::sim
