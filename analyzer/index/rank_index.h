// What every analysis needs to know about a rank beyond the raw timeline, derived once from the
// model (docs/timeline-model.md, "The rank index").
//
// - The rank's device. A rank with GPU activity is measured on its GPU streams: every kernel,
//   communication kernel, memcpy and memset. A rank without (a gloo pipeline on the CPU) has no
//   device, so the CPU thread that runs the model stands in for it: the thread whose top-level
//   CPU ops (kCpuOp and kCpuCommOp not nested inside another op of the thread) cover the most
//   time (ties: the earlier thread). Only top-level ops count there, so a nested aten::addmm
//   inside aten::linear is not counted twice.
// - The launch of each GPU op: the CUDA runtime call on a CPU thread with the same correlation
//   id. An op is issued when its launch starts (the device runs behind the host); an op without
//   a launch record, and every op of a CPU rank, is issued when it starts.
// - The direction and peer of point-to-point kernels whose own record does not say it. NCCL runs
//   a send and a receive with one kernel (`ncclDevKernel_SendRecv`), so a trace without NCCL's
//   metadata args only says "sendrecv"; PyTorch launches each p2p kernel inside its c10d::send /
//   c10d::recv_ op (and "nccl:send" / "nccl:recv" range), so the innermost such scope around the
//   launch gives the direction, and the peer when the scope recorded one. NCCL runs an
//   all-to-all with the same kernels, so a SendRecv kernel inside `nccl:all_to_all` /
//   `c10d::alltoall_base_` is an all-to-all.
// - The transfers of batched p2p. torch.distributed.batch_isend_irecv (Megatron-LM's default
//   batch_p2p_comm, torch.distributed.pipelining) only queues each transfer in its c10d::send /
//   c10d::recv_ call (whose record_param_comms names the peer and size) and then launches one
//   SendRecv kernel for the whole batch, inside `nccl:coalesced`, outside any of those calls. So
//   the send / recv scopes on the launching thread that began after its previous communication
//   launch, ended before this one and held no launch of their own are the batch's transfers (a
//   scope nested in another one describes the same transfer). An undirected kernel launched
//   with such a batch becomes one op per transfer, all with the kernel's times.
// - A phase hint for compute ops: backward when the kernel is launched inside one of torch's
//   `autograd::engine::evaluate_function: ...` ops, or from a CPU thread other than the one that
//   launched the rank's first compute when several threads launch compute (torch runs a GPU
//   job's backward on its autograd engine's thread), or its name says backward ("backward", "bwd"),
//   weight gradient when the name says so ("weight_grad", "wgrad"). Names carry this only by
//   convention, so it is a hint used to split compute runs, never to find the structure.
// - Whether an op was issued inside an `Optimizer.*` range (not pipeline work).
// - Which compute recomputes a checkpointed forward during the backward, and how long the rank
//   spends on it (index/recompute_regions.h).
// - For CPU transfers, when the transfer really finished: gloo's c10d::send / c10d::recv_ op only
//   posts it; the `gloo:*` (or `nccl:*`) range starting inside the op lasts until it completes.
// - Which annotations are copies. Kineto writes every record_function range twice on GPU jobs:
//   as the CPU `user_annotation` and, per stream its kernels ran on, as a `gpu_user_annotation`
//   of the same name from the first of those kernels' start to the last one's end. A GPU
//   annotation is such a mirror when a CPU annotation of the same name contains the launch of
//   the first op it covers on its stream (or, where that op has no launch record, when the rank
//   has a CPU annotation of that name at all). One range is one op: readers of annotations skip
//   the mirrors and read the CPU range, which covers the kernels of every stream it launched.
// - The process group of a collective kernel that does not record it. torch writes no
//   record_param_comms for the coalesced collectives Megatron's `_coalescing_manager` issues
//   (`c10d::reduce_scatter_tensor_coalesced_`, `c10d::allgather_into_tensor_coalesced_`: the
//   distributed optimizer's gradient reduce-scatter and parameter all-gather), so their kernels
//   carry no group. ProcessGroupNCCL runs every collective of one group on one device on that
//   group's own stream, so such a kernel belongs to the group of the collectives that do record
//   theirs on the same stream, when they all record one and the same group. The CPU op around
//   the launch names no group either, so the stream is the only witness.
//
// Every analysis reads these facts from here; none re-derives them from the timelines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "bubblescope/trace.h"
#include "index/group_roles.h"
#include "index/memory_peak.h"

namespace bubblescope::index {

enum class DeviceKind : uint8_t {
  kGpu,  // GPU streams
  kCpu,  // the CPU model thread of a rank without GPU activity
};

enum class OpClass : uint8_t {
  kCompute,  // compute kernels; top-level kCpuOp on a CPU rank
  kComm,     // communication kernels; top-level kCpuCommOp on a CPU rank
  kCopy,     // memcpy and memset
};

enum class PhaseHint : uint8_t { kNone, kBackward, kWeightGrad };

// One device op: a GPU op, or a top-level op of a CPU rank's model thread.
struct DeviceOp {
  TimeNs issue = 0;  // launch start (GPU ops with a launch record), else the op's own start
  TimeNs start = 0;
  TimeNs end = 0;
  // When a CPU point-to-point transfer completed (its gloo:/nccl: range may outlast the op);
  // `end` for every other op.
  TimeNs transfer_end = 0;
  int64_t bytes = -1;       // communication payload, -1 when unknown
  int64_t correlation = 0;  // of the launch record (0: none); ids grow in launch order
  uint32_t timeline = 0;    // index into Rank::timelines
  uint32_t interval = 0;    // index into that timeline's intervals
  NameId name = kNoName;
  int32_t peer = -1;  // global peer rank of a p2p op, recorded or from its launch scope
  CommKind comm = CommKind::kUnknown;  // communication ops: sendrecv resolved where possible
  // Communication ops: the role of their process group where the trace says it (group_roles.h;
  // a role guessed from the layout is not applied), else kUnknown.
  GroupRole group = GroupRole::kUnknown;
  // Communication ops: the index into Rank::process_groups of their group, from their own args,
  // else from their stream's (see GroupsFromStreams); kNoIndex when neither says.
  uint32_t process_group = kNoIndex;
  OpClass op_class = OpClass::kCompute;
  PhaseHint hint = PhaseHint::kNone;
  bool launched = false;      // `issue` is a launch record's start
  bool in_optimizer = false;  // issued inside an `Optimizer.*` CPU range
  // A compute kernel launched while recomputing a checkpointed forward in the backward
  // (index/recompute_regions.h); such kernels also carry the backward hint.
  bool recompute = false;
  // A transfer of a batch kernel that carried several (see above): the ops of one such kernel
  // share its timeline and interval; the first has batch_index 0, the others count no kernel.
  bool batched = false;
  uint32_t batch_index = 0;

  // A pipeline transfer: a send or receive outside the groups whose p2p is in-stage work (a
  // context-parallel ring) or no pipeline's (group_roles.h, PipelineTransferRole).
  bool is_send() const {
    return op_class == OpClass::kComm && comm == CommKind::kSend && PipelineTransferRole(group);
  }
  bool is_recv() const {
    return op_class == OpClass::kComm && comm == CommKind::kRecv && PipelineTransferRole(group);
  }
  bool is_p2p() const { return is_send() || is_recv(); }
  // Communication that is the stage's own work, not a wait: tensor, context and expert
  // parallel groups, and every all-to-all (MoE dispatch and combine; never a pipeline hand-off
  // nor a gradient sync).
  bool in_stage_comm() const {
    return op_class == OpClass::kComm && (InStageRole(group) || comm == CommKind::kAllToAll);
  }
};

struct RankIndex {
  int32_t rank = -1;
  // Parallel to Rank::process_groups: each group's role, read or guessed (group_roles.h).
  std::vector<GroupRoleInfo> groups;
  DeviceKind device = DeviceKind::kGpu;
  // CPU ranks: index into Rank::timelines of the model thread; -1 for GPU ranks and for CPU
  // ranks without any CPU op.
  int32_t model_thread = -1;
  // Sorted by start, then longer first; zero-length ops are kept (they still bound a span).
  std::vector<DeviceOp> ops;
  // Indices into `ops` in issue order: by issue time, then launched ops first in launch order
  // (correlation ids: launches at one instant, as a CUDA graph's or a host far ahead of the
  // device, keep the order the host issued them in), then start, then longer first.
  std::vector<uint32_t> issue_order;
  // Device time spent recomputing checkpointed forwards (index/recompute_regions.h): the
  // recompute kernels' time on a GPU rank, the recomputation ranges' on a CPU rank's model
  // thread. 0 without activation checkpointing.
  TimeNs recompute_ns = 0;
  // The rank's memory peaks (memory_peak.h): the per-rank table, the bubble's per-rank figures
  // and the what-if model's memory all read this one figure.
  MemoryPeak memory;
  // Parallel to Rank::annotations: true for a GPU annotation that mirrors a CPU one.
  std::vector<bool> mirrored_annotation;

  bool cpu_only() const { return device == DeviceKind::kCpu; }
  // True when some op is a point-to-point send or receive not issued by an optimizer step.
  bool HasP2p() const;
};

struct TraceIndex {
  std::vector<RankIndex> ranks;  // parallel to Trace::ranks

  // Position of rank id `rank` in the trace, or -1.
  int32_t PositionOf(int32_t rank) const;
};

RankIndex BuildRank(const Rank& rank);

// The top-level CPU ops of a CPU thread (kCpuOp and kCpuCommOp not nested inside another op of
// the thread), as indices into its intervals in (start, longer first) order: on a rank without
// GPU activity, the device ops of its model thread.
std::vector<uint32_t> TopLevelCpuOps(const Timeline& thread);

// Every rank's index, BuildRank over the ranks on `workers` threads (common/parallel_for.h); the
// same index for any number.
// `rank_done`, when given, is called after each rank is indexed, from the worker that did it
// (two workers may call it at once).
TraceIndex Build(const Trace& trace, size_t workers = 1,
                 const std::function<void()>& rank_done = nullptr);

}  // namespace bubblescope::index
