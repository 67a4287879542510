// Where an Nsight Systems export's event times lie, and so how each becomes a UTC epoch time.
// Exports of every nsys release read so far (2022.1 to 2026.2, docs/nsight-systems.md) count
// event times from the session's start, whatever TARGET_INFO_SESSION_START_TIME.systemClockNs or
// ANALYSIS_DETAILS.startTime say; `nsys export --ts-normalize=true` moves them onto the UTC epoch
// and `--ts-shift=N` adds N. The export says which it did (EXPORT_PARAM_TIME_NORMALIZE and
// EXPORT_PARAM_TIME_SHIFT in META_DATA_EXPORT) only since 2023; the choice is checked against the
// events themselves either way, so a report lands on its host's clock at its own session start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bubblescope::nsys {

// What an export records about its session and its clock; each unset where the export lacks it.
struct SessionRecord {
  std::optional<int64_t> utc_epoch_ns;     // TARGET_INFO_SESSION_START_TIME.utcEpochNs
  std::optional<int64_t> system_clock_ns;  // TARGET_INFO_SESSION_START_TIME.systemClockNs
  std::optional<int64_t> start_time;       // ANALYSIS_DETAILS.startTime
  std::optional<int64_t> stop_time;        // ANALYSIS_DETAILS.stopTime
  std::optional<int64_t> duration;         // ANALYSIS_DETAILS.duration, else RUN_DURATION_MS
  std::optional<bool> normalized;          // EXPORT_PARAM_TIME_NORMALIZE
  int64_t shift = 0;                       // EXPORT_PARAM_TIME_SHIFT
};

enum class TimeBase {
  kSessionStart,  // times count from the session's start: UTC = utcEpochNs + t
  kSystemClock,   // readings of the target's clock: UTC = utcEpochNs + t - systemClockNs
  kUtcEpoch,      // already UTC epoch times (--ts-normalize=true)
  kAsRecorded,    // no session start recorded: times as they are, on a clock of their own
};

// "session_start", "system_clock", "utc_epoch", "as_recorded".
std::string_view TimeBaseName(TimeBase base);

struct ClockChoice {
  TimeBase base = TimeBase::kAsRecorded;
  int64_t offset = 0;    // added to every event time of the export
  std::string evidence;  // one line: what the choice rests on
};

// The choice for an export whose CUDA activity (kernels and runtime calls) runs from `first` to
// `last` (its own times; nullopt when it has none): what those times fit: inside [0, duration] (the
// session's start), inside [startTime, stopTime] (the target's clock) or around utcEpochNs (the UTC
// epoch).
ClockChoice ChooseClock(const SessionRecord& session, std::optional<int64_t> first,
                        std::optional<int64_t> last);

}  // namespace bubblescope::nsys
