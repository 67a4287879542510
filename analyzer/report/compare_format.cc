#include "report/compare_format.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/units.h"

namespace bubblescope {
namespace {

// A magnitude in `unit` with its sign always written ("+", "-"); zero is "+0".
std::string Signed(double value, FigureUnit unit) {
  const std::string sign = value < 0 ? "-" : "+";
  const double magnitude = std::fabs(value);
  switch (unit) {
    case FigureUnit::kFraction:
      return absl::StrCat(sign, Percent(magnitude), " pts");
    case FigureUnit::kMicros:
      return absl::StrCat(sign, Millis(magnitude * 1e3), " ms");
    case FigureUnit::kBytes:
      return absl::StrCat(sign, BinaryBytes(std::llround(magnitude)));
    case FigureUnit::kCount:
      return absl::StrCat(sign, std::llround(magnitude));
  }
  return "-";
}

}  // namespace

std::string FigureText(const std::optional<double>& value, FigureUnit unit) {
  if (!value.has_value()) return "-";
  switch (unit) {
    case FigureUnit::kFraction:
      return absl::StrCat(Percent(*value), "%");
    case FigureUnit::kMicros:
      return absl::StrCat(Millis(*value * 1e3), " ms");
    case FigureUnit::kBytes:
      return BinaryBytes(std::llround(*value));
    case FigureUnit::kCount:
      return absl::StrCat(std::llround(*value));
  }
  return "-";
}

std::string SignedPercent(double fraction) {
  return absl::StrCat(fraction < 0 ? "-" : "+", Percent(std::fabs(fraction)), "%");
}

std::string SignedPoints(double fraction_difference) {
  return Signed(fraction_difference, FigureUnit::kFraction);
}

std::string DeltaText(const compare::Change& change, FigureUnit unit) {
  if (!change.Both()) return "-";
  std::string text = Signed(change.Delta(), unit);
  const std::optional<double> relative = change.Relative();
  if (relative.has_value() && (unit == FigureUnit::kMicros || unit == FigureUnit::kBytes)) {
    absl::StrAppend(&text, " (", SignedPercent(*relative), ")");
  }
  return text;
}

std::string ChangeText(const compare::Change& change, FigureUnit unit) {
  const std::string a = FigureText(change.a, unit);
  const std::string b = FigureText(change.b, unit);
  if (a == b) return a;
  if (!change.Both()) return absl::StrCat(a, " -> ", b);
  return absl::StrCat(a, " -> ", b, " (", DeltaText(change, unit), ")");
}

}  // namespace bubblescope
