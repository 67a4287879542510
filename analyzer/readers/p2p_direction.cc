#include "readers/p2p_direction.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "readers/event_classifier.h"

namespace bubblescope::kineto {
namespace {

bool IsP2p(CommKind kind) { return kind == CommKind::kSend || kind == CommKind::kRecv; }

// A CPU communication scope on one thread: an operator or a "nccl:*" / "gloo:*" range.
struct Scope {
  TimeNs start = 0;
  TimeNs end = 0;
  CommKind kind = CommKind::kUnknown;
  int32_t peer = -1;
};

// A launch whose kernel needs a direction, and where that kernel's comm metadata is.
struct PendingLaunch {
  TimeNs start = 0;
  uint32_t comm = kNoIndex;
};

// The communication scopes of one CPU thread, by start, longer first.
std::vector<Scope> ScopesOf(const Rank& rank, const Timeline& thread) {
  std::vector<Scope> scopes;
  for (const Interval& interval : thread.intervals) {
    if (interval.kind != IntervalKind::kCpuCommOp) continue;
    const CommInfo* info = rank.comm(interval);
    scopes.push_back(Scope{interval.start, interval.end,
                           info != nullptr ? info->kind : CommKind::kUnknown,
                           info != nullptr ? info->peer : -1});
  }
  for (const Annotation& annotation : rank.annotations) {
    if (annotation.scope != AnnotationScope::kCpu || annotation.thread_or_stream != thread.id) {
      continue;
    }
    const std::optional<CommKind> kind = CpuCommOpKind(rank.name(annotation.name));
    if (kind.has_value()) scopes.push_back(Scope{annotation.start, annotation.end, *kind, -1});
  }
  std::stable_sort(scopes.begin(), scopes.end(), [](const Scope& a, const Scope& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  return scopes;
}

}  // namespace

void ResolveP2pDirections(Rank* rank) {
  // The kernels that need a direction, by correlation id.
  absl::flat_hash_map<int64_t, uint32_t> comm_of_launch;
  for (const Timeline& timeline : rank->timelines) {
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (const Interval& interval : timeline.intervals) {
      const CommInfo* info = rank->comm(interval);
      if (interval.kind != IntervalKind::kCommKernel || info == nullptr ||
          interval.correlation == 0 ||
          (info->kind != CommKind::kSendRecv && info->kind != CommKind::kUnknown)) {
        continue;
      }
      comm_of_launch.emplace(interval.correlation, interval.comm);
    }
  }
  if (comm_of_launch.empty()) return;

  for (const Timeline& thread : rank->timelines) {
    if (thread.kind != TimelineKind::kCpuThread) continue;
    std::vector<PendingLaunch> launches;
    for (const Interval& interval : thread.intervals) {
      if (interval.kind != IntervalKind::kRuntime) continue;
      auto it = comm_of_launch.find(interval.correlation);
      if (it != comm_of_launch.end()) launches.push_back(PendingLaunch{interval.start, it->second});
    }
    if (launches.empty()) continue;
    const std::vector<Scope> scopes = ScopesOf(*rank, thread);
    // Sweep both by time; `open` holds the scopes around the current launch, innermost last.
    std::vector<const Scope*> open;
    size_t next = 0;
    for (const PendingLaunch& launch : launches) {
      for (; next < scopes.size() && scopes[next].start <= launch.start; ++next) {
        open.push_back(&scopes[next]);
      }
      std::erase_if(open, [&](const Scope* scope) { return scope->end <= launch.start; });
      if (open.empty() || !IsP2p(open.back()->kind)) continue;
      CommInfo& info = rank->comms[launch.comm];
      info.kind = open.back()->kind;
      if (info.peer < 0) info.peer = open.back()->peer;
    }
  }
}

}  // namespace bubblescope::kineto
