#include "readers/nsys_clock.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace bubblescope::nsys {
namespace {

// How far past a window's edge an event may still lie: records flushed as the capture stops,
// and the window's own rounding.
int64_t Slack(int64_t duration) { return 1'000'000 + duration / 100; }

bool Inside(int64_t first, int64_t last, int64_t from, int64_t to, int64_t slack) {
  return first >= from - slack && last <= to + slack;
}

std::string Seconds(int64_t ns) { return absl::StrFormat("%.3f s", static_cast<double>(ns) / 1e9); }

std::optional<int64_t> Sub(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_sub_overflow(a, b, &out)) return std::nullopt;
  return out;
}

}  // namespace

std::string_view TimeBaseName(TimeBase base) {
  switch (base) {
    case TimeBase::kSessionStart:
      return "session_start";
    case TimeBase::kSystemClock:
      return "system_clock";
    case TimeBase::kUtcEpoch:
      return "utc_epoch";
    case TimeBase::kAsRecorded:
      return "as_recorded";
  }
  return "as_recorded";
}

ClockChoice ChooseClock(const SessionRecord& session, std::optional<int64_t> first,
                        std::optional<int64_t> last) {
  // --ts-shift added the same to every time: taken off first, whatever the base.
  const std::string shifted =
      session.shift != 0 ? absl::StrCat(" (less EXPORT_PARAM_TIME_SHIFT ", session.shift, " ns)")
                         : "";
  const int64_t unshift = -session.shift;
  if (!session.utc_epoch_ns.has_value()) {
    return ClockChoice{TimeBase::kAsRecorded, unshift,
                       absl::StrCat("no TARGET_INFO_SESSION_START_TIME: times as recorded", shifted,
                                    ", from the session's start, on a clock of the file's own")};
  }
  const int64_t utc = *session.utc_epoch_ns;
  const std::optional<int64_t> lo =
      first.has_value() ? Sub(*first, session.shift) : std::optional<int64_t>();
  const std::optional<int64_t> hi =
      last.has_value() ? Sub(*last, session.shift) : std::optional<int64_t>();
  const bool has_events = lo.has_value() && hi.has_value() && *lo <= *hi;
  std::optional<int64_t> duration = session.duration;
  if (!duration.has_value() && session.start_time.has_value() && session.stop_time.has_value()) {
    duration = Sub(*session.stop_time, *session.start_time);
  }
  const int64_t slack = Slack(std::max<int64_t>(duration.value_or(0), 0));
  const std::string kernels =
      has_events ? absl::StrCat("CUDA activity at ", Seconds(*lo), " to ", Seconds(*hi))
                 : "no CUDA activity";

  // On the UTC epoch: --ts-normalize=true, or times that lie at utcEpochNs whatever the export
  // says (no session-relative or clock reading comes near 1.5e18 ns).
  const int64_t window = duration.value_or(int64_t{86'400} * 1'000'000'000);
  if (has_events && utc > 0 && Inside(*lo, *hi, utc, utc + window, slack)) {
    return ClockChoice{
        TimeBase::kUtcEpoch, unshift,
        absl::StrCat("CUDA activity lies within the capture from utcEpochNs",
                     session.normalized == true ? " (EXPORT_PARAM_TIME_NORMALIZE true)" : "",
                     ": UTC epoch times", shifted)};
  }
  const std::string metadata_note =
      session.normalized == true
          ? "; EXPORT_PARAM_TIME_NORMALIZE says true, but the times do not lie at utcEpochNs"
          : "";
  const int64_t session_offset = utc - session.shift;
  if (!has_events || !duration.has_value()) {
    return ClockChoice{
        TimeBase::kSessionStart, session_offset,
        absl::StrCat(has_events ? "no capture window (ANALYSIS_DETAILS) to check against"
                                : "no CUDA activity to check against",
                     ": times taken from the session's start (nsys's default), placed at "
                     "utcEpochNs",
                     shifted, metadata_note)};
  }
  const bool fits_session = Inside(*lo, *hi, 0, *duration, slack);
  const std::optional<int64_t> clock_start =
      session.system_clock_ns.has_value() ? session.system_clock_ns : session.start_time;
  const bool fits_clock = clock_start.has_value() && session.start_time.has_value() &&
                          session.stop_time.has_value() &&
                          Inside(*lo, *hi, *session.start_time, *session.stop_time, slack);
  const std::string capture = absl::StrCat("the capture's ", Seconds(*duration));
  if (fits_session) {
    return ClockChoice{
        TimeBase::kSessionStart, session_offset,
        absl::StrCat(kernels, " lies inside ", capture,
                     fits_clock ? " and also inside [startTime, stopTime]: the session's start "
                                  "(nsys's default) taken"
                                : "",
                     "; placed at utcEpochNs", shifted, metadata_note)};
  }
  if (fits_clock) {
    const std::optional<int64_t> offset = Sub(session_offset, *clock_start);
    if (offset.has_value()) {
      return ClockChoice{
          TimeBase::kSystemClock, *offset,
          absl::StrCat(kernels,
                       " lies inside [startTime, stopTime] of ANALYSIS_DETAILS, not inside ",
                       capture, ": readings of the target's clock, placed by ",
                       session.system_clock_ns.has_value() ? "systemClockNs" : "startTime", shifted,
                       metadata_note)};
    }
  }
  return ClockChoice{TimeBase::kSessionStart, session_offset,
                     absl::StrCat(kernels, " lies neither inside ", capture,
                                  " nor inside [startTime, stopTime]: the session's start "
                                  "(nsys's default) assumed",
                                  shifted, metadata_note)};
}

}  // namespace bubblescope::nsys
