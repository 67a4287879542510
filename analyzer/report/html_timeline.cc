#include "report/html_timeline.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/percentile.h"
#include "report/html_svg.h"
#include "report/units.h"

namespace bubblescope::html {
namespace {

constexpr int64_t kLabelWidth = 96;  // the row labels' column, left of time 0
constexpr int64_t kRowHeight = 18;
constexpr int64_t kRowPitch = 22;   // row height and the gap below it
constexpr int64_t kCommLineY = 20;  // the communication line, in the gap under the row
constexpr int64_t kAxisHeight = 24;
constexpr int64_t kRightMargin = 12;
// The time scale makes all but the shortest ops (the 2nd percentile of op durations) wide enough
// for the largest microbatch number, and the longest iteration at least kFitWidth wide; but never
// wider than kMaxWidth, past which a browser scrolls slowly and labels give way to tooltips.
constexpr int64_t kShortOpPercentile = 2;
constexpr double kFitWidth = 1100.0;
constexpr double kMaxWidth = 24000.0;
constexpr int64_t kDigitPx = 7;  // a digit at the labels' 11 px font, with room to spare
constexpr int64_t kLabelPadPx = 4;

// The width a cell needs for `label` to be written on it.
int64_t LabelPx(size_t characters) {
  return kDigitPx * static_cast<int64_t>(characters) + kLabelPadPx;
}

}  // namespace

std::vector<StageRow> StageRows(const job::Pipeline& pipeline) {
  const std::vector<int32_t>& order = pipeline.crossrank.pipeline.stage_order();
  std::vector<StageRow> rows;
  const std::vector<int32_t>& ranks = pipeline.bubble.ranks;
  for (size_t i = 0; i < ranks.size(); ++i) {
    auto found = std::find(order.begin(), order.end(), ranks[i]);
    const int32_t stage = found == order.end() ? -1 : static_cast<int32_t>(found - order.begin());
    rows.push_back({.stage = stage, .rank = ranks[i], .figures = i});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const StageRow& a, const StageRow& b) {
    const auto key = [](const StageRow& row) { return row.stage < 0 ? INT32_MAX : row.stage; };
    return key(a) < key(b);
  });
  return rows;
}

namespace {

// Pixels per nanosecond for every picture of the pipeline (see kShortOpPercentile).
double ScaleOf(const job::Pipeline& pipeline) {
  std::vector<TimeNs> durations;
  int32_t last_microbatch = 0;
  for (const op_timeline::TimelineOp& op : pipeline.op_timeline.ops) {
    if (op.end > op.start) durations.push_back(op.end - op.start);
    last_microbatch = std::max(last_microbatch, op.microbatch);
  }
  TimeNs longest = 0;
  for (const bubble::IterationFigures& iteration : pipeline.bubble.iterations) {
    longest = std::max(longest, iteration.window());
  }
  if (pipeline.ideal.has_value()) {
    longest = std::max(longest, pipeline.ideal->schedule_ns);
    for (const pipeline::IdealOp& op : pipeline.ideal->schedule) {
      if (op.end > op.start) durations.push_back(op.end - op.start);
      last_microbatch = std::max(last_microbatch, op.microbatch);
    }
  }
  if (longest <= 0) return 0.0;
  const double span = static_cast<double>(longest);
  double scale = kFitWidth / span;
  if (!durations.empty()) {
    const TimeNs short_op = NearestRank(std::move(durations), kShortOpPercentile);
    // One pixel over, so rounding both ends of a cell never takes it below the label's width.
    const double label_px = static_cast<double>(LabelPx(absl::StrCat(last_microbatch).size()) + 1);
    if (short_op > 0) scale = std::max(scale, label_px / static_cast<double>(short_op));
  }
  return std::min(scale, kMaxWidth / span);
}

// Draws one cell of a row: a rect from `start` to `end` ns after the picture's time 0, with
// `tooltip` and, when the cell is wide enough for it, `label` centred on it.
class RowPainter {
 public:
  RowPainter(double scale, std::string* out) : scale_(scale), out_(*out) {}

  void Cell(std::string_view css_class, TimeNs start, TimeNs end, const std::string& tooltip,
            const std::string& label) {
    const int64_t x = X(start);
    const int64_t width = std::max<int64_t>(1, X(end) - x);
    absl::StrAppend(&out_, "<rect class=", std::string(css_class), " x=", x, " width=", width,
                    " height=", kRowHeight, "><title>", Esc(tooltip), "</title></rect>");
    if (!label.empty() && width >= LabelPx(label.size())) {
      absl::StrAppend(&out_, "<text x=", x + width / 2, " y=13>", label, "</text>");
    }
  }

  // The rank's communication as one line under the row (a stretch per span, overlapping its
  // compute or not), one path with one tooltip: a big job has thousands of transfers per row.
  void CommLine(const std::vector<TimeRange>& spans, TimeNs origin) {
    if (spans.empty()) return;
    TimeNs total = 0;
    absl::StrAppend(&out_, "<path class=cm d=\"");
    for (const TimeRange& span : spans) {
      const int64_t x = X(span.start - origin);
      absl::StrAppend(&out_, "M", x, " ", kCommLineY, "h",
                      std::max<int64_t>(1, X(span.end - origin) - x));
      total += span.end - span.start;
    }
    absl::StrAppend(&out_, "\"><title>communication ", Millis(static_cast<double>(total)),
                    " ms in ", spans.size(), spans.size() == 1 ? " span" : " spans",
                    "</title></path>");
  }

 private:
  int64_t X(TimeNs at) const { return kLabelWidth + Px(static_cast<double>(at) * scale_); }

  double scale_;
  std::string& out_;
};

void OpenSvg(int64_t rows, TimeNs span, double scale, const char* css_class, std::string* out) {
  const int64_t width = kLabelWidth + Px(static_cast<double>(span) * scale) + kRightMargin;
  const int64_t height = rows * kRowPitch + kAxisHeight;
  absl::StrAppend(out, "<svg class=", css_class, " width=", width, " height=", height,
                  " viewBox=\"0 0 ", width, " ", height, "\">");
}

void CloseSvg(int64_t rows, TimeNs span, double scale, std::string* out) {
  AppendAxis(
      static_cast<double>(span) / 1e6, kLabelWidth, Px(static_cast<double>(span) * scale),
      rows * kRowPitch, [](double ms) { return absl::StrCat(ms, " ms"); }, out);
  absl::StrAppend(out, "</svg>");
}

void OpenRow(size_t row, int32_t stage, int32_t rank, std::string* out) {
  const std::string stage_text = stage < 0 ? std::string("?") : absl::StrCat(stage);
  absl::StrAppend(out, "<g class=sr data-stage=", stage < 0 ? "-1" : stage_text,
                  rank < 0 ? std::string() : absl::StrCat(" data-rank=", rank),
                  " transform=\"translate(0,", static_cast<int64_t>(row) * kRowPitch,
                  ")\"><text class=rl x=4 y=13>stage ", stage_text,
                  rank < 0 ? std::string() : absl::StrCat(" \xC2\xB7 rank ", rank), "</text>");
}

// "forward mb 3: 0.200 ms at 1.234 ms" (with " chunk 1" after the microbatch from the second
// chunk on): short, since a big job has tens of thousands; the row names the stage.
std::string OpTooltip(pipeline::OpType type, int32_t microbatch, int32_t chunk, TimeNs start,
                      TimeNs end) {
  std::string text = absl::StrCat(OpTypeWord(type), " mb ",
                                  microbatch < 0 ? std::string("?") : absl::StrCat(microbatch));
  if (chunk > 0) absl::StrAppend(&text, " chunk ", chunk);
  absl::StrAppend(&text, ": ", Millis(static_cast<double>(end - start)), " ms at ",
                  Millis(static_cast<double>(start)), " ms");
  return text;
}

// The op's class; an odd chunk's cells also get `k` (drawn lighter), so an interleaved
// schedule's chunks tell apart at a glance.
std::string OpCellClass(pipeline::OpType type, int32_t chunk) {
  if (chunk <= 0 || chunk % 2 == 0) return OpClass(type);
  return absl::StrCat("\"", OpClass(type), " k\"");
}

std::string MicrobatchLabel(int32_t microbatch) {
  return microbatch < 0 ? std::string() : absl::StrCat(microbatch);
}

// The measured iteration: per stage row its ops and its idle spans, time 0 at the window start.
std::string IterationSvg(const job::Pipeline& pipeline, const bubble::IterationFigures& iteration,
                         const std::vector<const op_timeline::TimelineOp*>& ops, double scale) {
  const std::vector<StageRow> rows = StageRows(pipeline);
  std::string out;
  const TimeNs origin = iteration.window_start;
  OpenSvg(static_cast<int64_t>(rows.size()), iteration.window(), scale, "tl", &out);
  RowPainter paint(scale, &out);
  for (size_t r = 0; r < rows.size(); ++r) {
    const StageRow& row = rows[r];
    OpenRow(r, row.stage, row.rank, &out);
    if (row.figures < iteration.ranks.size()) {
      for (const bubble::IdleSpan& span : iteration.ranks[row.figures].idle_spans) {
        paint.Cell(IdleClass(span.kind), span.start - origin, span.end - origin,
                   absl::StrCat(std::string(bubble::IdleKindName(span.kind)), " ",
                                Millis(static_cast<double>(span.end - span.start)), " ms at ",
                                Millis(static_cast<double>(span.start - origin)), " ms"),
                   "");
      }
    }
    for (const op_timeline::TimelineOp* op : ops) {
      if (op->rank != row.rank) continue;
      paint.Cell(
          OpCellClass(op->type, op->chunk), op->start - origin, op->end - origin,
          OpTooltip(op->type, op->microbatch, op->chunk, op->start - origin, op->end - origin),
          MicrobatchLabel(op->microbatch));
    }
    if (row.figures < iteration.ranks.size()) {
      paint.CommLine(iteration.ranks[row.figures].comm_spans, origin);
    }
    absl::StrAppend(&out, "</g>");
  }
  CloseSvg(static_cast<int64_t>(rows.size()), iteration.window(), scale, &out);
  return out;
}

// The schedule's own run, one row per stage, time 0 at its first compute.
std::string IdealSvg(const pipeline::IdealBubble& ideal, int32_t p, double scale) {
  std::string out;
  OpenSvg(p, ideal.schedule_ns, scale, "tl", &out);
  RowPainter paint(scale, &out);
  for (int32_t stage = 0; stage < p; ++stage) {
    OpenRow(static_cast<size_t>(stage), stage, -1, &out);
    absl::StrAppend(&out, "<rect class=bg x=", kLabelWidth,
                    " width=", Px(static_cast<double>(ideal.schedule_ns) * scale),
                    " height=", kRowHeight, " />");
    for (const pipeline::IdealOp& op : ideal.schedule) {
      if (op.stage != stage) continue;
      paint.Cell(OpCellClass(op.type, op.chunk), op.start, op.end,
                 OpTooltip(op.type, op.microbatch, op.chunk, op.start, op.end),
                 MicrobatchLabel(op.microbatch));
    }
    absl::StrAppend(&out, "</g>");
  }
  CloseSvg(p, ideal.schedule_ns, scale, &out);
  return out;
}

std::string IterationOption(const bubble::IterationFigures& iteration, bool selected) {
  return absl::StrCat("<option value=", iteration.number, selected ? " selected" : "",
                      ">iteration ", iteration.number, ": ",
                      Millis(static_cast<double>(iteration.window())), " ms, bubble ",
                      Percent(iteration.bubble_fraction), "%",
                      iteration.complete ? "" : " (incomplete)", "</option>");
}

}  // namespace

size_t DefaultIteration(const bubble::Result& bubble) {
  const std::vector<bubble::IterationFigures>& iterations = bubble.iterations;
  for (size_t i = 0; i < iterations.size(); ++i) {
    if (iterations[i].complete && iterations[i].window() == bubble.latency.p50) return i;
  }
  for (size_t i = 0; i < iterations.size(); ++i) {
    if (iterations[i].complete) return i;
  }
  return 0;
}

std::string TimelineSection(const job::Pipeline& pipeline, size_t index) {
  const bubble::Result& bubble = pipeline.bubble;
  const double scale = ScaleOf(pipeline);
  std::string out;
  if (bubble.iterations.empty() || scale <= 0.0) {
    return "<p class=note>No iteration with device activity: nothing to draw.</p>\n";
  }
  std::map<int64_t, std::vector<const op_timeline::TimelineOp*>> ops_by_iteration;
  for (const op_timeline::TimelineOp& op : pipeline.op_timeline.ops) {
    ops_by_iteration[op.iteration].push_back(&op);
  }
  const std::vector<const op_timeline::TimelineOp*> none;
  auto ops_of = [&](int64_t number) -> const std::vector<const op_timeline::TimelineOp*>& {
    auto found = ops_by_iteration.find(number);
    return found == ops_by_iteration.end() ? none : found->second;
  };
  const size_t chosen = DefaultIteration(bubble);
  const std::string box = absl::StrCat("p", index, "t");
  absl::StrAppend(
      &out, "<h3>Measured schedule</h3>\n<p><label>Iteration <select class=it data-box=", box, ">");
  for (size_t i = 0; i < bubble.iterations.size(); ++i) {
    absl::StrAppend(&out, IterationOption(bubble.iterations[i], i == chosen));
  }
  absl::StrAppend(&out, "</select></label></p>\n");
  if (pipeline.op_timeline.ops.empty()) {
    absl::StrAppend(&out,
                    "<p class=note>The ops could not be placed (no schedule shape), so only the "
                    "bubble's idle spans are drawn.</p>\n");
  } else if (pipeline.op_timeline.unlabelled > 0) {
    absl::StrAppend(&out, "<p class=note>", pipeline.op_timeline.unlabelled,
                    " ops whose microbatch could not be told carry no number.</p>\n");
  }
  // The chosen iteration is drawn in place; the rest wait in templates, parsed but never laid
  // out until chosen, so a long trace costs little to open.
  const bubble::IterationFigures& first = bubble.iterations[chosen];
  absl::StrAppend(&out, "<div class=sc><div class=tlb id=", box, " data-it=", first.number, ">",
                  IterationSvg(pipeline, first, ops_of(first.number), scale), "</div>");
  for (size_t i = 0; i < bubble.iterations.size(); ++i) {
    if (i == chosen) continue;
    const bubble::IterationFigures& iteration = bubble.iterations[i];
    absl::StrAppend(&out, "<template data-it=", iteration.number, ">",
                    IterationSvg(pipeline, iteration, ops_of(iteration.number), scale),
                    "</template>");
  }
  absl::StrAppend(&out, "</div>\n");
  if (pipeline.ideal.has_value() && !pipeline.ideal->schedule.empty() &&
      pipeline.shape.has_value()) {
    const schedule_inference::Result& shape = *pipeline.shape;
    absl::StrAppend(&out, "<h3>Theoretical schedule</h3>\n<p>The same p=", shape.p, ", m=", shape.m,
                    ", v=", shape.v, " ", Esc(schedule_inference::ScheduleFamilyName(shape.family)),
                    " schedule with every stage at the mean op times, free links and no host "
                    "delay: bubble ",
                    Percent(pipeline.ideal->fraction), "% (",
                    Esc(pipeline::IdealSourceName(pipeline.ideal->source)),
                    "). Same time scale as above; the gaps are its own bubble.</p>\n<div class=sc>",
                    IdealSvg(*pipeline.ideal, shape.p, scale), "</div>\n");
  } else {
    absl::StrAppend(&out,
                    "<p class=note>No theoretical schedule to draw (the schedule's shape or its "
                    "per-stage times are unknown).</p>\n");
  }
  return out;
}

}  // namespace bubblescope::html
