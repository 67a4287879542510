#include "report/html_svg.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "text/html_escape.h"

namespace bubblescope::html {

std::string Esc(std::string_view text) { return text::HtmlEscaped(text); }

int64_t Px(double value) { return std::llround(value); }

double NiceStep(double range, int max_ticks) {
  if (!(range > 0.0) || max_ticks < 1) return 1.0;
  const double rough = range / max_ticks;
  const double power = std::pow(10.0, std::floor(std::log10(rough)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * power >= rough) return factor * power;
  }
  return 10.0 * power;
}

const char* OpClass(pipeline::OpType type) {
  switch (type) {
    case pipeline::OpType::kForward:
      return "F";
    case pipeline::OpType::kBackward:
      return "B";
    case pipeline::OpType::kWeightGrad:
      return "W";
  }
  return "F";
}

const char* IdleClass(bubble::IdleKind kind) {
  switch (kind) {
    case bubble::IdleKind::kFill:
      return "fi";
    case bubble::IdleKind::kDrain:
      return "dr";
    case bubble::IdleKind::kCommWait:
      return "cw";
    case bubble::IdleKind::kEmpty:
      return "em";
  }
  return "em";
}

const char* OpTypeWord(pipeline::OpType type) {
  switch (type) {
    case pipeline::OpType::kForward:
      return "forward";
    case pipeline::OpType::kBackward:
      return "backward";
    case pipeline::OpType::kWeightGrad:
      return "weight-grad";
  }
  return "forward";
}

void AppendAxis(double max_value, int64_t x0, int64_t width, int64_t y,
                const std::function<std::string(double)>& label, std::string* out) {
  absl::StrAppend(out, "<g class=ax><path d=\"M", x0, " ", y, "h", width, "\"/>");
  if (max_value > 0.0 && width > 0) {
    // About one tick per 80 px, so the labels never run into each other.
    const double step = NiceStep(max_value, static_cast<int>(std::max<int64_t>(1, width / 80)));
    for (int i = 0; static_cast<double>(i) * step <= max_value * (1 + 1e-9); ++i) {
      const double value = static_cast<double>(i) * step;
      const int64_t x = x0 + Px(value / max_value * static_cast<double>(width));
      absl::StrAppend(out, "<path d=\"M", x, " ", y, "v4\"/><text x=", x, " y=", y + 15, ">",
                      Esc(label(value)), "</text>");
    }
  }
  absl::StrAppend(out, "</g>");
}

ByteUnit ByteUnitFor(int64_t largest) {
  constexpr double kKiB = 1024.0;
  if (static_cast<double>(largest) >= kKiB * kKiB * kKiB)
    return {.name = "GiB", .bytes = kKiB * kKiB * kKiB};
  if (static_cast<double>(largest) >= kKiB * kKiB) return {.name = "MiB", .bytes = kKiB * kKiB};
  return {.name = "KiB", .bytes = kKiB};
}

std::string Row(const std::vector<std::string>& cells, const std::string& row_class) {
  std::string out = row_class.empty() ? "<tr>" : absl::StrCat("<tr class=", row_class, ">");
  for (const std::string& cell : cells) absl::StrAppend(&out, "<td>", cell);
  out.push_back('\n');
  return out;
}

}  // namespace bubblescope::html
