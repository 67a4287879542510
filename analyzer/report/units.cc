#include "report/units.h"

#include <array>
#include <cmath>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace bubblescope {

std::string Millis(double ns) {
  const double micros = std::round(ns / 1e3);  // halves away from zero
  const double magnitude = std::fabs(micros);
  // Figures read from a report may be anything JSON holds: past what the integer split below
  // can hold, they are written in scientific form instead.
  if (!(magnitude < 9.0e18)) return absl::StrFormat("%.6g", ns / 1e6);
  const auto whole = static_cast<uint64_t>(magnitude);
  return absl::StrFormat("%s%d.%03d", micros < 0 ? "-" : "", whole / 1000, whole % 1000);
}

std::string Millis(int64_t ns) { return Millis(static_cast<double>(ns)); }

std::string MillisWithUnit(double ns) { return absl::StrCat(Millis(ns), " ms"); }

std::string Micros(double ns) { return absl::StrFormat("%.3f", ns / 1e3); }

std::string Gbps(double gbit_per_second) { return absl::StrFormat("%.2f", gbit_per_second); }

std::string Percent(double fraction) { return absl::StrFormat("%.1f", 100.0 * fraction); }

std::string BinaryBytes(int64_t bytes) {
  if (bytes < 0) return "-";
  static constexpr std::array<std::string_view, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(bytes, " B");
  return absl::StrFormat("%.2f %s", value, std::string(kUnits[unit]));
}

std::string RoundedBinaryBytes(double bytes) { return BinaryBytes(std::llround(bytes)); }

std::string Mebibytes(int64_t bytes) {
  return absl::StrFormat("%.2f", static_cast<double>(bytes) / (1 << 20));
}

std::string GiB(int64_t bytes) {
  if (bytes < 0) return "-";
  return absl::StrFormat("%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace bubblescope
