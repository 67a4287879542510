#include "report/html_whatif.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_charts.h"
#include "report/html_svg.h"
#include "report/units.h"
#include "report/whatif_report.h"
#include "report_view/report_view.h"
#include "schedule_engine/config.h"

namespace bubblescope::html {
namespace {

std::string SeriesName(const whatif::Candidate& candidate) {
  std::string name(sim::ScheduleName(candidate.schedule));
  if (candidate.virtual_stages > 1) absl::StrAppend(&name, " v=", candidate.virtual_stages);
  return name;
}

std::string PointText(const whatif::Prediction& prediction) {
  std::string text = absl::StrCat(whatif::CandidateLabel(prediction.candidate), ": bubble ",
                                  Percent(prediction.bubble_fraction), "%, iteration ",
                                  Millis(static_cast<double>(prediction.iteration_ns)), " ms");
  const std::optional<int64_t> peak = report_view::LargestStagePeakBytes(prediction);
  if (peak.has_value()) absl::StrAppend(&text, ", peak ", BinaryBytes(*peak));
  if (prediction.fits_memory.has_value()) {
    absl::StrAppend(&text, *prediction.fits_memory ? " (fits)" : " (does not fit)");
  }
  return text;
}

}  // namespace

std::string WhatIfSection(const job::Pipeline& pipeline) {
  if (!pipeline.model.has_value()) return WhatIfUnavailable(pipeline.model_problem);
  if (!pipeline.tradeoff.has_value()) {
    return WhatIfUnavailable("the trade-off was not predicted (job::Options::tradeoff)");
  }
  return WhatIfChart(*pipeline.model, *pipeline.tradeoff);
}

std::string PredictionTable(const whatif::Result& result) {
  std::string out =
      "<table><tr><th>configuration<th>iteration<th>bubble<th>peak allocated (largest "
      "stage)<th>fits memory\n";
  absl::StrAppend(
      &out, Row({"measured", Esc(MillisWithUnit(static_cast<double>(result.measured_iteration_ns))),
                 absl::StrCat(Percent(result.measured_bubble_fraction), "%"), "", ""}));
  std::vector<const whatif::Prediction*> predictions = {&result.baseline};
  for (const whatif::Prediction& candidate : result.candidates) predictions.push_back(&candidate);
  for (const whatif::Prediction* prediction : predictions) {
    // The chart's m keeps the samples per step; a row whose m does not says so beside it.
    std::string label =
        CandidateRowLabel(prediction->candidate, result.baseline.candidate.microbatches);
    if (prediction == &result.baseline) label = absl::StrCat("as measured, modelled: ", label);
    if (!prediction->problem.empty()) {
      absl::StrAppend(&out, Row({Esc(label), Esc(prediction->problem), "", "", ""}));
      continue;
    }
    const std::optional<int64_t> peak = report_view::LargestStagePeakBytes(*prediction);
    absl::StrAppend(&out,
                    Row({Esc(label), MillisWithUnit(static_cast<double>(prediction->iteration_ns)),
                         absl::StrCat(Percent(prediction->bubble_fraction), "%"),
                         peak.has_value() ? Esc(BinaryBytes(*peak)) : std::string("-"),
                         !prediction->fits_memory.has_value() ? std::string("-")
                         : *prediction->fits_memory           ? std::string("yes")
                                                              : std::string("no")},
                        prediction->fits_memory == std::optional<bool>(false) ? "slow" : ""));
  }
  absl::StrAppend(&out, "</table>\n");
  return out;
}

std::string WhatIfUnavailable(const std::string& problem) {
  return absl::StrCat("<h3>What if: bubble and memory against m</h3>\n",
                      "<p class=note>No what-if model of this pipeline: ", Esc(problem), "</p>\n");
}

std::string WhatIfChart(const whatif::Model& model, const absl::StatusOr<whatif::Result>& result) {
  std::string out = "<h3>What if: bubble and memory against m</h3>\n";
  if (!result.ok()) {
    absl::StrAppend(&out,
                    "<p class=note>No prediction: ", Esc(std::string(result.status().message())),
                    "</p>\n");
    return out;
  }
  // One line per schedule, points by m; the measured configuration as modelled belongs to its
  // schedule's line.
  std::vector<const whatif::Prediction*> predictions = {&result->baseline};
  for (const whatif::Prediction& candidate : result->candidates) predictions.push_back(&candidate);
  std::map<std::string, std::pair<Series, Series>> lines;  // bubble, memory
  std::vector<std::string> order;
  for (const whatif::Prediction* prediction : predictions) {
    if (!prediction->problem.empty()) continue;
    const std::string name = SeriesName(prediction->candidate);
    auto [entry, added] = lines.try_emplace(name);
    if (added) order.push_back(name);
    const auto x = static_cast<double>(prediction->candidate.microbatches);
    entry->second.first.points.push_back(
        {.x = x, .y = 100.0 * prediction->bubble_fraction, .tooltip = PointText(*prediction)});
    const std::optional<int64_t> peak = report_view::LargestStagePeakBytes(*prediction);
    if (peak.has_value()) {
      entry->second.second.points.push_back(
          {.x = x, .y = static_cast<double>(*peak), .tooltip = PointText(*prediction)});
    }
  }
  static constexpr const char* kSeriesClasses[] = {"s0", "s1", "s2", "s3"};
  std::vector<Series> bubble_lines;
  std::vector<Series> memory_lines;
  std::string legend = "<div class=lg>";
  for (size_t i = 0; i < order.size(); ++i) {
    auto& [bubble_line, memory_line] = lines[order[i]];
    const char* css = kSeriesClasses[i % std::size(kSeriesClasses)];
    for (auto* line : {&bubble_line, &memory_line}) {
      line->name = order[i];
      line->css_class = css;
      std::sort(line->points.begin(), line->points.end(),
                [](const Point& a, const Point& b) { return a.x < b.x; });
    }
    bubble_lines.push_back(bubble_line);
    if (!memory_line.points.empty()) memory_lines.push_back(memory_line);
    absl::StrAppend(&legend, "<span><i class=", css, "></i>", Esc(order[i]), "</span>");
  }
  absl::StrAppend(&legend, "<span><i class=mk></i>measured</span></div>\n");
  const double measured_m = static_cast<double>(model.m);
  const Point measured_bubble{
      .x = measured_m,
      .y = 100.0 * result->measured_bubble_fraction,
      .tooltip =
          absl::StrCat("measured: m=", model.m, ", bubble ",
                       Percent(result->measured_bubble_fraction), "%, iteration ",
                       Millis(static_cast<double>(result->measured_iteration_ns)), " ms (median)")};
  // Without a measured peak the point has no tooltip, which leaves it off the chart.
  const std::optional<int64_t> measured_peak = report_view::MeasuredPeakBytes(model);
  Point measured_memory{
      .x = measured_m,
      .y = static_cast<double>(measured_peak.value_or(0)),
      .tooltip = measured_peak.has_value()
                     ? absl::StrCat("measured: m=", model.m, ", peak ", BinaryBytes(*measured_peak))
                     : std::string()};
  absl::StrAppend(&out,
                  "<p>Predicted by the what-if model (docs/whatif.md) for the same global batch "
                  "split into m microbatches: the model's figures for each schedule, the measured "
                  "job ringed. A point's tooltip gives the iteration time and whether it fits "
                  "the memory the measured peak left free.</p>\n",
                  legend, "<div class=row>",
                  LogLines(bubble_lines, measured_bubble, "microbatches m", "bubble %",
                           [](double y) { return absl::StrFormat("%g", y); }));
  // Memory points were kept in bytes: now in the unit the largest of them reads best in.
  double largest = std::max(0.0, measured_memory.y);
  for (const Series& line : memory_lines) {
    for (const Point& point : line.points) largest = std::max(largest, point.y);
  }
  const ByteUnit unit = ByteUnitFor(static_cast<int64_t>(largest));
  for (Series& line : memory_lines) {
    for (Point& point : line.points) point.y /= unit.bytes;
  }
  measured_memory.y /= unit.bytes;
  if (memory_lines.empty() || largest <= 0.0) {
    absl::StrAppend(&out,
                    "</div><p class=note>Memory unknown (no memory samples in the trace, or none "
                    "above zero): no memory chart.</p>\n");
  } else {
    absl::StrAppend(&out,
                    LogLines(memory_lines, measured_memory, "microbatches m",
                             absl::StrCat("peak allocated, ", unit.name, " (largest stage)"),
                             [](double y) { return absl::StrFormat("%.1f", y); }),
                    "</div>\n");
  }
  for (const std::string& note : result->notes) {
    absl::StrAppend(&out, "<p class=note>", Esc(note), "</p>\n");
  }
  return out;
}

}  // namespace bubblescope::html
