#include "schedule_engine/program.h"

#include <algorithm>

namespace bubblescope::sim {
namespace {

// The classic 1F1B order over `forwards` and `backwards` (the same length): `warmup` forwards,
// then forward/backward pairs until the forwards run out, then the remaining backwards.
std::vector<Op> OneForwardOneBackward(const std::vector<Op>& forwards,
                                      const std::vector<Op>& backwards, size_t warmup) {
  std::vector<Op> program;
  program.reserve(forwards.size() + backwards.size());
  warmup = std::min(warmup, forwards.size());
  for (size_t k = 0; k < warmup; ++k) program.push_back(forwards[k]);
  size_t steady = forwards.size() - warmup;
  for (size_t k = 0; k < steady; ++k) {
    program.push_back(forwards[warmup + k]);
    program.push_back(backwards[k]);
  }
  for (size_t k = steady; k < backwards.size(); ++k) program.push_back(backwards[k]);
  return program;
}

std::vector<Op> Sequence(OpType type, int32_t microbatches) {
  std::vector<Op> ops;
  ops.reserve(static_cast<size_t>(microbatches));
  for (int32_t j = 0; j < microbatches; ++j) ops.push_back(Op{type, 0, j});
  return ops;
}

// torch's ScheduleGPipe: every forward in microbatch order, then every backward in the same order.
std::vector<Op> GpipeProgram(int32_t m) {
  std::vector<Op> program = Sequence(OpType::kForward, m);
  std::vector<Op> backwards = Sequence(OpType::kBackward, m);
  program.insert(program.end(), backwards.begin(), backwards.end());
  return program;
}

// torch's ScheduleLoopedBFS, GPipe over v chunks per rank (breadth first): every forward of
// chunk 0, then of chunk 1, ..., then the backwards chunk by chunk from the last, each chunk's in
// reverse microbatch order (the last microbatch's loss is ready first). torch writes the
// backwards so (schedules.py, _calculate_single_rank_operations), and its traces show it.
std::vector<Op> LoopedBreadthFirst(int32_t m, int32_t v) {
  std::vector<Op> program;
  program.reserve(2 * static_cast<size_t>(m) * static_cast<size_t>(v));
  for (int32_t chunk = 0; chunk < v; ++chunk) {
    for (int32_t j = 0; j < m; ++j) program.push_back(Op{OpType::kForward, chunk, j});
  }
  for (int32_t chunk = v - 1; chunk >= 0; --chunk) {
    for (int32_t j = m - 1; j >= 0; --j) program.push_back(Op{OpType::kBackward, chunk, j});
  }
  return program;
}

// Megatron's interleaved order: virtual step k of a rank covers microbatch (k / (p*v))*p + k % p
// of chunk (k / p) % v going forward, and chunk v-1-((k/p) % v) going backward.
std::vector<Op> InterleavedSequence(OpType type, int32_t p, int32_t m, int32_t v) {
  std::vector<Op> ops;
  ops.reserve(static_cast<size_t>(m) * static_cast<size_t>(v));
  for (int32_t k = 0; k < m * v; ++k) {
    int32_t group = (k / p) % v;
    int32_t chunk = type == OpType::kForward ? group : v - 1 - group;
    ops.push_back(Op{type, chunk, (k / (p * v)) * p + k % p});
  }
  return ops;
}

// ZB-H1: the 1F1B order with W(j) placed right after B(j + lag), lag = s. Stage s of 1F1B
// finishes its last B about s backward slots before stage 0; deferring its weight gradients by
// s microbatches keeps its B's (which the earlier stages wait for) early and fills that drain
// with W's, while stage 0, which has no drain, runs each W right after its B. The W's that have
// no such B go at the end.
std::vector<Op> ZeroBubbleH1(const std::vector<Op>& one_f_one_b, int32_t lag, int32_t m) {
  std::vector<Op> program;
  program.reserve(one_f_one_b.size() + static_cast<size_t>(m));
  int32_t next_w = 0;
  for (const Op& op : one_f_one_b) {
    program.push_back(op);
    if (op.type == OpType::kBackward && op.microbatch - lag >= 0) {
      program.push_back(Op{OpType::kWeightGrad, 0, op.microbatch - lag});
      next_w = op.microbatch - lag + 1;
    }
  }
  for (int32_t j = next_w; j < m; ++j) program.push_back(Op{OpType::kWeightGrad, 0, j});
  return program;
}

}  // namespace

char OpLetter(OpType type) {
  switch (type) {
    case OpType::kForward:
      return 'F';
    case OpType::kBackward:
      return 'B';
    case OpType::kWeightGrad:
      return 'W';
  }
  return '?';
}

std::vector<Op> StageProgram(const Config& config, int32_t stage) {
  const int32_t p = config.stages;
  const int32_t m = config.microbatches;
  const int32_t v = config.virtual_stages;
  switch (config.schedule) {
    case Schedule::kForwardOnly:
      return Sequence(OpType::kForward, m);
    case Schedule::kGpipe:
      return v == 1 ? GpipeProgram(m) : LoopedBreadthFirst(m, v);
    case Schedule::k1F1B:
      return OneForwardOneBackward(Sequence(OpType::kForward, m), Sequence(OpType::kBackward, m),
                                   static_cast<size_t>(p - 1 - stage));
    case Schedule::kZeroBubbleH1:
      return ZeroBubbleH1(
          OneForwardOneBackward(Sequence(OpType::kForward, m), Sequence(OpType::kBackward, m),
                                static_cast<size_t>(p - 1 - stage)),
          stage, m);
    case Schedule::kInterleaved1F1B: {
      size_t warmup = static_cast<size_t>((p - stage - 1) * 2 + (v - 1) * p);
      return OneForwardOneBackward(InterleavedSequence(OpType::kForward, p, m, v),
                                   InterleavedSequence(OpType::kBackward, p, m, v), warmup);
    }
  }
  return {};
}

std::optional<StageOp> InputOf(const Config& config, const StageOp& consumer) {
  const int32_t last = config.stages - 1;
  const int32_t s = consumer.stage;
  const Op& op = consumer.op;
  switch (op.type) {
    case OpType::kForward:
      if (s > 0) return StageOp{s - 1, op};
      if (op.chunk > 0) return StageOp{last, Op{OpType::kForward, op.chunk - 1, op.microbatch}};
      return std::nullopt;
    case OpType::kBackward:
      if (s < last) return StageOp{s + 1, op};
      if (op.chunk < config.virtual_stages - 1) {
        return StageOp{0, Op{OpType::kBackward, op.chunk + 1, op.microbatch}};
      }
      return StageOp{s, Op{OpType::kForward, op.chunk, op.microbatch}};
    case OpType::kWeightGrad:
      return StageOp{s, Op{OpType::kBackward, op.chunk, op.microbatch}};
  }
  return std::nullopt;
}

std::optional<StageOp> RemoteConsumerOf(const Config& config, const StageOp& producer) {
  const int32_t last = config.stages - 1;
  const int32_t s = producer.stage;
  const Op& op = producer.op;
  std::optional<StageOp> consumer;
  switch (op.type) {
    case OpType::kForward:
      if (s < last) {
        consumer = StageOp{s + 1, op};
      } else if (op.chunk < config.virtual_stages - 1) {
        consumer = StageOp{0, Op{OpType::kForward, op.chunk + 1, op.microbatch}};
      }
      break;
    case OpType::kBackward:
      if (s > 0) {
        consumer = StageOp{s - 1, op};
      } else if (op.chunk > 0) {
        consumer = StageOp{last, Op{OpType::kBackward, op.chunk - 1, op.microbatch}};
      }
      break;
    case OpType::kWeightGrad:
      break;
  }
  if (consumer.has_value() && consumer->stage == s) return std::nullopt;  // p == 1: local
  return consumer;
}

}  // namespace bubblescope::sim
