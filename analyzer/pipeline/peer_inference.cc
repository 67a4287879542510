#include "pipeline/peer_inference.h"

#include "pipeline/segment_ops.h"

namespace bubblescope::peer_inference {

std::optional<std::vector<int32_t>> InferPeers(const pipeline::IssuedTimeline& timeline,
                                               size_t stage,
                                               const std::vector<int32_t>& stage_order,
                                               bool pipeline_has_backward) {
  using pipeline::ItemKind;
  using pipeline::Payload;
  const size_t p = stage_order.size();
  const int32_t next = stage_order[(stage + 1) % p];
  const int32_t previous = stage_order[(stage + p - 1) % p];
  if (pipeline_has_backward && p > 2 && !pipeline::HasPhaseHints(timeline)) return std::nullopt;

  const std::vector<Payload> payloads = pipeline::TransferPayloads(timeline, stage == 0);
  std::vector<int32_t> peers;
  for (size_t i = 0; i < timeline.items.size(); ++i) {
    const ItemKind kind = timeline.items[i].kind;
    if (kind == ItemKind::kCompute) continue;
    const bool send = kind == ItemKind::kSend;
    if (p == 2) {
      peers.push_back(next);  // the only neighbour, both ways
    } else if (!pipeline_has_backward) {
      peers.push_back(send ? next : previous);  // activations only
    } else if (payloads[i] == Payload::kUnknown) {
      peers.push_back(-1);
    } else {
      // An activation goes on to the next stage and comes from the previous; a gradient the
      // other way round.
      const bool activation = payloads[i] == Payload::kActivation;
      peers.push_back(send == activation ? next : previous);
    }
  }
  return peers;
}

}  // namespace bubblescope::peer_inference
