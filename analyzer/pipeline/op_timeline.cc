#include "pipeline/op_timeline.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "pipeline/sim_schedule.h"
#include "schedule_engine/config.h"
#include "schedule_engine/program.h"

namespace bubblescope::op_timeline {
namespace {

using pipeline::OpType;
using pipeline::PipelineOp;

// Labels the ops [first, last) of one rank and step from `program` when their types run in
// exactly its order; ops an annotation labelled keep their microbatch, and take the program's
// chunk only where its microbatch agrees.
void LabelFromProgram(const std::vector<sim::Op>& program, std::vector<TimelineOp>::iterator first,
                      std::vector<TimelineOp>::iterator last) {
  if (static_cast<size_t>(last - first) != program.size()) return;
  for (size_t k = 0; k < program.size(); ++k) {
    const TimelineOp& op = first[static_cast<std::ptrdiff_t>(k)];
    if (op.type != pipeline::OpTypeOf(program[k].type)) return;
  }
  for (size_t k = 0; k < program.size(); ++k) {
    TimelineOp& op = first[static_cast<std::ptrdiff_t>(k)];
    if (op.label == LabelSource::kAnnotation) {
      if (op.chunk < 0 && op.microbatch == program[k].microbatch) op.chunk = program[k].chunk;
      continue;
    }
    op.microbatch = program[k].microbatch;
    op.chunk = program[k].chunk;
    op.label = LabelSource::kSchedule;
  }
}

// The rank's chunk of each virtual stage it runs: its virtual stages in increasing order.
std::vector<int32_t> ChunkOfVirtualStage(const schedule_inference::Result& shape) {
  std::vector<int32_t> chunk(shape.virtual_stage_ranks.size(), -1);
  for (int32_t rank : shape.stage_order) {
    int32_t next = 0;
    for (size_t vs = 0; vs < shape.virtual_stage_ranks.size(); ++vs) {
      if (shape.virtual_stage_ranks[vs] == rank) chunk[vs] = next++;
    }
  }
  return chunk;
}

// Iteration spans in start order, for finding the one that holds a moment.
struct Window {
  TimeNs start = 0;
  TimeNs end = 0;
  int64_t number = 0;
};

void SortByStart(std::vector<Window>* windows) {
  std::sort(windows->begin(), windows->end(),
            [](const Window& a, const Window& b) { return a.start < b.start; });
}

// The number of the last span starting at or before `time` that still holds it; -1 for none.
int64_t IterationAt(const std::vector<Window>& windows, TimeNs time) {
  auto it = std::upper_bound(windows.begin(), windows.end(), time,
                             [](TimeNs t, const Window& w) { return t < w.start; });
  if (it == windows.begin()) return -1;
  --it;
  return time <= it->end ? it->number : -1;
}

// Per rank (by bubble::Result::ranks position), the span of its own work in each iteration:
// the pipeline's windows overlap where one rank starts the next iteration before another ends
// the last (a CPU rank posting its next receive while its upstream neighbour still runs the
// backward ops of the last), and an op belongs to its own rank's iteration.
std::vector<std::vector<Window>> RankWorkSpans(const bubble::Result& bubble) {
  std::vector<std::vector<Window>> spans(bubble.ranks.size());
  for (const bubble::IterationFigures& iteration : bubble.iterations) {
    for (size_t i = 0; i < iteration.ranks.size() && i < spans.size(); ++i) {
      const bubble::RankIterationFigures& rank = iteration.ranks[i];
      if (!rank.present || rank.last_compute_end <= rank.first_compute_start) continue;
      spans[i].push_back({rank.first_compute_start, rank.last_compute_end, iteration.number});
    }
  }
  for (std::vector<Window>& rank : spans) SortByStart(&rank);
  return spans;
}

}  // namespace

std::string_view LabelSourceName(LabelSource source) {
  switch (source) {
    case LabelSource::kAnnotation:
      return "annotation";
    case LabelSource::kSchedule:
      return "schedule";
    case LabelSource::kNone:
      return "none";
  }
  return "unknown";
}

Result Build(const schedule_inference::Result& shape, const bubble::Result& bubble,
             const ClockOffsets& offsets) {
  std::vector<Window> windows;
  for (const bubble::IterationFigures& iteration : bubble.iterations) {
    if (iteration.window_end <= iteration.window_start) continue;
    windows.push_back({iteration.window_start, iteration.window_end, iteration.number});
  }
  SortByStart(&windows);
  const std::vector<std::vector<Window>> rank_spans = RankWorkSpans(bubble);
  const std::vector<int32_t> chunk_of = ChunkOfVirtualStage(shape);
  const int32_t p = static_cast<int32_t>(shape.stage_order.size());

  // Each op with its step, for grouping; ranks keep their ops' order (issue or start order).
  struct Placed {
    int32_t step = 0;
    TimelineOp op;
  };
  std::vector<Placed> placed;
  placed.reserve(shape.ops.size());
  for (const PipelineOp& op : shape.ops) {
    const auto position = std::find(shape.stage_order.begin(), shape.stage_order.end(), op.rank);
    if (position == shape.stage_order.end()) continue;
    TimelineOp out;
    out.rank = op.rank;
    out.stage = static_cast<int32_t>(position - shape.stage_order.begin());
    out.type = op.type;
    out.input_grad_only = op.input_grad_only;
    out.overlapped = op.overlapped;
    if (op.virtual_stage >= 0 && static_cast<size_t>(op.virtual_stage) < chunk_of.size()) {
      out.chunk = chunk_of[static_cast<size_t>(op.virtual_stage)];
    } else if (shape.v == 1) {
      out.chunk = 0;
    }
    if (op.microbatch >= 0) {
      out.microbatch = op.microbatch;
      out.label = LabelSource::kAnnotation;
    }
    const RankClock offset = offsets.Of(op.rank);
    const bool has_compute = op.compute_end > op.compute_start || op.compute_ns > 0;
    out.start = ClockOffsets::Move(has_compute ? op.compute_start : op.start, offset);
    out.end = has_compute ? ClockOffsets::Move(op.compute_end, offset) : out.start;
    const auto in_bubble = std::find(bubble.ranks.begin(), bubble.ranks.end(), op.rank);
    if (in_bubble != bubble.ranks.end()) {
      out.iteration =
          IterationAt(rank_spans[static_cast<size_t>(in_bubble - bubble.ranks.begin())], out.start);
    }
    if (out.iteration < 0) out.iteration = IterationAt(windows, out.start);
    placed.push_back({op.step, out});
  }
  // Rank by rank, step by step, in the order the shape measured them.
  std::stable_sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
    if (a.op.stage != b.op.stage) return a.op.stage < b.op.stage;
    return a.step < b.step;
  });
  Result result;
  result.ops.reserve(placed.size());
  for (Placed& entry : placed) result.ops.push_back(entry.op);

  const std::optional<std::vector<std::vector<sim::Op>>> programs =
      p == shape.p
          ? pipeline::StagePrograms(shape, static_cast<int64_t>(result.ops.size()) * 3 + 4096)
          : std::nullopt;
  if (programs) {
    size_t begin = 0;
    while (begin < placed.size()) {
      size_t end = begin;
      while (end < placed.size() && placed[end].op.stage == placed[begin].op.stage &&
             placed[end].step == placed[begin].step) {
        ++end;
      }
      const auto first = result.ops.begin() + static_cast<std::ptrdiff_t>(begin);
      const auto last = result.ops.begin() + static_cast<std::ptrdiff_t>(end);
      LabelFromProgram((*programs)[static_cast<size_t>(placed[begin].op.stage)], first, last);
      begin = end;
    }
  }
  std::stable_sort(result.ops.begin(), result.ops.end(),
                   [](const TimelineOp& a, const TimelineOp& b) {
                     if (a.stage != b.stage) return a.stage < b.stage;
                     return a.start < b.start;
                   });
  for (const TimelineOp& op : result.ops) {
    if (op.label == LabelSource::kNone) ++result.unlabelled;
  }
  return result;
}

}  // namespace bubblescope::op_timeline
