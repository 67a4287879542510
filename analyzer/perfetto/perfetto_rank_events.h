// One rank's events re-emitted into a merged trace (readers/merged_trace.h, docs/perfetto.md). A
// rank read from Kineto JSON has its file streamed again (readers/raw_events.h) and every event
// written as it was; a rank of any other format (a digest, an Nsight export) has its model's
// events written, as the Kineto writer spells them. Only what the merge must change is
// rewritten: each pid becomes one of the merged trace's own, and each time moves by the rank's
// clock offset onto its pipeline's reference clock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "analysis/clock_offsets.h"
#include "bubblescope/trace.h"
#include "common/byte_sink.h"

namespace bubblescope::perfetto {

// The traceEvents elements of a merged trace, one per line, passed on to a sink a buffer at a
// time so that no more than one buffer of the document is ever held.
class EventList {
 public:
  explicit EventList(ByteSink* sink) : sink_(sink) {}

  void Add(std::string_view event) {
    Begin()->append(event.data(), event.size());
    End();
  }
  // An event written in place: Begin gives the text to append it to, End closes it.
  std::string* Begin();
  void End();
  int64_t size() const { return count_; }
  // Passes on what is buffered; the first error of the sink, which stops every later write.
  absl::Status Flush();

 private:
  ByteSink* sink_;
  std::string buffer_;
  int64_t count_ = 0;
  absl::Status status_;
};

// Appends the metadata event naming process `pid` (and the one that orders it by `pid`).
void AddProcessName(int64_t pid, std::string_view name, EventList* events);
// The same, ordered by `sort_index` instead.
void AddProcessName(int64_t pid, std::string_view name, EventList* events, int64_t sort_index);
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
  std::string processes;         // the "processes" array's text: new pid -> original pid
  std::string distributed_info;  // the file's own members' text, empty when absent
  std::string device_properties;
};

// Appends `rank`'s events (its Kineto file's, streamed again from rank.source_path, else its
// model's) to `events`, its times moved onto the reference clock by `clock` (its offset and
// rate, as the job driver applied them: ClockOffsets::Move) and its pids renumbered from *next_pid
// on, each of its processes named "rank R: ...". Errors, one line: the Kineto file cannot be read
// again, or it is itself a merged trace.
absl::Status AppendRankEvents(const Rank& rank, const RankClock& clock, int64_t* next_pid,
                              EventList* events, RankLayout* layout, RankEventCounts* counts);

}  // namespace bubblescope::perfetto
