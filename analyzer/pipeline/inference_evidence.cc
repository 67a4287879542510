#include "pipeline/inference_evidence.h"

namespace bubblescope::inference_evidence {
namespace {

int64_t Count(const std::array<int64_t, 4>& by_source, p2p_graph::PeerSource source) {
  return by_source[static_cast<size_t>(source)];
}

Fact StageOrderFact(const p2p_graph::Pipeline& pipeline) {
  const pipeline::StageOrder& order = pipeline.order;
  if (!order.known) return {"rank_order", Strength::kNone};
  if (order.source == pipeline::ShapeSource::kAnnotations) return {"annotations", Strength::kRead};
  // Edges between ranks the trace records give the chain; without them it is read off when
  // transfers completed, which a late or descheduled rank can reorder.
  if (pipeline.peers_recorded) return {"recorded_peers", Strength::kStrong};
  if (pipeline.order_guessed) return {"batched_transfer_rhythm", Strength::kWeak};
  return {"transfer_timing", Strength::kWeak};
}

Fact PeersFact(const std::array<int64_t, 4>& by_source, size_t ranks) {
  using p2p_graph::PeerSource;
  // The weakest source any op needed speaks for the pipeline's links and clock offsets. Ops
  // left without a peer are counted, but are in no link, so they weaken nothing. With two ranks
  // the other one is every transfer's peer: nothing is guessed.
  if (Count(by_source, PeerSource::kInferred) > 0) {
    return ranks == 2 ? Fact{"only_neighbour", Strength::kStrong}
                      : Fact{"inferred", Strength::kWeak};
  }
  if (Count(by_source, PeerSource::kPpAction) > 0) return {"pp_action", Strength::kStrong};
  if (Count(by_source, PeerSource::kRecorded) > 0) return {"recorded", Strength::kRead};
  return {"none", Strength::kNone};
}

Fact ScheduleFamilyFact(const std::optional<schedule_inference::Result>& shape) {
  if (!shape.has_value()) return {"unknown", Strength::kNone};
  if (shape->schedule_source == pipeline::ShapeSource::kAnnotations) {
    return {"annotations", Strength::kRead};
  }
  // From the traffic's pattern: it holds when every stage's ops fit one pass of every
  // microbatch; otherwise the ops the family was read from were mis-split.
  return {"p2p", shape->stage_counts_fit ? Strength::kStrong : Strength::kWeak};
}

}  // namespace

std::string_view StrengthName(Strength strength) {
  switch (strength) {
    case Strength::kRead:
      return "read";
    case Strength::kStrong:
      return "strong";
    case Strength::kWeak:
      return "weak";
    case Strength::kNone:
      return "none";
  }
  return "none";
}

Evidence Analyze(const p2p_graph::Pipeline& pipeline,
                 const std::optional<schedule_inference::Result>& shape) {
  Evidence evidence;
  evidence.peers_by_source = pipeline.peers_by_source;
  evidence.stage_order = StageOrderFact(pipeline);
  evidence.peers = PeersFact(pipeline.peers_by_source, pipeline.order.ranks.size());
  evidence.schedule_family = ScheduleFamilyFact(shape);
  if (shape.has_value()) {
    evidence.schedule_family_rule = schedule_inference::FamilyRuleName(shape->family_rule);
  }
  return evidence;
}

}  // namespace bubblescope::inference_evidence
