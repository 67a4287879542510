// What `bubblescope watch` prints (docs/watch.md, "Output"): one line per analysed iteration of a
// pipeline, per notice and per alert, as terminal text or as one JSON object a line (jsonl). The
// figures are spelt as `analyze` spells them: percentages and milliseconds as its text does
// (report/units.h), and window_us and bubble_fraction as its JSON report writes iterations[]
// (compare/report_schema.h), so a line and the report agree to the character.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "watch/alerts.h"
#include "watch/iteration_report.h"

namespace bubblescope {

// One line, no newline, its fields at fixed widths so that successive lines align:
// "pipeline 0    step      12  bubble  31.4%  excess   +6.2 pts  latency     48.310 ms  "
// "slowest stage 2 (rank 2)      cause stage_imbalance". The excess is "n/a" without an
// inferred schedule, the slowest stage "-" when no stage worked, the cause "-" when none.
std::string IterationText(const watch::IterationReport& report);

// One JSON object on one line, no newline: {"type":"iteration", ...} (docs/watch.md, "The JSON
// lines"). An error only if a figure is NaN or infinite where JSON has no spelling for it.
absl::StatusOr<std::string> IterationJson(const watch::IterationReport& report);

// "notice: <text>", made safe to print as one line (text/one_line.h).
std::string NoticeText(const watch::WatchNotice& notice);

// {"type":"notice","text":"...","analysed_unix_ns":...} on one line, no newline.
absl::StatusOr<std::string> NoticeJson(const watch::WatchNotice& notice);

// One line, no newline: "ALERT pipeline 0: bubble above 30.0% for 3 iterations in a row (steps
// 10-12: 31.2% 33.0% 35.1%)"; an excess in points ("+5.0 pts"), a latency in ms ("50.000 ms").
std::string AlertText(const watch::Alert& alert);

// {"type":"alert", ...} on one line, no newline (docs/watch.md, "Alerts").
absl::StatusOr<std::string> AlertJson(const watch::Alert& alert);

}  // namespace bubblescope
