// The small charts of the HTML report (docs/html-report.md): horizontal stacked bars (each
// stage's window split into compute and the kinds of idle time, each stage's memory peaks),
// vertical bars (the latency of each iteration) and lines over a log2 axis (the what-if
// trade-off). Each returns one inline <svg>, integer coordinates, colours by class.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace bubblescope::html {

struct Segment {
  std::string css_class;
  double value = 0.0;
  std::string tooltip;  // plain text; escaped when written
};

struct BarRow {
  std::string label;              // plain text
  std::vector<Segment> segments;  // stacked left to right
};

// One bar per row, segments stacked, `max_value` the full width; the axis labels its ticks with
// `axis_label`.
std::string StackedBars(const std::vector<BarRow>& rows, double max_value,
                        const std::function<std::string(double)>& axis_label);

struct Column {
  std::string label;  // under the bar, plain text
  double value = 0.0;
  std::string css_class;
  std::string tooltip;
};

// One vertical bar per column from 0 up to its value; a dashed line at `reference` (> 0) with
// `reference_label`; the left axis labels with `axis_label`.
std::string Columns(const std::vector<Column>& columns, double reference,
                    const std::string& reference_label,
                    const std::function<std::string(double)>& axis_label);

struct Point {
  double x = 0.0;  // > 0: the axis is log2
  double y = 0.0;
  std::string tooltip;
};

struct Series {
  std::string name;  // plain text, in the legend
  std::string css_class;
  std::vector<Point> points;  // by x
};

// Lines through each series' points, x on a log2 axis ticked at every x that occurs, y from 0;
// `marked` (when it has a tooltip) drawn as a ringed dot: the measured configuration.
std::string LogLines(const std::vector<Series>& series, const Point& marked,
                     const std::string& x_title, const std::string& y_title,
                     const std::function<std::string(double)>& y_label);

}  // namespace bubblescope::html
