// The pipelines of a job, read from its point-to-point traffic (docs/cross-rank.md).
//
// Every send / recv a rank issued (index/rank_index.h: GPU p2p kernels, or the gloo ops of a
// CPU-only rank) is an edge of a directed graph between ranks when the trace records the peer
// (NCCL args, nccl:send annotations, the simulator). Each weakly connected component with traffic
// is one pipeline, ordered once (stage_order.h); an edge from the last stage back to the first
// makes it interleaved. Ranks without any p2p op are listed apart and are never put into a
// pipeline.
//
// Without any recorded peer (gloo traces, NCCL kernels without args) the graph cannot be drawn:
// GPU ranks split into pipelines by the rhythm of their transfers
// (pipeline::ChainByCompletionGaps, whose chains are their stage orders); otherwise by the
// process groups the ranks declare (distributedInfo.pg_config: a DP×PP job's pipelines are each
// a group): the one way to cover the ranks with traffic by disjoint declared groups of one size
// in which every group has a stage order; otherwise every rank with p2p ops forms one pipeline.
// Peers are then inferred from the stage order and what each transfer carries
// (peer_inference.h); a rank whose forward and backward cannot be told apart leaves them
// unknown, with a note. Ahead of that guess, a transfer the pipeline runtime named
// (`PP:{stage}SEND_F{mb}`, ...; transfer_actions.h) in a pipeline whose stage placement the
// annotations give has the rank of the stage at its other end as its peer.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bubblescope/trace.h"
#include "index/rank_index.h"
#include "pipeline/issued_items.h"
#include "pipeline/pipeline_op.h"
#include "pipeline/stage_order.h"
#include "pipeline/transfer_actions.h"

namespace bubblescope::p2p_graph {

// Where a transfer's peer came from, strongest first.
enum class PeerSource : uint8_t {
  kRecorded,  // the trace's own args (NCCL metadata, record_param_comms, nccl:send ranges)
  kPpAction,  // the pipeline runtime's name for the transfer (pipeline/transfer_actions.h)
  kInferred,  // guessed from the stage order and what the transfer carries (peer_inference.h)
  kUnknown,
};

std::string_view PeerSourceName(PeerSource source);  // "recorded", "pp_action", "inferred", ...

struct P2pOp {
  bool send = false;
  int32_t peer = -1;  // global rank of the other end; -1 when unknown
  PeerSource peer_source = PeerSource::kUnknown;
  int64_t bytes = -1;  // -1 when unknown
  // A GPU p2p kernel, which runs until its peer's matching kernel has started and both complete
  // together (NCCL); a CPU gloo op is buffered and may complete before its peer posts.
  bool rendezvous = false;
  // The transfers of one batch kernel carrying several (index::DeviceOp::batched) share a key
  // (unique on the rank); -1 for a transfer with a kernel of its own. A batch kernel ends when
  // its last transfer completes, so its end times that one transfer only when the kernel at the
  // other end carried exactly the same transfers.
  int64_t batch = -1;
  TimeNs issue = 0;  // launch (GPU) or op start (CPU), on the rank's own clock
  TimeNs start = 0;
  TimeNs end = 0;  // CPU: when the transfer completed (index::DeviceOp::transfer_end)
};

struct RankOps {
  int32_t rank = -1;
  std::vector<P2pOp> ops;  // every p2p op outside optimizer steps, in issue order
};

struct Pipeline {
  pipeline::StageOrder order;  // ranks of stage 0 .. p-1 (id order when unknown)
  bool interleaved = false;    // the last stage sends to the first (p >= 3; recorded or inferred)
  bool peers_recorded = true;  // false: grouped and ordered without any recorded peer
  // Ordered by the rhythm of batch kernels of several transfers, without peers: the order, the
  // peers inferred from it and the transfers paired by them are a guess (the driver keeps the
  // clock alignment only where rendezvous samples bear the pairing out).
  bool order_guessed = false;
  // Indices into Input::timelines (and Trace::ranks) of the pipeline's ranks, in stage order.
  std::vector<size_t> positions;
  // How many of the pipeline's p2p ops got their peer from each source, by PeerSource.
  std::array<int64_t, 4> peers_by_source = {};

  const std::vector<int32_t>& stage_order() const { return order.ranks; }
};

struct Input {
  const index::TraceIndex* index = nullptr;
  // Per trace rank: its issued work stepped by its reference step, and its op annotations.
  const std::vector<pipeline::IssuedTimeline>* timelines = nullptr;
  const std::vector<std::vector<pipeline::PipelineOp>>* annotated = nullptr;
  // The ranks' declared process groups, parallel to index->ranks; null or empty: none known.
  const std::vector<const std::vector<ProcessGroup>*>* process_groups = nullptr;
  // Per trace rank: its p2p ops the pipeline runtime named (pipeline/transfer_actions.h); null:
  // none. With a stage placement read from annotations they give the peers of transfers whose
  // trace records none, ahead of any guess.
  const std::vector<std::vector<pipeline::LabelledTransfer>>* named_transfers = nullptr;
  // Per trace rank: its file was cut short (analysis/iterations.h, CutShort); null: none was.
  const std::vector<bool>* cut_short = nullptr;
  // Whether the job records any peer, where these ranks are a part of a job analysed on its own
  // (job/job_parts.h): the whole job's answer. Unset: read from these ranks.
  std::optional<bool> peers_recorded;
};

struct Result {
  std::vector<RankOps> ranks;       // one per trace rank, in trace order
  std::vector<Pipeline> pipelines;  // ordered by their smallest rank id
  std::vector<int32_t> ranks_without_p2p;
  // Ranks whose file was cut short before their first transfer, kept in their pipeline because
  // their peers name them, in trace order: the first notes say so, one per rank.
  std::vector<int32_t> kept_cut_short;
  // The cut-short notes, then the others in pipeline order.
  std::vector<std::string> notes;

  const RankOps* OpsOf(int32_t rank) const;
};

Result Analyze(const Input& input);

}  // namespace bubblescope::p2p_graph
