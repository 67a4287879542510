// What a number in a report measures, and so the range it must lie in (docs/diff-and-gate.md,
// "Figures read from a report"). A report bubblescope writes always holds its figures in range,
// so one outside it is a damaged or hand-made report: the report reader refuses it where the
// number stands rather than compare it (a bubble of -750% would pass any gate).
#pragma once

#include <cstdint>
#include <string_view>

namespace bubblescope::compare {

enum class Figure : uint8_t {
  kFraction,        // a share of a window: 0 to 1
  kSignedFraction,  // a difference of two shares (the excess bubble): -1 to 1
  kMicros,          // a time in microseconds: 0 to the model's time range (2^62 - 1 ns)
  kBytes,           // a memory figure: 0 to kMaxMemoryBytes (2^53)
  kRate,            // a bandwidth or a per-op time in ns: finite and not negative
};

// True when `value` is finite and within `figure`'s range; fractions may stray 1e-9 past their
// bounds (decimal rounding).
bool FigureInRange(double value, Figure figure);

// The range in words, for messages: "0 to 1", "0 to 2^53 bytes", ...
std::string_view FigureRangeText(Figure figure);

}  // namespace bubblescope::compare
