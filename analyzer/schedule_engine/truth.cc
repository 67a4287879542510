#include "schedule_engine/truth.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "schedule_engine/engine.h"
#include "schedule_engine/memory.h"

namespace bubblescope::sim {
namespace {

struct Span {
  TimeNs start = 0;
  TimeNs end = 0;
};

bool IsCompute(KernelRole role) {
  return role == KernelRole::kCompute || role == KernelRole::kOptimizer;
}

// `spans` clipped to [lo, hi], sorted and merged: pairwise disjoint.
std::vector<Span> Merged(std::vector<Span> spans, TimeNs lo, TimeNs hi) {
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.start < b.start; });
  std::vector<Span> merged;
  for (Span span : spans) {
    span.start = std::max(span.start, lo);
    span.end = std::min(span.end, hi);
    if (span.end <= span.start) continue;
    if (!merged.empty() && span.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, span.end);
    } else {
      merged.push_back(span);
    }
  }
  return merged;
}

// Length of (union of `comm`) minus (union of `compute`), both clipped to [lo, hi]. `compute`
// is sorted and pairwise disjoint.
TimeNs CommOnlyTime(std::vector<Span> comm, const std::vector<Span>& compute, TimeNs lo,
                    TimeNs hi) {
  const std::vector<Span> merged = Merged(std::move(comm), lo, hi);
  TimeNs covered = 0;
  TimeNs overlap = 0;
  size_t c = 0;
  for (const Span& span : merged) {
    covered += span.end - span.start;
    while (c < compute.size() && compute[c].end <= span.start) ++c;
    for (size_t k = c; k < compute.size() && compute[k].start < span.end; ++k) {
      overlap += std::max<TimeNs>(
          0, std::min(span.end, compute[k].end) - std::max(span.start, compute[k].start));
    }
  }
  return covered - overlap;
}

// The kernels of one iteration of one rank: launch order is iteration by iteration, so they
// are one contiguous range.
struct KernelRange {
  size_t begin = 0;
  size_t end = 0;
};

std::vector<KernelRange> IterationRanges(const RankRecord& rank, int32_t iterations) {
  std::vector<KernelRange> ranges(static_cast<size_t>(iterations));
  size_t k = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    ranges[i].begin = k;
    while (k < rank.kernels.size() && rank.kernels[k].iteration == static_cast<int32_t>(i)) ++k;
    ranges[i].end = k;
  }
  return ranges;
}

RankIterationTruth RankFigures(const RankRecord& rank, KernelRange range, TimeNs window_start,
                               TimeNs window_end) {
  RankIterationTruth figures;
  figures.rank = rank.rank;
  figures.stage = rank.stage;
  std::vector<Span> work;  // compute and the in-stage communication: the stage's work
  std::vector<Span> comm;
  std::vector<Span> data;  // the data-parallel gradient sync
  for (size_t k = range.begin; k < range.end; ++k) {
    const KernelRecord& kernel = rank.kernels[k];
    if (IsCompute(kernel.role)) {
      // Compute kernels share one stream, so they never overlap.
      figures.split.compute += kernel.end - kernel.start;
      work.push_back({kernel.start, kernel.end});
    } else if (InStageRole(kernel.role)) {
      work.push_back({kernel.start, kernel.end});
    } else {
      comm.push_back({kernel.start, kernel.end});
      if (kernel.role == KernelRole::kDataParallel) data.push_back({kernel.start, kernel.end});
    }
  }
  // A collective or KV exchange under a compute kernel counts once.
  const std::vector<Span> busy = Merged(std::move(work), window_start, window_end);
  TimeNs busy_ns = 0;
  for (const Span& span : busy) busy_ns += span.end - span.start;
  figures.split.in_stage_comm = busy_ns - figures.split.compute;
  // A rank with no work in the iteration idles the whole window, all of it counted as fill
  // (the bubble analysis's definition, docs/bubble.md).
  figures.first_compute_start = busy.empty() ? window_end : busy.front().start;
  figures.last_compute_end = busy.empty() ? window_end : busy.back().end;
  figures.split.idle = (window_end - window_start) - busy_ns;
  figures.split.fill = figures.first_compute_start - window_start;
  figures.split.drain = window_end - figures.last_compute_end;
  figures.split.stall = figures.split.idle - figures.split.fill - figures.split.drain;
  figures.split.comm_wait =
      CommOnlyTime(std::move(comm), busy, figures.first_compute_start, figures.last_compute_end);
  figures.split.empty = figures.split.stall - figures.split.comm_wait;
  figures.split.dp_sync = CommOnlyTime(std::move(data), busy, window_start, window_end);
  return figures;
}

// `ranges[r]` holds rank r's kernel ranges by iteration.
IterationTruth IterationFigures(const Records& records,
                                const std::vector<std::vector<KernelRange>>& ranges,
                                int32_t iteration) {
  IterationTruth truth;
  truth.iteration = iteration;
  truth.window_start = std::numeric_limits<TimeNs>::max();
  truth.window_end = std::numeric_limits<TimeNs>::min();
  for (size_t r = 0; r < records.ranks.size(); ++r) {
    KernelRange range = ranges[r][static_cast<size_t>(iteration)];
    for (size_t k = range.begin; k < range.end; ++k) {
      const KernelRecord& kernel = records.ranks[r].kernels[k];
      truth.window_start = std::min(truth.window_start, kernel.start);
      truth.window_end = std::max(truth.window_end, kernel.end);
    }
  }
  for (size_t r = 0; r < records.ranks.size(); ++r) {
    truth.ranks.push_back(RankFigures(records.ranks[r], ranges[r][static_cast<size_t>(iteration)],
                                      truth.window_start, truth.window_end));
    truth.idle += truth.ranks.back().split.idle;
  }
  TimeNs capacity = static_cast<TimeNs>(records.ranks.size()) * truth.window();
  truth.bubble_fraction =
      capacity > 0 ? static_cast<double>(truth.idle) / static_cast<double>(capacity) : 0.0;
  return truth;
}

OpTimeStats Stats(const std::vector<TimeNs>& durations) {
  OpTimeStats stats;
  stats.count = static_cast<int64_t>(durations.size());
  for (TimeNs duration : durations) stats.total_ns += duration;
  stats.mean_ns = durations.empty()
                      ? 0.0
                      : static_cast<double>(stats.total_ns) / static_cast<double>(durations.size());
  stats.p90_ns = NearestRankPercentile(durations, 90);
  return stats;
}

StageTruth StageFigures(const RankRecord& rank) {
  std::vector<TimeNs> durations[3];
  for (const OpRecord& op : rank.ops) {
    TimeNs total = 0;
    for (int32_t k = op.first_kernel; k < op.first_kernel + op.kernel_count; ++k) {
      const KernelRecord& kernel = rank.kernels[static_cast<size_t>(k)];
      if (IsCompute(kernel.role)) total += kernel.end - kernel.start;
    }
    durations[static_cast<size_t>(op.op.type)].push_back(total);
  }
  StageTruth stage;
  stage.stage = rank.stage;
  stage.rank = rank.rank;
  stage.forward = Stats(durations[static_cast<size_t>(OpType::kForward)]);
  stage.backward = Stats(durations[static_cast<size_t>(OpType::kBackward)]);
  stage.weight_grad = Stats(durations[static_cast<size_t>(OpType::kWeightGrad)]);
  stage.mean_total_ns = stage.forward.mean_ns + stage.backward.mean_ns + stage.weight_grad.mean_ns;
  return stage;
}

}  // namespace

TimeNs NearestRankPercentile(std::vector<TimeNs> values, int32_t percent) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  int64_t n = static_cast<int64_t>(values.size());
  int64_t rank = std::max<int64_t>(1, (percent * n + 99) / 100);
  return values[static_cast<size_t>(std::min(rank, n) - 1)];
}

double ClosedFormIdealBubble(Schedule schedule, int32_t p, int32_t v, int32_t m) {
  if (p <= 0 || v <= 0 || m <= 0) return 0.0;
  // Idle slots of one stage, in units of one chunk's F + B: the fill and drain of the first and
  // last microbatch, and in looped GPipe with fewer microbatches than stages the wait of stage 0
  // between two chunks for microbatch 0 to come round the p ranks (p - m slots a chunk, forward
  // and backward alike; docs/bubble.md).
  int64_t idle_slots = p - 1;
  if (schedule == Schedule::kGpipe && m < p) idle_slots += int64_t{v - 1} * (p - m);
  return static_cast<double>(idle_slots) / static_cast<double>(int64_t{v} * m + idle_slots);
}

double ScheduleIdealBubble(const Config& config) {
  const int32_t p = config.stages;
  const double closed_form =
      ClosedFormIdealBubble(config.schedule, p, config.virtual_stages, config.microbatches);
  if (config.schedule != Schedule::kZeroBubbleH1) return closed_form;
  Config ideal;
  ideal.schedule = config.schedule;
  ideal.stages = p;
  ideal.microbatches = config.microbatches;
  ideal.virtual_stages = config.virtual_stages;
  ideal.iterations = 1;
  ideal.kernels_per_op = 1;
  ideal.activation_bytes = 0;
  ideal.link = Link{.gbps = std::numeric_limits<double>::infinity(), .latency_ns = 0};
  ideal.iteration_barrier = false;
  StageCost mean;
  for (const StageCost& cost : config.costs) {
    mean.forward += cost.forward;
    mean.backward += cost.backward;
    mean.weight_grad += cost.weight_grad;
  }
  mean.forward /= p;
  mean.backward /= p;
  mean.weight_grad /= p;
  ideal.costs.assign(static_cast<size_t>(p), mean);
  absl::StatusOr<Records> records = RunSchedule(ideal);
  if (!records.ok()) return closed_form;  // the job itself ran, so this does not happen
  std::vector<std::vector<KernelRange>> ranges;
  for (const RankRecord& rank : records->ranks) ranges.push_back(IterationRanges(rank, 1));
  return IterationFigures(*records, ranges, 0).bubble_fraction;
}

Truth ComputeTruth(const Config& config, const Records& records) {
  Truth truth;
  const int32_t p = config.stages;
  truth.schedule = std::string(ScheduleName(config.schedule));
  truth.stages = p;
  truth.microbatches = config.microbatches;
  truth.virtual_stages = config.virtual_stages;
  std::vector<std::vector<KernelRange>> ranges;
  for (const RankRecord& rank : records.ranks) {
    ranges.push_back(IterationRanges(rank, config.iterations));
  }
  std::vector<TimeNs> windows;
  for (int32_t i = 0; i < config.iterations; ++i) {
    truth.iterations.push_back(IterationFigures(records, ranges, i));
    const IterationTruth& iteration = truth.iterations.back();
    truth.idle_ns += iteration.idle;
    truth.capacity_ns += static_cast<TimeNs>(p) * iteration.window();
    windows.push_back(iteration.window());
  }
  truth.bubble_fraction = truth.capacity_ns > 0 ? static_cast<double>(truth.idle_ns) /
                                                      static_cast<double>(truth.capacity_ns)
                                                : 0.0;
  truth.latency_p50_ns = NearestRankPercentile(windows, 50);
  truth.latency_p90_ns = NearestRankPercentile(windows, 90);
  truth.latency_max_ns = NearestRankPercentile(windows, 100);
  truth.theoretical_bubble_fraction = ScheduleIdealBubble(config);
  truth.per_stage.resize(static_cast<size_t>(p));
  for (const RankRecord& rank : records.ranks) {
    truth.per_stage[static_cast<size_t>(rank.stage)] = StageFigures(rank);
    RankMemoryTruth memory;
    memory.rank = rank.rank;
    for (const MemorySample& sample : MemorySamples(config, rank)) {
      memory.peak_allocated_bytes = std::max(memory.peak_allocated_bytes, sample.allocated_bytes);
      memory.peak_reserved_bytes = std::max(memory.peak_reserved_bytes, sample.reserved_bytes);
    }
    truth.memory.push_back(memory);
  }
  for (const StageTruth& stage : truth.per_stage) {
    if (stage.mean_total_ns >
        truth.per_stage[static_cast<size_t>(truth.slowest_stage)].mean_total_ns) {
      truth.slowest_stage = stage.stage;
    }
  }
  for (int32_t s = 0; s < p; ++s) truth.stage_to_rank.push_back(RankOfStage(config, s));
  return truth;
}

}  // namespace bubblescope::sim
