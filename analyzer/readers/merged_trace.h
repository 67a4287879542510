// A merged trace: the events of several ranks in one Chrome-trace document, as `bubblescope
// analyze --perfetto` writes it (docs/perfetto.md). Each rank's processes get pids of their own,
// and each rank's times are moved onto its pipeline's reference clock, so a trace viewer shows
// every rank on one clock. The top-level member "bubblescope_merged", written before
// "traceEvents", says how to undo both: which rank and original pid every new pid stands for, and
// by how much each rank's times were moved. Reading it back gives each rank as it was read from
// its own file (the model holds every rank on its own clock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bubblescope/trace.h"
#include "common/unwinding_hash.h"
#include "readers/kineto_event.h"
#include "readers/rank_builder.h"
#include "simdjson.h"

namespace bubblescope::kineto {

// The member that makes a document a merged trace; it must come before "traceEvents".
inline constexpr std::string_view kMergedMemberName = "bubblescope_merged";
inline constexpr int64_t kMergedFormatVersion = 1;
// The category of the events the overlay adds (idle intervals, op labels), all on the overlay
// pids the layout names: a reader skips every event on those pids and counts it
// (ImportCounter::kOverlayEvent); they are no part of any rank's timeline.
inline constexpr std::string_view kOverlayCategory = "bubblescope_overlay";

// Where one new pid's events go.
struct MergedProcess {
  size_t slot = 0;   // index of the rank entry
  IdField original;  // the pid the rank's own file gave them; not present for events without one
};

// The parsed member: one slot per rank entry, in the order written.
struct MergedLayout {
  std::vector<int32_t> ranks;         // rank id per slot
  std::vector<TimeNs> clock_offsets;  // per slot: rank clock - the clock the file shows
  // Per slot: how that difference changes (its drift; 1e-6 = 1 ppm), from clock_anchors (on the
  // rank's clock) on; 0 for a clock moved by its offset alone.
  std::vector<double> clock_rates;
  std::vector<TimeNs> clock_anchors;
  UnwindingHashMap<int64_t, MergedProcess> processes;  // new pid -> where it goes
  UnwindingHashMap<int64_t, size_t> overlay_pids;      // overlay pid -> slot
};

// Rank clock - shown clock for a time `shown` of slot `slot`'s events as the file shows them: its
// offset, and where it has a rate, the drift from its anchor (the writer's ClockOffsets::Move
// undone, within a nanosecond: both round to it).
TimeNs RankClockDifference(const MergedLayout& layout, size_t slot, TimeNs shown);

// Receives each rank entry as it is read: a new slot's Rank (and builder), so that the entry's
// "distributedInfo" and "deviceProperties" can be read straight into it.
class MergedRankSink {
 public:
  virtual ~MergedRankSink() = default;
  virtual Rank* AddMergedRank() = 0;
  virtual RankBuilder* BuilderOf(size_t slot) = 0;
};

// Reads the "bubblescope_merged" member. A member that does not say where every pid goes (not
// an object, a version other than kMergedFormatVersion, a rank entry without a rank id, a pid
// named twice, a rank named twice) makes the file unreadable: *problem gets the byte offset and
// what is wrong, and SUCCESS is returned. Only broken JSON syntax is a simdjson error. The byte at
// `begin` is file offset `bias`.
simdjson::error_code ReadMergedLayout(simdjson::ondemand::value& value, const char* begin,
                                      int64_t bias, MergedRankSink* sink, MergedLayout* layout,
                                      std::optional<std::pair<int64_t, std::string>>* problem);

}  // namespace bubblescope::kineto
