#include "bubblescope/trace.h"

namespace bubblescope {

std::string_view IntervalKindName(IntervalKind kind) {
  switch (kind) {
    case IntervalKind::kComputeKernel:
      return "compute_kernel";
    case IntervalKind::kCommKernel:
      return "comm_kernel";
    case IntervalKind::kMemcpy:
      return "memcpy";
    case IntervalKind::kMemset:
      return "memset";
    case IntervalKind::kCpuOp:
      return "cpu_op";
    case IntervalKind::kCpuCommOp:
      return "cpu_comm_op";
    case IntervalKind::kRuntime:
      return "runtime";
  }
  return "unknown";
}

bool IsCollective(CommKind kind) {
  switch (kind) {
    case CommKind::kAllReduce:
    case CommKind::kAllGather:
    case CommKind::kReduceScatter:
    case CommKind::kBroadcast:
    case CommKind::kReduce:
    case CommKind::kAllToAll:
    case CommKind::kBarrier:
      return true;
    case CommKind::kUnknown:
    case CommKind::kSend:
    case CommKind::kRecv:
    case CommKind::kSendRecv:
      return false;
  }
  return false;
}

std::string_view CommKindName(CommKind kind) {
  switch (kind) {
    case CommKind::kUnknown:
      return "unknown";
    case CommKind::kSend:
      return "send";
    case CommKind::kRecv:
      return "recv";
    case CommKind::kSendRecv:
      return "sendrecv";
    case CommKind::kAllReduce:
      return "all_reduce";
    case CommKind::kAllGather:
      return "all_gather";
    case CommKind::kReduceScatter:
      return "reduce_scatter";
    case CommKind::kBroadcast:
      return "broadcast";
    case CommKind::kReduce:
      return "reduce";
    case CommKind::kAllToAll:
      return "all_to_all";
    case CommKind::kBarrier:
      return "barrier";
  }
  return "unknown";
}

Rank RankHeader(const Rank& rank) {
  Rank header;
  header.rank = rank.rank;
  header.world_size = rank.world_size;
  header.source_path = rank.source_path;
  header.source_format = rank.source_format;
  header.host = rank.host;
  header.pid = rank.pid;
  header.backend = rank.backend;
  header.record_run_id = rank.record_run_id;
  header.rank_source = rank.rank_source;
  header.time_base = rank.time_base;
  header.time_evidence = rank.time_evidence;
  header.devices = rank.devices;
  header.process_groups = rank.process_groups;
  header.stats = rank.stats;
  header.steps = rank.steps;
  return header;
}

bool Rank::HasGpuActivity() const {
  for (const Timeline& timeline : timelines) {
    if (timeline.kind == TimelineKind::kGpuStream && !timeline.intervals.empty()) return true;
  }
  return false;
}

}  // namespace bubblescope
