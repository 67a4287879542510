// What every reader does to the ranks it fills, whatever the format: times checked against the
// model's range, each process group kept once however often the file names it, and at the end
// every time moved by the format's time base and everything put in the model's orders (trace.h).
// The Kineto reader, the digest reader, the Nsight reader and the simulator's trace builder all
// call these, so no two of them can disagree on what a finished rank is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bubblescope/import_stats.h"
#include "bubblescope/trace.h"

namespace bubblescope {

// The model's order of intervals and of annotations: by start, and at one start the longer
// first, so that a range comes before every range it encloses (the rank index decides nesting in
// this order).
inline bool StartsEarlierOrIsLonger(TimeNs a_start, TimeNs a_end, TimeNs b_start, TimeNs b_end) {
  return a_start != b_start ? a_start < b_start : a_end > b_end;
}
inline bool IntervalBefore(const Interval& a, const Interval& b) {
  return StartsEarlierOrIsLonger(a.start, a.end, b.start, b.end);
}

// Sorts `intervals` into the model's order, stably (intervals at one place keep the order they
// were read in); a pass and no more when they are sorted already, as real traces mostly are.
void SortIntervals(std::vector<Interval>* intervals);

// Sorts annotations into the same order, stably.
void SortAnnotations(std::vector<Annotation>* annotations);

// a + b, nullopt where it overflows.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

// Times within a day of the clock's zero are relative (Kineto's before its base, a trace written
// against its own start); times ten years or more from it are absolute (the epoch). A boot clock
// lies between them for years of uptime.
inline constexpr TimeNs kRelativeTimeWithinNs = TimeNs{86'400} * 1'000'000'000;
inline constexpr TimeNs kAbsoluteTimeFromNs = TimeNs{10} * 365 * 86'400 * 1'000'000'000;

// Why [start, end] cannot be a span of the model, as the counter a reader bumps for it: an end
// before the start (kNegativeDuration), a time outside ±kMaxTimeNs (kTimeOutOfRange); nullopt
// when it can.
std::optional<ImportCounter> SpanProblem(TimeNs start, TimeNs end);

// One rank's process groups, each kept once in Rank::process_groups however many events name it.
// Groups with a name are one group when the names match (ranks and description are filled in
// when first known); unnamed ones when the ranks match, else when the descriptions do; a group
// with none of the three is the one "unknown" group.
class ProcessGroupTable {
 public:
  explicit ProcessGroupTable(Rank* rank) : rank_(rank) {}

  // The group's index in rank->process_groups, adding it on first sight.
  uint32_t Add(std::string_view name, std::string_view description,
               const std::vector<int32_t>* ranks);

 private:
  Rank* rank_;
  std::unordered_map<std::string, uint32_t> index_;  // the key Add tells groups apart by
};

struct FinishOptions {
  // The format's time base, added to every time of the rank: Kineto's baseTimeNanoseconds, an
  // Nsight export's session start on the host's clock; 0 for none. What it moves outside the
  // model's range is dropped and counted (kTimeOutOfRange, at byte `base_offset` of the file).
  int64_t base_ns = 0;
  int64_t base_offset = -1;
  // Keep the profiler steps in whose slot nothing was recorded: the rank is a part of a file
  // still being written, whose next part may fill them (ReaderOptions::part_of_growing_file).
  bool keep_empty_steps = false;
};

// Moves every time by the base and puts the rank in the model's orders: each timeline's
// intervals (SortIntervals), annotations likewise, profiler steps by start, memory samples by
// time, and the timelines GPU streams first, by device and stream, then CPU threads by pid and
// tid. Call once per rank, after its last event. A reader that links events by their place in a
// timeline (Kineto's flows) sorts those intervals with SortIntervals first.
void FinishRank(const FinishOptions& options, Rank* rank);

}  // namespace bubblescope
