// The pipelines of a job, read from its point-to-point traffic (docs/cross-rank.md).
//
// Every send / recv a rank issued (pipeline/issued_items.h: GPU p2p kernels, or the gloo ops of a
// CPU-only rank) is an edge of a directed graph between ranks when the trace records the peer
// (NCCL args, nccl:send annotations, the simulator). Each weakly connected component with traffic
// is one pipeline; its stage order comes from who sends activations to whom
// (pipeline::InferStageOrder, the rule schedule inference uses); an edge from the last stage back
// to the first makes it interleaved. Ranks without any p2p op are listed apart and are never put
// into a pipeline.
//
// Without any recorded peer (gloo traces, NCCL kernels without args) the graph cannot be drawn:
// GPU ranks split into pipelines by the rhythm of their transfers
// (pipeline::ChainByCompletionGaps); otherwise every rank with p2p ops forms one pipeline. Each
// is ordered by InferStageOrder's no-peer rules. Peers are then inferred from the stage order and
// what each transfer carries (peer_inference.h); a rank whose forward and backward cannot be
// told apart leaves them unknown, with a note.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bubblescope/trace.h"

namespace bubblescope::p2p_graph {

struct P2pOp {
  bool send = false;
  int32_t peer = -1;      // global rank of the other end; -1 when unknown
  bool peer_inferred = false;  // filled in from the stage order, not read from the trace
  int64_t bytes = -1;     // -1 when unknown
  // A GPU p2p kernel, which runs until its peer's matching kernel has started and both complete
  // together (NCCL); a CPU gloo op is buffered and may complete before its peer posts.
  bool rendezvous = false;
  int32_t step = 0;       // index into the rank's profiler steps
  TimeNs issue = 0;       // launch (GPU) or op start (CPU), on the rank's own clock
  TimeNs start = 0;
  TimeNs end = 0;
};

struct RankOps {
  int32_t rank = -1;
  std::vector<P2pOp> ops;  // in issue order
};

struct Pipeline {
  std::vector<int32_t> stage_order;  // rank of stage 0 .. p-1
  bool stage_order_known = true;     // false: InferStageOrder failed, ranks in id order
  bool interleaved = false;  // the last stage sends to the first (p >= 3; recorded or inferred)
  bool peers_recorded = true;        // false: grouped and ordered without any recorded peer
};

struct Options {};

struct Result {
  std::vector<RankOps> ranks;  // one per trace rank, in trace order
  std::vector<Pipeline> pipelines;  // ordered by their smallest rank id
  std::vector<int32_t> ranks_without_p2p;
  std::vector<std::string> notes;

  const RankOps* OpsOf(int32_t rank) const;
};

Result Analyze(const Trace& trace, const Options& options);

}  // namespace bubblescope::p2p_graph
