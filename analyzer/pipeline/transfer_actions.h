// Transfers the pipeline runtime names: which stage posted a send or receive, and so which stage
// is at its other end, without any peer rank in the trace.
//
// torch.distributed.pipelining's _PipelineScheduleRuntime (the interleaved, zero-bubble, ZBV and
// DualPipeV schedules) runs every action of its program inside a record_function range named
// `PP:` followed by the action: `PP:{stage}SEND_F{mb}` posts stage `stage`'s activations of
// microbatch `mb` to stage+1, `PP:{stage}RECV_F{mb}` receives them from stage-1,
// `PP:{stage}SEND_B{mb}` posts its input gradients to stage-1 and `PP:{stage}RECV_B{mb}` receives
// them from stage+1 (stages are global virtual stages, 0..S-1). The c10d::send / c10d::recv_
// ops (gloo) or the NCCL launches of that action start inside its range. Adjacent stages on one
// rank (V placements) hand over locally and have no such action.
//
// torch later (pytorch/pytorch#178907) also names the transfers themselves through
// dist.record_comm: `PP::fwd_send (stage {s})`, `PP::fwd_recv (stage {s})`, `PP::bwd_send ...`,
// `PP::bwd_recv ...`, the stage being the one whose transfer it is. That name replaces the
// transfer's own profiling range (`nccl:send`, `gloo:send`), which starts inside the op that
// posted it, or rides on the GPU stream around the kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "bubblescope/trace.h"
#include "index/rank_index.h"

namespace bubblescope::pipeline {

enum class TransferAction : uint8_t { kSendForward, kRecvForward, kSendBackward, kRecvBackward };

struct NamedTransfer {
  TransferAction action = TransferAction::kSendForward;
  int32_t stage = 0;        // the stage that posted it
  int32_t microbatch = -1;  // -1 when the name gives none (`PP::fwd_send (stage 0)`)
};

// Parses the two spellings above; nullopt for any other name.
std::optional<NamedTransfer> ParseTransferName(std::string_view name);

// The stage at the other end: stage + 1 for SEND_F and RECV_B, stage - 1 for RECV_F and SEND_B
// (-1 where there is none: before stage 0, or past the largest int32).
int32_t PeerStage(const NamedTransfer& transfer);

struct LabelledTransfer {
  uint32_t op = 0;  // index into the rank's index::RankIndex::ops
  NamedTransfer transfer;
};

// The rank's point-to-point ops (outside optimizer steps) that a transfer name covers, in issue
// order: an op posted inside a `PP:{stage}{SEND|RECV}_{F|B}{mb}` range (CPU ops by their start,
// GPU kernels by their launch), or whose own `PP::{fwd|bwd}_{send|recv}` range starts inside it
// (CPU) or spans its start (GPU stream). Ranges that mirror a CPU range on the GPU are skipped.
std::vector<LabelledTransfer> LabelTransfers(const Rank& rank, const index::RankIndex& rank_index);

}  // namespace bubblescope::pipeline
