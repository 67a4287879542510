// Helpers shared by the reader tests: run the reader on a JSON literal, load a gzip trace.
#pragma once

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "bubblescope/trace.h"
#include "readers/kineto_reader.h"
#include "simdjson.h"
#include "support/shared_traces.h"
#include "support/test_files.h"

namespace bubblescope::testing {

struct ReadResult {
  absl::Status status;
  Rank rank;
};

inline ReadResult ReadJson(std::string_view json, std::string_view path = "t.json") {
  KinetoReader reader;
  ReadResult result;
  const simdjson::padded_string padded(json);
  result.status = reader.Read(path, padded, &result.rank);
  return result;
}

inline size_t IntervalCount(const Rank& rank, std::optional<IntervalKind> kind = std::nullopt) {
  size_t count = 0;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      if (!kind || interval.kind == *kind) ++count;
    }
  }
  return count;
}

// Everything an event can become, for comparisons between a file and its cut-short copies.
inline size_t ModelledEventCount(const Rank& rank) {
  return IntervalCount(rank) + rank.annotations.size() + rank.memory.size();
}

inline std::vector<const Interval*> AllIntervals(const Rank& rank) {
  std::vector<const Interval*> out;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) out.push_back(&interval);
  }
  return out;
}

inline const Timeline* FindTimeline(const Rank& rank, TimelineKind kind, int64_t a, int64_t b) {
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != kind) continue;
    const int64_t first = kind == TimelineKind::kGpuStream ? timeline.device : timeline.pid;
    if (first == a && timeline.id == b) return &timeline;
  }
  return nullptr;
}

inline bool FileExists(const std::string& path) { return std::ifstream(path).good(); }

// Decompresses a .gz file; nullopt if it cannot be read.
inline std::optional<std::string> GunzipFile(const std::string& path) {
  if (!FileExists(path)) return std::nullopt;
  return Gunzip(ReadFile(path));
}

}  // namespace bubblescope::testing
