// One rank's events re-emitted into a merged trace (readers/merged_trace.h, docs/perfetto.md):
// its trace file is streamed again (readers/raw_events.h) and every event is written as it was,
// with only what the merge must change rewritten: its pid becomes one of the merged trace's own,
// and its time moves by the rank's clock offset onto its pipeline's reference clock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "bubblescope/trace.h"

namespace bubblescope::perfetto {

// The traceEvents elements of a merged trace, one per line.
class EventList {
 public:
  void Add(std::string_view event);
  const std::string& text() const { return text_; }
  int64_t size() const { return count_; }

 private:
  std::string text_;
  int64_t count_ = 0;
};

// Appends the metadata event naming process `pid` (and the one that orders it by `pid`).
void AddProcessName(int64_t pid, std::string_view name, EventList* events);
// Appends the metadata event naming thread `tid_json` (a JSON number or string) of `pid`.
void AddThreadName(int64_t pid, std::string_view tid_json, std::string_view name,
                   EventList* events);

struct RankEventCounts {
  int64_t written = 0;
  // Events the Chrome trace format cannot hold (no "ph"; no numeric "ts" outside metadata; no
  // "tid"; an "X" without a duration >= 0; a pid that is neither an integer nor a string; a time
  // the move takes out of the model's range): the model skips every one of them too.
  int64_t left_out = 0;
};

// What the rank's entry in the "bubblescope_merged" member says.
struct RankLayout {
  std::string processes;  // the "processes" array's text: new pid -> original pid
  std::string distributed_info;   // the file's own members' text, empty when absent
  std::string device_properties;
};

// Streams `rank`'s file (rank.source_path) and appends its events to `events`, its times moved
// by -clock_offset (t on its clock is t - clock_offset on the reference clock) and its pids
// renumbered from *next_pid on, each of its processes named "rank R: ...". Errors, one line:
// the file cannot be read again, or it is itself a merged trace.
absl::Status AppendRankEvents(const Rank& rank, TimeNs clock_offset, int64_t* next_pid,
                              EventList* events, RankLayout* layout, RankEventCounts* counts);

}  // namespace bubblescope::perfetto
