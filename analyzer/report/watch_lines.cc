#include "report/watch_lines.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compare/report_schema.h"
#include "report/compare_format.h"
#include "report/units.h"
#include "text/json_writer.h"
#include "text/one_line.h"

namespace bubblescope {
namespace {

using compare::schema::Value;
using compare::schema::WriteValue;

// The widths of the text line's fields, wide enough for 999 pipelines, a million steps, a bubble
// of 100.0%, an excess of -100.0 pts, a latency of 100 s and a stage and rank of four digits.
constexpr int kPipelineWidth = 3;
constexpr int kStepWidth = 7;
constexpr int kBubbleWidth = 6;    // "100.0%"
constexpr int kExcessWidth = 10;   // "-100.0 pts"
constexpr int kLatencyWidth = 13;  // "100000.000 ms"
constexpr int kSlowestWidth = 20;  // "stage 1023 (rank 4095)" takes more and pushes the cause on

std::string BubbleText(double fraction) { return absl::StrCat(Percent(fraction), "%"); }
std::string LatencyText(TimeNs ns) { return absl::StrCat(Millis(ns), " ms"); }

std::string SlowestStageText(const watch::IterationReport& report) {
  if (report.slowest_stage < 0) return "-";
  for (const watch::StageIteration& stage : report.stages) {
    if (stage.stage == report.slowest_stage && stage.rank >= 0)
      return absl::StrCat("stage ", stage.stage, " (rank ", stage.rank, ")");
  }
  return absl::StrCat("stage ", report.slowest_stage);
}

// A nullable fraction as the report writes one: null for no figure, and null too for NaN or an
// infinity, which a figure that is there never is.
Value FractionOrNull(const std::optional<double>& fraction) {
  return fraction.has_value() && std::isfinite(*fraction) ? Value::Double(*fraction)
                                                          : Value::Null();
}

void Member(std::string_view key, const Value& value, JsonWriter& json) {
  json.Key(key);
  WriteValue(value, json);
}

// The member of a time, in microseconds as analyze writes every time (window_us, rank_stats[]).
void MicrosMember(std::string_view key, TimeNs ns, JsonWriter& json) {
  Member(key, Value::Micros(ns), json);
}

}  // namespace

std::string IterationText(const watch::IterationReport& report) {
  const std::string excess = report.excess_bubble_fraction.has_value()
                                 ? SignedPoints(*report.excess_bubble_fraction)
                                 : std::string("n/a");
  return absl::StrFormat(
      "pipeline %-*d  step %*d  bubble %*s  excess %*s  latency %*s  slowest %-*s  cause %s",
      kPipelineWidth, report.pipeline, kStepWidth, report.step, kBubbleWidth,
      BubbleText(report.bubble_fraction), kExcessWidth, excess, kLatencyWidth,
      LatencyText(report.window_ns), kSlowestWidth, SlowestStageText(report),
      report.top_cause.empty() ? std::string("-") : text::OneLine(report.top_cause));
}

absl::StatusOr<std::string> IterationJson(const watch::IterationReport& report) {
  JsonWriter json;
  json.BeginObject();
  json.StringMember("type", "iteration");
  json.IntMember("pipeline", report.pipeline);
  json.IntMember("step", report.step);
  Member("bubble_fraction", Value::Double(report.bubble_fraction), json);
  Member("ideal_bubble_fraction", FractionOrNull(report.ideal_bubble_fraction), json);
  Member("excess_bubble_fraction", FractionOrNull(report.excess_bubble_fraction), json);
  MicrosMember("window_us", report.window_ns, json);
  Member("slowest_stage", Value::IntOrNull(report.slowest_stage), json);
  Member("top_cause", report.top_cause.empty() ? Value::Null() : Value::String(report.top_cause),
         json);
  json.IntMember("analysed_unix_ns", report.analysed_unix_ns);
  json.Key("stages");
  json.BeginArray();
  for (const watch::StageIteration& stage : report.stages) {
    json.BeginObject();
    json.IntMember("stage", stage.stage);
    Member("rank", Value::IntOrNull(stage.rank), json);
    MicrosMember("compute_us", stage.split.compute, json);
    MicrosMember("in_stage_comm_us", stage.split.in_stage_comm, json);
    MicrosMember("idle_us", stage.split.idle, json);
    MicrosMember("fill_us", stage.split.fill, json);
    MicrosMember("drain_us", stage.split.drain, json);
    MicrosMember("comm_wait_us", stage.split.comm_wait, json);
    MicrosMember("empty_us", stage.split.empty, json);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return json.Finish();
}

std::string NoticeText(const watch::WatchNotice& notice) {
  return absl::StrCat("notice: ", text::OneLine(notice.text));
}

absl::StatusOr<std::string> NoticeJson(const watch::WatchNotice& notice) {
  JsonWriter json;
  json.BeginObject();
  json.StringMember("type", "notice");
  json.StringMember("text", notice.text);
  json.IntMember("analysed_unix_ns", notice.analysed_unix_ns);
  json.EndObject();
  return json.Finish();
}

namespace {

// A threshold or a crossing figure of `rule` as the text line spells it.
std::string AlertFigureText(watch::AlertRule rule, double value) {
  switch (rule) {
    case watch::AlertRule::kBubble:
      return BubbleText(value);
    case watch::AlertRule::kExcess:
      return SignedPoints(value);
    case watch::AlertRule::kLatency:
      return absl::StrCat(Millis(value), " ms");
  }
  return "-";
}

// A figure of `rule` in the JSON line: a fraction as a double, a latency (whole nanoseconds) in
// microseconds as every time of the report is written.
Value AlertFigureValue(watch::AlertRule rule, double value) {
  if (!std::isfinite(value)) return Value::Null();
  if (rule == watch::AlertRule::kLatency) return Value::Micros(std::llround(value));
  return Value::Double(value);
}

}  // namespace

std::string AlertText(const watch::Alert& alert) {
  const size_t count = alert.values.size();
  std::vector<std::string> values;
  values.reserve(count);
  for (double value : alert.values) values.push_back(AlertFigureText(alert.rule, value));
  const std::string steps = alert.first_step == alert.last_step
                                ? absl::StrCat("step ", alert.last_step)
                                : absl::StrCat("steps ", alert.first_step, "-", alert.last_step);
  return absl::StrCat("ALERT pipeline ", alert.pipeline, ": ",
                      std::string(AlertRuleName(alert.rule)), " above ",
                      AlertFigureText(alert.rule, alert.threshold), " for ", count,
                      count == 1 ? " iteration" : " iterations in a row", " (", steps, ": ",
                      absl::StrJoin(values, " "), ")");
}

absl::StatusOr<std::string> AlertJson(const watch::Alert& alert) {
  const bool latency = alert.rule == watch::AlertRule::kLatency;
  JsonWriter json;
  json.BeginObject();
  json.StringMember("type", "alert");
  json.IntMember("pipeline", alert.pipeline);
  json.StringMember("rule", AlertRuleName(alert.rule));
  Member(latency ? "threshold_us" : "threshold", AlertFigureValue(alert.rule, alert.threshold),
         json);
  json.IntMember("iterations", static_cast<int64_t>(alert.values.size()));
  json.IntMember("first_step", alert.first_step);
  json.IntMember("last_step", alert.last_step);
  json.Key(latency ? "values_us" : "values");
  json.BeginArray();
  for (double value : alert.values) WriteValue(AlertFigureValue(alert.rule, value), json);
  json.EndArray();
  json.IntMember("analysed_unix_ns", alert.analysed_unix_ns);
  json.EndObject();
  return json.Finish();
}

}  // namespace bubblescope
