// The gate's thresholds from text: one parser for a flag's value and a config file's line.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compare/gate.h"
#include "text/utf8.h"

namespace bubblescope::compare {
namespace {

// Abseil's string helpers take Debian's own string_view, not std::string_view.
std::string_view Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

bool IsNumberChar(char c) { return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+'; }

struct Unit {
  std::string_view name;
  double scale;
};

constexpr Unit kFractionUnits[] = {{"", 1.0}, {"%", 0.01}};
constexpr Unit kTimeUnits[] = {{"us", 1.0}, {"ms", 1e3}, {"s", 1e6}};
constexpr Unit kByteUnits[] = {{"", 1.0},
                               {"B", 1.0},
                               {"KiB", 1024.0},
                               {"MiB", 1048576.0},
                               {"GiB", 1073741824.0},
                               {"TiB", 1099511627776.0},
                               {"KB", 1e3},
                               {"MB", 1e6},
                               {"GB", 1e9},
                               {"TB", 1e12}};

// "12.5ms" -> 12.5 x the unit's scale; the unit must be one of `units` ("" = none given).
template <size_t N>
absl::StatusOr<double> ParseQuantity(std::string_view text, const Unit (&units)[N],
                                     std::string_view expected) {
  const std::string_view trimmed = Trim(text);
  size_t end = 0;
  while (end < trimmed.size() && IsNumberChar(trimmed[end])) ++end;
  double number = 0.0;
  const char* number_end = trimmed.data() + end;
  auto [parsed_end, error] = std::from_chars(trimmed.data(), number_end, number);
  if (end == 0 || error != std::errc() || parsed_end != number_end || !std::isfinite(number)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(text), "' is not ", std::string(expected)));
  }
  if (number < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(text), "' is negative; limits are 0 or more"));
  }
  const std::string_view unit = Trim(trimmed.substr(end));
  for (const Unit& known : units) {
    if (known.name != unit) continue;
    // "1e308GiB" is a finite number times a scale that is not: no limit at all.
    if (!std::isfinite(number * known.scale)) {
      return absl::InvalidArgumentError(absl::StrCat("'", std::string(text), "' is out of range"));
    }
    return number * known.scale;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", std::string(text), "' is not ", std::string(expected)));
}

constexpr CheckKind kKinds[] = {CheckKind::kMaxBubble,
                                CheckKind::kMaxBubbleIncrease,
                                CheckKind::kMaxStageBubbleIncrease,
                                CheckKind::kMaxLatency,
                                CheckKind::kMaxLatencyIncrease,
                                CheckKind::kMaxMemory,
                                CheckKind::kMaxMemoryIncrease};

constexpr std::string_view kLatencyKey = "latency";

}  // namespace

bool GateThresholds::Empty() const {
  return !max_bubble && !max_bubble_increase && !max_stage_bubble_increase && !max_latency_us &&
         !max_latency_increase && !max_memory_bytes && !max_memory_increase;
}

std::string_view ThresholdKey(CheckKind kind) {
  switch (kind) {
    case CheckKind::kMaxBubble:
      return "max-bubble";
    case CheckKind::kMaxBubbleIncrease:
      return "max-bubble-increase";
    case CheckKind::kMaxStageBubbleIncrease:
      return "max-stage-bubble-increase";
    case CheckKind::kMaxLatency:
      return "max-latency";
    case CheckKind::kMaxLatencyIncrease:
      return "max-latency-increase";
    case CheckKind::kMaxMemory:
      return "max-memory";
    case CheckKind::kMaxMemoryIncrease:
      return "max-memory-increase";
  }
  return "unknown";
}

std::string_view LatencyFigureName(LatencyFigure figure) {
  switch (figure) {
    case LatencyFigure::kP50:
      return "p50";
    case LatencyFigure::kP90:
      return "p90";
    case LatencyFigure::kMax:
      return "max";
  }
  return "unknown";
}

absl::Status SetThreshold(std::string_view key, std::string_view value,
                          GateThresholds* thresholds) {
  auto keyed = [&](const absl::Status& status) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(key), ": ", std::string(status.message())));
  };
  if (key == kLatencyKey) {
    const std::string_view name = Trim(value);
    for (LatencyFigure figure : {LatencyFigure::kP50, LatencyFigure::kP90, LatencyFigure::kMax}) {
      if (name == LatencyFigureName(figure)) {
        thresholds->latency = figure;
        return absl::OkStatus();
      }
    }
    return keyed(absl::InvalidArgumentError(
        absl::StrCat("'", std::string(value), "' is not p50, p90 or max")));
  }
  const CheckKind* kind = nullptr;
  for (const CheckKind& candidate : kKinds) {
    if (ThresholdKey(candidate) == key) kind = &candidate;
  }
  if (kind == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown threshold '", std::string(key),
        "' (known: max-bubble, max-bubble-increase, max-stage-bubble-increase, max-latency, "
        "max-latency-increase, "
        "max-memory, max-memory-increase, latency)"));
  }
  absl::StatusOr<double> parsed;
  std::optional<double>* slot = nullptr;
  switch (*kind) {
    case CheckKind::kMaxBubble:
      parsed = ParseQuantity(value, kFractionUnits, "a fraction (0.25) or a percentage (25%)");
      if (parsed.ok() && *parsed > 1.0) {
        parsed = absl::InvalidArgumentError(
            absl::StrCat("'", std::string(value), "' is above 1 (100%)"));
      }
      slot = &thresholds->max_bubble;
      break;
    case CheckKind::kMaxBubbleIncrease:
    case CheckKind::kMaxStageBubbleIncrease:
      parsed =
          ParseQuantity(value, kFractionUnits, "fraction points (0.02) or percentage points (2%)");
      slot = *kind == CheckKind::kMaxBubbleIncrease ? &thresholds->max_bubble_increase
                                                    : &thresholds->max_stage_bubble_increase;
      break;
    case CheckKind::kMaxLatency:
      parsed = ParseQuantity(value, kTimeUnits, "a time with its unit (us, ms or s)");
      slot = &thresholds->max_latency_us;
      break;
    case CheckKind::kMaxLatencyIncrease:
      parsed = ParseQuantity(value, kFractionUnits, "a percentage (5%) or a fraction (0.05)");
      slot = &thresholds->max_latency_increase;
      break;
    case CheckKind::kMaxMemory:
      parsed = ParseQuantity(value, kByteUnits, "bytes (40GiB, 512MiB, 2000000000)");
      slot = &thresholds->max_memory_bytes;
      break;
    case CheckKind::kMaxMemoryIncrease:
      parsed = ParseQuantity(value, kFractionUnits, "a percentage (5%) or a fraction (0.05)");
      slot = &thresholds->max_memory_increase;
      break;
  }
  if (!parsed.ok()) return keyed(parsed.status());
  *slot = *parsed;
  return absl::OkStatus();
}

absl::StatusOr<GateThresholds> ParseGateConfig(std::string_view text, std::string_view source) {
  GateThresholds thresholds;
  std::set<std::string> seen;
  // An editor's byte-order mark is no part of the first key (it read as "unknown threshold
  // 'max-bubble'", the mark being invisible).
  constexpr std::string_view kMark = bubblescope::text::kUtf8ByteOrderMark;
  if (text.starts_with(kMark)) text.remove_prefix(kMark.size());
  int line_number = 0;
  for (size_t start = 0; start <= text.size();) {
    const size_t newline = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, newline - start);
    start = newline + 1;
    ++line_number;
    auto error = [&](std::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(source), ":", line_number, ": ", std::string(why)));
    };
    const size_t comment = line.find('#');
    const std::string_view content = Trim(line.substr(0, comment));
    if (content.empty()) continue;
    const size_t equals = content.find('=');
    if (equals == std::string_view::npos) {
      return error(absl::StrCat("expected 'key = value', got '", std::string(content), "'"));
    }
    const std::string key(Trim(content.substr(0, equals)));
    const std::string_view value = Trim(content.substr(equals + 1));
    if (!seen.insert(key).second) return error(absl::StrCat(key, " is given twice"));
    if (absl::Status set = SetThreshold(key, value, &thresholds); !set.ok()) {
      return error(std::string(set.message()));
    }
  }
  return thresholds;
}

}  // namespace bubblescope::compare
