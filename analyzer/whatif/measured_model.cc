// The what-if model of a measured pipeline: built from the job's analyses, checked when read
// back from a file, and edited into the variants the root causes and the trade-offs ask about.
#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "index/memory_peak.h"
#include "pipeline/sim_schedule.h"
#include "whatif/whatif.h"

namespace bubblescope::whatif {
namespace {

// Bounds on a model read from a file, so a hostile one cannot ask for unbounded work.
constexpr int32_t kMaxStages = 4096;
constexpr int32_t kMaxMicrobatches = 1 << 20;
constexpr int32_t kMaxVirtualStages = 1024;

}  // namespace

absl::StatusOr<Model> ModelOf(const Input& input) {
  if (input.shape == nullptr) {
    return absl::FailedPreconditionError("the pipeline's shape is unknown");
  }
  const schedule_inference::Result& shape = *input.shape;
  if (shape.stages.size() != static_cast<size_t>(shape.p) || shape.p < 1) {
    return absl::FailedPreconditionError(
        "per-stage forward/backward times are unknown, so the job cannot be modelled");
  }
  if (!shape.stage_counts_fit) {
    return absl::FailedPreconditionError(
        "per-stage op counts do not fit the schedule, so the per-stage times are not reliable");
  }
  Model model;
  model.schedule = pipeline::SimScheduleOf(shape.family);
  model.p = shape.p;
  model.m = shape.m;
  model.v = shape.v;
  model.multi_chunk_zero_bubble =
      shape.family == schedule_inference::ScheduleFamily::kZeroBubble && shape.v > 1;
  model.measured_iteration_ns = input.bubble->latency.p50;
  model.measured_bubble_fraction = input.bubble->bubble_fraction;
  model.batched_p2p = input.batched_p2p;
  const double chunks = static_cast<double>(shape.v);
  std::map<int32_t, int32_t> stage_of_rank;
  for (const schedule_inference::StageFigures& figures : shape.stages) {
    StageModel stage{.rank = figures.rank,
                     .forward_ns = figures.forward.mean_ns * chunks,
                     .backward_ns = figures.backward.mean_ns * chunks,
                     .weight_grad_ns = figures.weight_grad.mean_ns * chunks};
    model.separate_weight_grad |= figures.weight_grad.count > 0;
    for (const Rank& traced : input.trace->ranks) {
      if (traced.rank != figures.rank) continue;
      // The rank's peaks as the bubble figures hold them (index::RankIndex::memory): one figure
      // for the per-rank tables and the model.
      MemoryPeak memory;
      for (const bubble::RankTotals& totals : input.bubble->per_rank) {
        if (totals.rank == traced.rank) memory = totals.memory;
      }
      stage.memory_floor_bytes = memory.lowest_allocated_bytes;
      stage.memory_peak_bytes = memory.allocated_bytes;
      if (!traced.devices.empty() && traced.devices.front().total_memory_bytes > 0 &&
          memory.reserved_bytes >= 0) {
        stage.memory_headroom_bytes =
            std::min(traced.devices.front().total_memory_bytes, kMaxMemoryBytes) -
            std::min(memory.reserved_bytes, kMaxMemoryBytes);
      }
      break;
    }
    const size_t index = model.stages.size();
    if (input.layers_per_stage.size() == shape.stages.size()) {
      stage.layers = input.layers_per_stage[index];
    }
    // Recomputation happens inside the backward ops, once per backward: per microbatch over
    // all chunks it is the total over the backwards, times v.
    if (input.recompute_ns.size() == shape.stages.size() && figures.backward.count > 0) {
      stage.recompute_ns =
          std::min(stage.backward_ns, static_cast<double>(input.recompute_ns[index]) /
                                          static_cast<double>(figures.backward.count) * chunks);
    }
    stage_of_rank[figures.rank] = static_cast<int32_t>(index);
    model.stages.push_back(stage);
  }
  for (const link_stats::Link& link : *input.links) {
    const auto src = stage_of_rank.find(link.src);
    const auto dst = stage_of_rank.find(link.dst);
    // A link whose transfers have no times of their own (batches with two peers) has no
    // measured cost; the model leaves it free rather than charge the batch's waiting to it.
    if (src == stage_of_rank.end() || dst == stage_of_rank.end() || link.timed_transfers == 0) {
      continue;
    }
    model.links.push_back(LinkCost{src->second, dst->second, link.transfer_median_ns});
  }
  return model;
}

absl::Status ValidateModel(const Model& model) {
  if (model.p < 1 || model.p > kMaxStages) {
    return absl::InvalidArgumentError(
        absl::StrCat("p is ", model.p, "; it must be 1 to ", kMaxStages));
  }
  if (model.m < 1 || model.m > kMaxMicrobatches || model.v < 1 || model.v > kMaxVirtualStages) {
    return absl::InvalidArgumentError(absl::StrCat("m is ", model.m, " and v is ", model.v,
                                                   "; m must be 1 to ", kMaxMicrobatches,
                                                   " and v 1 to ", kMaxVirtualStages));
  }
  if (model.stages.size() != static_cast<size_t>(model.p)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model has ", model.stages.size(), " stages but p is ", model.p));
  }
  for (size_t s = 0; s < model.stages.size(); ++s) {
    const StageModel& stage = model.stages[s];
    for (double time : {stage.forward_ns, stage.backward_ns, stage.weight_grad_ns}) {
      if (!std::isfinite(time) || time < 0.0 || time > 1e15) {
        return absl::InvalidArgumentError(
            absl::StrCat("stage ", s, " has a time per microbatch outside 0 to 1e15 ns"));
      }
    }
    if (!std::isfinite(stage.recompute_ns) || stage.recompute_ns < 0.0 ||
        stage.recompute_ns > stage.backward_ns) {
      return absl::InvalidArgumentError(
          absl::StrCat("stage ", s, " recomputes outside 0 to its backward time"));
    }
    // Memory figures within kMaxMemoryBytes (the headroom may be negative: over-reserved), so
    // no prediction of memory can overflow.
    if (stage.memory_floor_bytes < -1 || stage.memory_floor_bytes > kMaxMemoryBytes ||
        stage.memory_peak_bytes < -1 || stage.memory_peak_bytes > kMaxMemoryBytes ||
        stage.memory_headroom_bytes < -kMaxMemoryBytes ||
        stage.memory_headroom_bytes > kMaxMemoryBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "stage ", s, " has a memory figure outside 0 to 2^53 bytes (-1 for unknown)"));
    }
    if (stage.memory_peak_bytes >= 0 && stage.memory_floor_bytes > stage.memory_peak_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("stage ", s, " has a memory floor above its peak"));
    }
    if (stage.layers < 0) {
      return absl::InvalidArgumentError(absl::StrCat("stage ", s, " has negative layers"));
    }
  }
  if (model.links.size() > 4 * model.stages.size() * model.stages.size()) {
    return absl::InvalidArgumentError("the model has more links than stage pairs");
  }
  for (const LinkCost& link : model.links) {
    if (link.src_stage < 0 || link.src_stage >= model.p || link.dst_stage < 0 ||
        link.dst_stage >= model.p || link.transfer_ns < 0) {
      return absl::InvalidArgumentError(absl::StrCat("link ", link.src_stage, "->", link.dst_stage,
                                                     " names a stage outside 0 to p-1 or a "
                                                     "negative transfer time"));
    }
  }
  return absl::OkStatus();
}

Model WithStageAtMean(Model model, int32_t stage) {
  if (stage < 0 || static_cast<size_t>(stage) >= model.stages.size()) return model;
  StageModel mean;
  const double count = static_cast<double>(model.stages.size());
  for (const StageModel& each : model.stages) {
    mean.forward_ns += each.forward_ns / count;
    mean.backward_ns += each.backward_ns / count;
    mean.weight_grad_ns += each.weight_grad_ns / count;
  }
  StageModel& slow = model.stages[static_cast<size_t>(stage)];
  slow.forward_ns = mean.forward_ns;
  slow.backward_ns = mean.backward_ns;
  slow.weight_grad_ns = mean.weight_grad_ns;
  return model;
}

Model WithLinkTransfer(Model model, int32_t src_stage, int32_t dst_stage, TimeNs transfer_ns) {
  for (LinkCost& link : model.links) {
    if (link.src_stage == src_stage && link.dst_stage == dst_stage) link.transfer_ns = transfer_ns;
  }
  return model;
}

Model WithoutRecompute(Model model) {
  for (StageModel& stage : model.stages) {
    stage.backward_ns -= stage.recompute_ns;
    stage.recompute_ns = 0.0;
  }
  return model;
}

Model WithHostGaps(Model model, const std::vector<TimeNs>& gap_per_iteration_ns) {
  const size_t stages = std::min(model.stages.size(), gap_per_iteration_ns.size());
  for (size_t s = 0; s < stages; ++s) {
    StageModel& stage = model.stages[s];
    // Each rank runs every microbatch's ops once per chunk in an iteration.
    const double ops_ns = static_cast<double>(model.m) * static_cast<double>(model.v) *
                          (stage.forward_ns + stage.backward_ns + stage.weight_grad_ns);
    const auto gap = static_cast<double>(gap_per_iteration_ns[s]);
    if (ops_ns <= 0.0 || gap <= 0.0) continue;
    const double stretch = 1.0 + gap / ops_ns;
    stage.forward_ns *= stretch;
    stage.backward_ns *= stretch;
    stage.weight_grad_ns *= stretch;
    stage.recompute_ns *= stretch;
  }
  return model;
}

Model WithFreeLinks(Model model) {
  for (LinkCost& link : model.links) link.transfer_ns = 0;
  return model;
}

}  // namespace bubblescope::whatif
