#include "report/html_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "absl/strings/str_cat.h"
#include "report/html_svg.h"

namespace bubblescope::html {
namespace {

constexpr int64_t kBarLabelWidth = 120;
constexpr int64_t kBarPlotWidth = 560;
constexpr int64_t kBarHeight = 16;
constexpr int64_t kBarPitch = 22;
constexpr int64_t kAxisRoom = 24;  // under a plot: the axis and its labels

std::string SvgOpen(int64_t width, int64_t height, const char* css_class) {
  return absl::StrCat("<svg class=", css_class, " width=", width, " height=", height,
                      " viewBox=\"0 0 ", width, " ", height, "\">");
}

std::string Titled(const char* element, const std::string& tooltip) {
  return absl::StrCat("<title>", Esc(tooltip), "</title></", element, ">");
}

// A vertical value axis at x = `x0` from `bottom` up `height` px, with grid lines `width` long.
void AppendValueAxis(double max_value, int64_t x0, int64_t bottom, int64_t height, int64_t width,
                     const std::function<std::string(double)>& label, std::string* out) {
  absl::StrAppend(out, "<g class=ax><path d=\"M", x0, " ", bottom, "v-", height, "\"/>");
  const double step = NiceStep(max_value, std::max<int>(1, static_cast<int>(height / 30)));
  for (int i = 0; static_cast<double>(i) * step <= max_value * (1 + 1e-9); ++i) {
    const double value = static_cast<double>(i) * step;
    const int64_t y = bottom - Px(value / max_value * static_cast<double>(height));
    absl::StrAppend(out, "<path class=gr d=\"M", x0, " ", y, "h", width,
                    "\"/><text class=r x=", x0 - 4, " y=", y + 4, ">", Esc(label(value)),
                    "</text>");
  }
  absl::StrAppend(out, "</g>");
}

}  // namespace

std::string StackedBars(const std::vector<BarRow>& rows, double max_value,
                        const std::function<std::string(double)>& axis_label) {
  const auto count = static_cast<int64_t>(rows.size());
  const int64_t width = kBarLabelWidth + kBarPlotWidth + 24;
  std::string out = SvgOpen(width, count * kBarPitch + kAxisRoom, "ch");
  const double scale = max_value > 0.0 ? static_cast<double>(kBarPlotWidth) / max_value : 0.0;
  for (int64_t r = 0; r < count; ++r) {
    const BarRow& row = rows[static_cast<size_t>(r)];
    const int64_t y = r * kBarPitch;
    absl::StrAppend(&out, "<text class=rl x=4 y=", y + 12, ">", Esc(row.label), "</text>");
    double at = 0.0;
    for (const Segment& segment : row.segments) {
      // Both ends rounded, so adjacent segments meet without gaps or overlaps.
      const int64_t x = kBarLabelWidth + Px(at * scale);
      at += segment.value;
      const int64_t end = kBarLabelWidth + Px(at * scale);
      if (end <= x) continue;
      absl::StrAppend(&out, "<rect class=", segment.css_class, " x=", x, " y=", y,
                      " width=", end - x, " height=", kBarHeight, ">",
                      Titled("rect", segment.tooltip));
    }
  }
  AppendAxis(max_value, kBarLabelWidth, kBarPlotWidth, count * kBarPitch, axis_label, &out);
  absl::StrAppend(&out, "</svg>");
  return out;
}

std::string Columns(const std::vector<Column>& columns, double reference,
                    const std::string& reference_label,
                    const std::function<std::string(double)>& axis_label) {
  constexpr int64_t kLeft = 64;
  constexpr int64_t kTop = 8;
  constexpr int64_t kPlotHeight = 150;
  const auto count = static_cast<int64_t>(columns.size());
  const int64_t bar = std::clamp<int64_t>(720 / std::max<int64_t>(1, count), 3, 28);
  const int64_t pitch = bar + std::max<int64_t>(1, bar / 4);
  const int64_t plot_width = std::max<int64_t>(120, count * pitch);
  double max_value = reference;
  for (const Column& column : columns) max_value = std::max(max_value, column.value);
  if (!(max_value > 0.0)) max_value = 1.0;
  const int64_t bottom = kTop + kPlotHeight;
  std::string out = SvgOpen(kLeft + plot_width + 120, bottom + kAxisRoom, "ch");
  AppendValueAxis(max_value, kLeft, bottom, kPlotHeight, plot_width, axis_label, &out);
  // Labels under every bar while they fit, else under every k-th.
  const int64_t label_every = std::max<int64_t>(1, (28 + pitch - 1) / pitch);
  for (int64_t i = 0; i < count; ++i) {
    const Column& column = columns[static_cast<size_t>(i)];
    const int64_t height = Px(column.value / max_value * static_cast<double>(kPlotHeight));
    const int64_t x = kLeft + 2 + i * pitch;
    absl::StrAppend(&out, "<rect class=", column.css_class, " x=", x, " y=", bottom - height,
                    " width=", bar, " height=", height, ">", Titled("rect", column.tooltip));
    if (i % label_every == 0) {
      absl::StrAppend(&out, "<text class=c x=", x + bar / 2, " y=", bottom + 15, ">",
                      Esc(column.label), "</text>");
    }
  }
  if (reference > 0.0) {
    const int64_t y = bottom - Px(reference / max_value * static_cast<double>(kPlotHeight));
    absl::StrAppend(&out, "<path class=ref d=\"M", kLeft, " ", y, "h", plot_width,
                    "\"/><text x=", kLeft + plot_width + 4, " y=", y + 4, ">", Esc(reference_label),
                    "</text>");
  }
  absl::StrAppend(&out, "</svg>");
  return out;
}

std::string LogLines(const std::vector<Series>& series, const Point& marked,
                     const std::string& x_title, const std::string& y_title,
                     const std::function<std::string(double)>& y_label) {
  constexpr int64_t kLeft = 60;
  constexpr int64_t kTop = 22;
  constexpr int64_t kPlotWidth = 360;
  constexpr int64_t kPlotHeight = 180;
  std::set<double> xs;
  double max_y = marked.tooltip.empty() ? 0.0 : marked.y;
  for (const Series& line : series) {
    for (const Point& point : line.points) {
      xs.insert(point.x);
      max_y = std::max(max_y, point.y);
    }
  }
  if (!marked.tooltip.empty()) xs.insert(marked.x);
  if (xs.empty()) return "";
  if (!(max_y > 0.0)) max_y = 1.0;
  max_y *= 1.1;  // room above the highest point for its dot
  double low = std::log2(*xs.begin());
  double high = std::log2(*xs.rbegin());
  if (high - low < 1e-9) {
    low -= 1.0;
    high += 1.0;
  }
  const auto x_of = [&](double x) {
    return kLeft + 10 +
           Px((std::log2(x) - low) / (high - low) * static_cast<double>(kPlotWidth - 20));
  };
  const int64_t bottom = kTop + kPlotHeight;
  const auto y_of = [&](double y) {
    return bottom - Px(y / max_y * static_cast<double>(kPlotHeight));
  };
  std::string out = SvgOpen(kLeft + kPlotWidth + 16, bottom + 40, "ch");
  absl::StrAppend(&out, "<text x=4 y=12>", Esc(y_title), "</text>");
  AppendValueAxis(max_y, kLeft, bottom, kPlotHeight, kPlotWidth, y_label, &out);
  absl::StrAppend(&out, "<g class=ax><path d=\"M", kLeft, " ", bottom, "h", kPlotWidth, "\"/>");
  for (double x : xs) {
    absl::StrAppend(&out, "<text x=", x_of(x), " y=", bottom + 15, ">", Px(x), "</text>");
  }
  absl::StrAppend(&out, "<text x=", kLeft + kPlotWidth / 2, " y=", bottom + 32, ">", Esc(x_title),
                  "</text></g>");
  for (const Series& line : series) {
    absl::StrAppend(&out, "<g class=", line.css_class, "><polyline points=\"");
    for (const Point& point : line.points) {
      absl::StrAppend(&out, x_of(point.x), ",", y_of(point.y), " ");
    }
    absl::StrAppend(&out, "\"/>");
    for (const Point& point : line.points) {
      absl::StrAppend(&out, "<circle cx=", x_of(point.x), " cy=", y_of(point.y), " r=4>",
                      Titled("circle", point.tooltip));
    }
    absl::StrAppend(&out, "</g>");
  }
  if (!marked.tooltip.empty()) {
    absl::StrAppend(&out, "<circle class=mk cx=", x_of(marked.x), " cy=", y_of(marked.y), " r=7>",
                    Titled("circle", marked.tooltip));
  }
  absl::StrAppend(&out, "</svg>");
  return out;
}

}  // namespace bubblescope::html
