#include "report/html_pipeline.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/cause_report.h"
#include "report/html_charts.h"
#include "report/html_svg.h"
#include "report/html_timeline.h"
#include "report/html_whatif.h"
#include "report/job_report.h"
#include "report/units.h"
#include "report_view/report_view.h"

namespace bubblescope::html {
namespace {

std::string StageLabel(const StageRow& row) {
  return absl::StrCat("stage ", row.stage < 0 ? std::string("?") : absl::StrCat(row.stage),
                      " \xC2\xB7 rank ", row.rank);
}

std::string BodyNotes(const job::Pipeline& pipeline);

std::string Headline(const job::Pipeline& pipeline) {
  const bubble::Result& bubble = pipeline.bubble;
  if (!pipeline.no_complete_iteration.empty()) {
    // No bubble or latency to show: the reason stands in for them, as in the text report.
    return absl::StrCat(
        "<p class=warn>No complete iteration: ", Esc(pipeline.no_complete_iteration),
        "; no bubble or latency figure.</p>\n", BodyNotes(pipeline));
  }
  std::string out =
      absl::StrCat("<p class=hl>Bubble <b>", Percent(bubble.bubble_fraction), "%</b> measured");
  if (pipeline.ideal.has_value()) {
    absl::StrAppend(&out, " against <b>", Percent(pipeline.ideal->fraction),
                    "%</b> for its schedule alone (",
                    Esc(pipeline::IdealSourceName(pipeline.ideal->source)), "): excess ",
                    Percent(pipeline.excess_bubble_fraction.value_or(0.0)), " points");
  }
  absl::StrAppend(&out, ". Iteration ", MillisWithUnit(static_cast<double>(bubble.latency.p50)),
                  " median, ", MillisWithUnit(static_cast<double>(bubble.latency.p90)), " p90, ",
                  MillisWithUnit(static_cast<double>(bubble.latency.max)), " max, over ",
                  bubble.complete_iterations, " complete of ", bubble.iterations.size(),
                  " iterations.</p>\n");
  absl::StrAppend(&out, BodyNotes(pipeline));
  return out;
}

// The pipeline's warnings and notes under its headline.
std::string BodyNotes(const job::Pipeline& pipeline) {
  std::string out;
  const std::string incomplete = IncompletePipelineText(pipeline);
  if (!incomplete.empty()) absl::StrAppend(&out, "<p class=warn>", Esc(incomplete), "</p>\n");
  std::vector<std::string> notes = pipeline.crossrank.plausibility.notes;
  if (pipeline.shape.has_value()) {
    notes.insert(notes.end(), pipeline.shape->notes.begin(), pipeline.shape->notes.end());
  } else if (!pipeline.shape_problem.empty()) {
    notes.push_back(absl::StrCat("shape unknown: ", pipeline.shape_problem));
  }
  for (const std::string& note : notes) {
    absl::StrAppend(&out, "<p class=note>", Esc(note), "</p>\n");
  }
  return out;
}

// The causes, ranked by what fixing each is predicted to save, each with its findings.
std::string Causes(const job::Pipeline& pipeline) {
  const std::vector<findings::Finding>& all = pipeline.findings.findings;
  if (pipeline.causes.causes.empty()) return "<h3>Causes</h3>\n<p>No finding.</p>\n";
  std::string out = "<h3>Causes, by predicted saving</h3>\n<ol class=causes>";
  for (const root_causes::RootCause& cause : pipeline.causes.causes) {
    absl::StrAppend(&out, "<li class=", std::string(SeverityName(cause.severity)), ">",
                    Esc(CauseSentence(cause)), "<br>Costs ",
                    MillisWithUnit(static_cast<double>(cause.cost_per_iteration_ns)),
                    " of rank time per iteration. Next: ", Esc(cause.next_step));
    // The findings under a cause can be one per rank: folded, so the pictures stay near the top.
    absl::StrAppend(&out, "<details><summary>", cause.findings.size(),
                    cause.findings.size() == 1 ? " finding" : " findings", "</summary><ul>");
    for (size_t index : cause.findings) {
      if (index >= all.size()) continue;
      const findings::Finding& finding = all[index];
      absl::StrAppend(&out, "<li>", Esc(findings::KindName(finding.kind)), ": ",
                      Esc(finding.message));
    }
    absl::StrAppend(&out, "</ul></details>");
  }
  absl::StrAppend(&out, "</ol>\n");
  return out;
}

// Each stage's complete iterations: compute and the kinds of idle as shares of the window.
std::string StageBars(const job::Pipeline& pipeline, const std::vector<StageRow>& stage_rows) {
  const bubble::Result& bubble = pipeline.bubble;
  std::vector<BarRow> rows;
  for (const StageRow& row : stage_rows) {
    if (row.figures >= bubble.per_rank.size()) continue;
    const bubble::RankTotals& totals = bubble.per_rank[row.figures];
    const report_view::WindowShares shares = report_view::WindowSharesOf(totals);
    BarRow bar{.label = StageLabel(row), .segments = {}};
    const auto add = [&](const char* css, const char* what, double share, TimeNs ns) {
      bar.segments.push_back(
          {.css_class = css,
           .value = share,
           .tooltip = absl::StrCat(StageLabel(row), ": ", what, " ", Percent(share), "% (",
                                   MillisWithUnit(static_cast<double>(ns)), ")")});
    };
    add("cp", "compute", shares.compute, totals.split.compute);
    add(IdleClass(bubble::IdleKind::kFill), "fill", shares.fill, totals.split.fill);
    add(IdleClass(bubble::IdleKind::kCommWait), "comm_wait", shares.comm_wait,
        totals.split.comm_wait);
    add(IdleClass(bubble::IdleKind::kEmpty), "empty", shares.empty, totals.split.empty);
    add(IdleClass(bubble::IdleKind::kDrain), "drain", shares.drain, totals.split.drain);
    rows.push_back(std::move(bar));
  }
  if (bubble.complete_iterations == 0 || rows.empty()) {
    return "<h3>Per stage</h3>\n<p class=note>No complete iteration: no per-stage figures.</p>\n";
  }
  return absl::StrCat(
      "<h3>Per stage: where the window goes</h3>\n<p>Summed over the ", bubble.complete_iterations,
      " complete iterations, as shares of the window; stall is comm_wait plus empty.</p>\n",
      StackedBars(rows, 1.0, [](double share) { return absl::StrCat(Px(100 * share), "%"); }),
      "\n");
}

std::string Latency(const bubble::Result& bubble) {
  std::vector<Column> columns;
  for (const bubble::IterationFigures& iteration : bubble.iterations) {
    columns.push_back(
        {.label = absl::StrCat(iteration.number),
         .value = static_cast<double>(iteration.window()) / 1e6,
         .css_class = iteration.complete ? "lc" : "li",
         .tooltip = absl::StrCat("iteration ", iteration.number, ": ",
                                 MillisWithUnit(static_cast<double>(iteration.window())),
                                 ", bubble ", Percent(iteration.bubble_fraction), "%",
                                 iteration.complete ? "" : " (incomplete, left out of totals)")});
  }
  if (columns.empty()) return "";
  return absl::StrCat(
      "<h3>Latency per iteration</h3>\n<p>Each iteration's window, first to last device "
      "activity; incomplete iterations pale; the line is the median.</p>\n",
      Columns(columns, static_cast<double>(bubble.latency.p50) / 1e6, "median",
              [](double ms) { return absl::StrFormat("%g ms", ms); }),
      "\n");
}

std::string Memory(const job::Pipeline& pipeline, const std::vector<StageRow>& stage_rows) {
  const bubble::Result& bubble = pipeline.bubble;
  int64_t largest = 0;
  for (const bubble::RankTotals& totals : bubble.per_rank) {
    largest = std::max({largest, totals.memory.allocated_bytes, totals.memory.reserved_bytes});
  }
  const ByteUnit unit = ByteUnitFor(largest);
  const double gib = unit.bytes;
  std::vector<BarRow> rows;
  for (const StageRow& row : stage_rows) {
    if (row.figures >= bubble.per_rank.size()) continue;
    const MemoryPeak& memory = bubble.per_rank[row.figures].memory;
    if (memory.allocated_bytes < 0) continue;
    const int64_t reserved = std::max(memory.reserved_bytes, memory.allocated_bytes);
    rows.push_back(
        {.label = StageLabel(row),
         .segments = {{.css_class = "ma",
                       .value = static_cast<double>(memory.allocated_bytes) / gib,
                       .tooltip = absl::StrCat(StageLabel(row), ": peak allocated ",
                                               BinaryBytes(memory.allocated_bytes))},
                      {.css_class = "mr",
                       .value = static_cast<double>(reserved - memory.allocated_bytes) / gib,
                       .tooltip = absl::StrCat(StageLabel(row), ": peak reserved ",
                                               BinaryBytes(memory.reserved_bytes))}}});
  }
  if (rows.empty() || largest <= 0) {
    return "<h3>Memory peaks per stage</h3>\n<p class=note>No memory samples in the trace (or "
           "none above zero).</p>\n";
  }
  const double max_gib = static_cast<double>(largest) / gib;
  return absl::StrCat(
      "<h3>Memory peaks per stage</h3>\n<p>Peak allocated, and reserved beyond "
      "it, in ",
      unit.name, ".</p>\n",
      StackedBars(rows, max_gib > 0 ? max_gib : 1.0,
                  [](double v) { return absl::StrFormat("%g", v); }),
      "\n");
}

// A rank's stage (RankPlace::stage); "-" where the order does not place it.
std::string StageOf(const report_view::RankPlaces& places, int32_t rank) {
  const int32_t stage = places.StageOf(rank);
  return stage < 0 ? std::string("-") : absl::StrCat(stage);
}

std::string Links(const job::CrossRankFigures& figures, const report_view::RankPlaces& places) {
  if (figures.links.empty()) return "<h3>Links</h3>\n<p>No link measured.</p>\n";
  std::string out =
      "<h3>Links</h3>\n<table><tr><th>ranks<th>stages<th>transfers<th>MiB<th>transfer "
      "median<th>Gbit/s median<th>Gbit/s p10<th>sender wait<th>receiver wait<th>slow link\n";
  const auto gbps = [](const link_stats::Link& link, double value) {
    return link.bandwidth_samples == 0 ? std::string("-") : Gbps(value);
  };
  for (const link_stats::Link& link : figures.links) {
    absl::StrAppend(
        &out,
        Row({absl::StrCat(link.src, "\xE2\x86\x92", link.dst),
             absl::StrCat(StageOf(places, link.src), "\xE2\x86\x92", StageOf(places, link.dst)),
             absl::StrCat(link.transfers),
             link.median_message_bytes < 0 ? std::string("-") : Mebibytes(link.bytes),
             link.timed_transfers == 0
                 ? std::string("-")
                 : MillisWithUnit(static_cast<double>(link.transfer_median_ns)),
             gbps(link, link.gbps_median), gbps(link, link.gbps_p10),
             MillisWithUnit(static_cast<double>(link.sender_wait_ns)),
             MillisWithUnit(static_cast<double>(link.receiver_wait_ns)),
             link.slow ? absl::StrCat("SLOW (reference ", Gbps(link.reference_gbps), ")")
                       : std::string()},
            link.slow ? "slow" : ""));
  }
  absl::StrAppend(&out, "</table>\n");
  return out;
}

}  // namespace

std::string ShapeText(const job::Pipeline& pipeline) {
  if (!pipeline.shape.has_value()) return "shape unknown";
  const schedule_inference::Result& shape = *pipeline.shape;
  return absl::StrCat("p=", shape.p, " m=", shape.m, " v=", shape.v, " ",
                      std::string(schedule_inference::ScheduleFamilyName(shape.family)));
}

std::string PipelineDetails(const job::Pipeline& pipeline, const report_view::PipelineView& view,
                            size_t index, bool open) {
  const std::vector<StageRow> rows = StageRows(pipeline, view.places);
  std::vector<int32_t> ranks;
  for (const StageRow& row : rows) ranks.push_back(row.rank);
  return absl::StrCat(
      "<details id=p", index, open ? " open" : "", "><summary>Pipeline ", index, ": ",
      Esc(ShapeText(pipeline)), ", ranks ", absl::StrJoin(ranks, ","),
      pipeline.no_complete_iteration.empty()
          ? absl::StrCat(", bubble ", Percent(pipeline.bubble.bubble_fraction), "%")
          : std::string(", no complete iteration"),
      "</summary>\n", Headline(pipeline), Causes(pipeline), TimelineSection(pipeline, view, index),
      StageBars(pipeline, rows), Latency(pipeline.bubble), Memory(pipeline, rows),
      Links(pipeline.crossrank, view.places), WhatIfSection(pipeline), "</details>\n");
}

}  // namespace bubblescope::html
