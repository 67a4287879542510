// The small pieces every part of the HTML report (docs/html-report.md) writes with: escaped
// text, integer coordinates, tick steps for axes and the one stylesheet class per figure kind.
// Markup is kept compact on purpose (unquoted integer attributes, short class names, colours in
// CSS): a job of 64 pipelines of 8 stages x 64 microbatches must still open in well under a
// second.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/bubble.h"
#include "pipeline/pipeline_op.h"

namespace bubblescope::html {

// `text` escaped for element content or a quoted attribute (text/html_escape.h).
std::string Esc(std::string_view text);

// `value` rounded to the nearest integer, as the SVG coordinate it becomes.
int64_t Px(double value);

// A round step (1, 2 or 5 times a power of ten) that cuts `range` into at most `max_ticks`
// pieces; 1 for a range that is not positive.
double NiceStep(double range, int max_ticks);

// The stylesheet class of an op type ("F", "B", "W") and of an idle kind ("fi", "dr", "cw",
// "em"): the one place the timeline, the bars and the legend take them from.
const char* OpClass(pipeline::OpType type);
const char* IdleClass(bubble::IdleKind kind);

// "forward", "backward", "weight-grad".
const char* OpTypeWord(pipeline::OpType type);

// A horizontal axis of `width` px under a plot, ticks every NiceStep of [0, max_value], each
// labelled by `label(value)`; `y` the axis line's position. Appends a <g class=ax>.
void AppendAxis(double max_value, int64_t x0, int64_t width, int64_t y,
                const std::function<std::string(double)>& label, std::string* out);

// The binary unit a chart of byte counts up to `largest` reads best in: "GiB", "MiB" or "KiB",
// and that unit in bytes.
struct ByteUnit {
  const char* name = "GiB";
  double bytes = 1024.0 * 1024.0 * 1024.0;
};
ByteUnit ByteUnitFor(int64_t largest);

// One <table> row of already-escaped cells: "<tr><td>a<td>b\n" (end tags are optional).
std::string Row(const std::vector<std::string>& cells, const std::string& row_class = "");

}  // namespace bubblescope::html
