#include "compare/figure_range.h"

#include <cmath>

#include "bubblescope/trace.h"

namespace bubblescope::compare {
namespace {

// Fractions written from doubles may sit a rounding step outside their bounds.
constexpr double kFractionSlack = 1e-9;
constexpr double kMaxMicros = static_cast<double>(kMaxTimeNs) / 1000.0;

}  // namespace

bool FigureInRange(double value, Figure figure) {
  if (!std::isfinite(value)) return false;
  switch (figure) {
    case Figure::kFraction:
      return value >= -kFractionSlack && value <= 1.0 + kFractionSlack;
    case Figure::kSignedFraction:
      return value >= -1.0 - kFractionSlack && value <= 1.0 + kFractionSlack;
    case Figure::kMicros:
      return value >= 0.0 && value <= kMaxMicros;
    case Figure::kBytes:
      return value >= 0.0 && value <= static_cast<double>(kMaxMemoryBytes);
    case Figure::kRate:
      return value >= 0.0;
  }
  return false;
}

std::string_view FigureRangeText(Figure figure) {
  switch (figure) {
    case Figure::kFraction:
      return "0 to 1";
    case Figure::kSignedFraction:
      return "-1 to 1";
    case Figure::kMicros:
      return "0 to 4.6e15 us (2^62 ns)";
    case Figure::kBytes:
      return "0 to 2^53 bytes";
    case Figure::kRate:
      return "a finite number not below 0";
  }
  return "";
}

}  // namespace bubblescope::compare
