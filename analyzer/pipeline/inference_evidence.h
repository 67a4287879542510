// What supports each fact about a pipeline that the trace does not state outright: its stage
// order, its transfers' peers and its schedule family (docs/json-report.md, "evidence"). Each
// gets the source it came from and how strong that source is, so reports can call a weak one a
// guess instead of presenting it as read from the trace. Clock offsets and forward / backward
// labels carry their own evidence (crossrank/clock_alignment.h, schedule_inference.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "pipeline/p2p_graph.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::inference_evidence {

enum class Strength : uint8_t {
  kRead,    // the trace names it: annotations with stage numbers, recorded peer ranks
  kStrong,  // derived from facts the trace records that agree with each other
  kWeak,    // a guess from timing or from what usually happens
  kNone,    // not known at all
};

std::string_view StrengthName(Strength strength);  // "read", "strong", "weak", "none"

struct Fact {
  // stage_order: "annotations", "recorded_peers", "transfer_timing", "batched_transfer_rhythm",
  //   "rank_order" (unknown);
  // peers: "recorded", "pp_action", "only_neighbour" (p = 2), "inferred" (the weakest source
  //   any op needed), "none" (no op has a peer);
  // schedule_family: "annotations", "p2p", "unknown".
  std::string_view source;
  Strength strength = Strength::kNone;
};

struct Evidence {
  Fact stage_order;
  Fact peers;
  Fact schedule_family;
  // The order that decided the family (schedule_inference::FamilyRuleName), "" without a shape:
  // e.g. "forwards_first" (every rank ran all its forwards before its first backward: gpipe, over
  // every chunk when v > 1) against "backward_before_last_forward" (1f1b, interleaved).
  std::string_view schedule_family_rule;
  // The pipeline's p2p ops by where their peer came from, indexed by p2p_graph::PeerSource.
  std::array<int64_t, 4> peers_by_source = {};
};

Evidence Analyze(const p2p_graph::Pipeline& pipeline,
                 const std::optional<schedule_inference::Result>& shape);

}  // namespace bubblescope::inference_evidence
