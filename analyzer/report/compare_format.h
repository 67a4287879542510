// How the diff and gate reports spell a compared figure, its change and a limit: one helper per
// unit, so the text, Markdown and JUnit outputs of `diff` and `gate` agree to the character.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "compare/diff.h"

namespace bubblescope {

enum class FigureUnit : uint8_t {
  kFraction,  // 0.273 -> "27.3%"; differences in percentage points ("+15.6 pts")
  kMicros,    // 50423.0 -> "50.423 ms"
  kBytes,     // "2.38 GiB"
  kCount,     // "3"
};

// One side's value; "-" when unknown.
std::string FigureText(const std::optional<double>& value, FigureUnit unit);

// b - a with its sign ("+15.6 pts", "-1.250 ms (-2.4%)", "+96.00 MiB (+4.7%)"); relative changes
// are added for times and bytes; "-" unless both sides are known.
std::string DeltaText(const compare::Change& change, FigureUnit unit);

// "a -> b (delta)", or the one value when both sides agree, or "a -> -" / "- -> b".
std::string ChangeText(const compare::Change& change, FigureUnit unit);

// A relative figure as a signed percentage with one decimal: 0.05 -> "+5.0%".
std::string SignedPercent(double fraction);

// A difference of two fractions in percentage points with its sign, as DeltaText writes a
// fraction's change: 0.062 -> "+6.2 pts", -0.01 -> "-1.0 pts".
std::string SignedPoints(double fraction_difference);

}  // namespace bubblescope
