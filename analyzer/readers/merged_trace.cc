#include "readers/merged_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/unwinding_hash.h"
#include "readers/json_fields.h"
#include "readers/json_number.h"
#include "readers/kineto_metadata.h"
#include "text/json_tokens.h"

namespace bubblescope::kineto {
namespace {

namespace ondemand = simdjson::ondemand;

using Problem = std::optional<std::pair<int64_t, std::string>>;

bool IsContainer(std::string_view token) {
  return !token.empty() && (token[0] == '{' || token[0] == '[');
}

// Reads the member's parts, noting the first problem (and what follows it is still walked, so
// that broken syntax later in the member is reported as such).
class LayoutReader {
 public:
  LayoutReader(const char* begin, int64_t bias, MergedRankSink* sink, MergedLayout* layout,
               Problem* problem)
      : begin_(begin), bias_(bias), sink_(sink), layout_(layout), problem_(problem) {}

  simdjson::error_code ReadMember(ondemand::value& value) {
    const std::string_view token = value.raw_json_token();
    if (token.empty() || token[0] != '{') {
      Note(token, std::string("not an object"));
      return simdjson::SUCCESS;
    }
    ondemand::object object;
    if (auto error = value.get_object().get(object)) return error;
    bool saw_version = false;
    bool saw_ranks = false;
    auto read_field = [&](std::string_view key, ondemand::value& field) {
      const std::string_view field_token = field.raw_json_token();
      if (key == "version") {
        saw_version = true;
        int64_t version = 0;
        if (ParseInteger(field_token, &version) != NumberStatus::kOk ||
            version != kMergedFormatVersion) {
          Note(field_token,
               absl::StrCat("version ", std::string(TrimmedToken(field_token)),
                            " is not one this build reads (", kMergedFormatVersion, ")"));
        }
      } else if (key == "ranks") {
        saw_ranks = true;
        return ReadRanks(field);
      }
      return simdjson::SUCCESS;
    };
    if (auto error = ForEachField(object, read_field)) return error;
    if (!saw_version || !saw_ranks) {
      Note(token, absl::StrCat("no ", saw_version ? "ranks" : "version"));
    } else if (layout_->ranks.empty()) {
      Note(token, std::string("no ranks named"));
    }
    return simdjson::SUCCESS;
  }

 private:
  static std::string_view TrimmedToken(std::string_view token) {
    const size_t end = token.find_last_not_of(" \t\n\r");
    return token.substr(0, end == std::string_view::npos ? 0 : end + 1);
  }

  void Note(std::string_view token, std::string what) {
    if (problem_->has_value()) return;
    problem_->emplace(token.data() - begin_ + bias_,
                      absl::StrCat(std::string(kMergedMemberName), ": ", what));
  }

  // An int64 member; notes a problem (naming `what`) when it is anything else.
  bool Integer(std::string_view token, std::string_view what, int64_t* out) {
    if (ParseInteger(token, out) == NumberStatus::kOk) return true;
    Note(token, absl::StrCat(std::string(what), " is not an integer"));
    return false;
  }

  // Calls read(element) for each element of the array `value`; anything else is noted as
  // "<what> is not an array".
  template <typename Read>
  simdjson::error_code ForEachElement(ondemand::value& value, std::string_view what, Read read) {
    const std::string_view token = value.raw_json_token();
    if (token.empty() || token[0] != '[') {
      Note(token, absl::StrCat(std::string(what), " is not an array"));
      return simdjson::SUCCESS;
    }
    ondemand::array array;
    if (auto error = value.get_array().get(array)) return error;
    for (auto element : array) {
      ondemand::value entry;
      if (auto error = element.get(entry)) return error;
      if (auto error = read(entry)) return error;
    }
    return simdjson::SUCCESS;
  }

  simdjson::error_code ReadRanks(ondemand::value& value) {
    return ForEachElement(value, "ranks",
                          [this](ondemand::value& entry) { return ReadRank(entry); });
  }

  simdjson::error_code ReadRank(ondemand::value& value) {
    const std::string_view token = value.raw_json_token();
    if (token.empty() || token[0] != '{') {
      Note(token, std::string("a rank entry is not an object"));
      return simdjson::SUCCESS;
    }
    ondemand::object object;
    if (auto error = value.get_object().get(object)) return error;
    const size_t slot = layout_->ranks.size();
    Rank* rank = sink_->AddMergedRank();
    layout_->ranks.push_back(-1);
    layout_->clock_offsets.push_back(0);
    layout_->clock_rates.push_back(0.0);
    layout_->clock_anchors.push_back(0);
    auto read_field = [&](std::string_view key, ondemand::value& field) {
      const std::string_view field_token = field.raw_json_token();
      int64_t number = 0;
      if (key == "rank") {
        if (!Integer(field_token, "a rank id", &number)) return simdjson::SUCCESS;
        if (number < 0 || number > std::numeric_limits<int32_t>::max()) {
          Note(field_token, absl::StrCat("rank ", number, " out of range"));
        } else if (rank_slots_.contains(number)) {
          Note(field_token, absl::StrCat("rank ", number, " named twice"));
        } else {
          rank_slots_.insert(number);
          layout_->ranks[slot] = static_cast<int32_t>(number);
        }
      } else if (key == "clock_offset_ns") {
        if (Integer(field_token, "a clock offset", &number)) {
          if (!InTimeRange(number)) {
            Note(field_token, std::string("clock offset out of range"));
          } else {
            layout_->clock_offsets[slot] = number;
          }
        }
      } else if (key == "clock_anchor_ns") {
        if (Integer(field_token, "a clock anchor", &number)) {
          if (!InTimeRange(number)) {
            Note(field_token, std::string("clock anchor out of range"));
          } else {
            layout_->clock_anchors[slot] = number;
          }
        }
      } else if (key == "clock_rate") {
        // A drift of more than 1% is no clock bubblescope would have written.
        const std::string_view digits = TrimmedToken(field_token);
        double rate = 0.0;
        const auto [end, error] =
            std::from_chars(digits.data(), digits.data() + digits.size(), rate);
        if (error != std::errc() || end != digits.data() + digits.size() ||
            !(std::abs(rate) <= 0.01)) {
          Note(field_token, std::string("clock rate is not a number within 1%"));
        } else {
          layout_->clock_rates[slot] = rate;
        }
      } else if (key == "overlay_pid") {
        // A pipeline's ranks share one overlay process (docs/perfetto.md); its events are
        // counted on the first rank that names it.
        if (Integer(field_token, "an overlay pid", &number) &&
            (layout_->overlay_pids.contains(number) || ClaimPid(field_token, number))) {
          layout_->overlay_pids.try_emplace(number, slot);
        }
      } else if (key == "truncated") {
        // The rank's own file was cut short: its timeline ends early, which the iterations
        // must know (an iteration a rank lost its end of is not complete), merged or not.
        if (TrimmedToken(field_token) == "true") {
          rank->stats.Bump(ImportCounter::kTruncated, field_token.data() - begin_ + bias_);
          rank->stats.set_truncation_detail("cut short in the file it was merged from");
        } else if (TrimmedToken(field_token) != "false") {
          Note(field_token, std::string("truncated is not true or false"));
        }
      } else if (key == "host_name") {
        // The host the rank's own file named (its clock: docs/cross-rank.md, "Clocks").
        std::string_view host;
        if (StringTokenContent(field_token, &host)) {
          std::string scratch;
          rank->host = std::string(UnescapeJsonString(host, &scratch));
        } else {
          Note(field_token, std::string("host_name is not a string"));
        }
      } else if (key == "processes") {
        return ReadProcesses(field, slot);
      } else if (key == "distributedInfo") {
        return ReadDistributedInfo(field, begin_, bias_, rank, sink_->BuilderOf(slot));
      } else if (key == "deviceProperties") {
        return ReadDeviceProperties(field, begin_, bias_, rank);
      }
      return simdjson::SUCCESS;
    };
    if (auto error = ForEachField(object, read_field)) return error;
    if (layout_->ranks[slot] < 0) {
      Note(token, std::string("a rank entry without a rank id"));
    }
    return simdjson::SUCCESS;
  }

  // False (noted) for a pid already given to another process, of any rank.
  bool ClaimPid(std::string_view token, int64_t pid) {
    if (pids_.insert(pid).second) return true;
    Note(token, absl::StrCat("pid ", pid, " named twice"));
    return false;
  }

  simdjson::error_code ReadProcesses(ondemand::value& value, size_t slot) {
    return ForEachElement(value, "processes", [this, slot](ondemand::value& entry) {
      return ReadProcess(entry, slot);
    });
  }

  // {"pid": new pid, "original_pid": integer, string or null}.
  simdjson::error_code ReadProcess(ondemand::value& value, size_t slot) {
    const std::string_view token = value.raw_json_token();
    if (token.empty() || token[0] != '{') {
      Note(token, std::string("a process entry is not an object"));
      return simdjson::SUCCESS;
    }
    ondemand::object object;
    if (auto error = value.get_object().get(object)) return error;
    std::optional<int64_t> pid;
    std::optional<IdField> original;
    auto read_field = [&](std::string_view key, ondemand::value& field) {
      const std::string_view field_token = field.raw_json_token();
      int64_t number = 0;
      if (key == "pid") {
        if (Integer(field_token, "a pid", &number)) pid = number;
      } else if (key == "original_pid") {
        IdField id;
        if (TrimmedToken(field_token) == "null") {
          original = id;  // events that had no pid
        } else if (StringTokenContent(field_token, &id.text)) {
          id.present = true;
          id.is_string = true;
          id.value = SyntheticId(id.text);
          original = id;
        } else if (!IsContainer(field_token) &&
                   Integer(field_token, "an original pid", &id.value)) {
          id.present = true;
          original = id;
        } else {
          Note(field_token, std::string("an original pid is not an integer, string or null"));
        }
      }
      return simdjson::SUCCESS;
    };
    if (auto error = ForEachField(object, read_field)) return error;
    if (!pid || !original) {
      Note(token, absl::StrCat("a process entry without ", pid ? "original_pid" : "pid"));
      return simdjson::SUCCESS;
    }
    if (ClaimPid(token, *pid)) {
      layout_->processes[*pid] = MergedProcess{.slot = slot, .original = *original};
    }
    return simdjson::SUCCESS;
  }

  const char* begin_;
  int64_t bias_;
  MergedRankSink* sink_;
  MergedLayout* layout_;
  Problem* problem_;
  UnwindingHashSet<int64_t> rank_slots_;
  UnwindingHashSet<int64_t> pids_;
};

}  // namespace

simdjson::error_code ReadMergedLayout(ondemand::value& value, const char* begin, int64_t bias,
                                      MergedRankSink* sink, MergedLayout* layout,
                                      Problem* problem) {
  return LayoutReader(begin, bias, sink, layout, problem).ReadMember(value);
}

TimeNs RankClockDifference(const MergedLayout& layout, size_t slot, TimeNs shown) {
  const TimeNs offset = layout.clock_offsets[slot];
  const double rate = slot < layout.clock_rates.size() ? layout.clock_rates[slot] : 0.0;
  if (rate == 0.0) return offset;
  // The writer showed t as shown = t - offset - rate * (t - anchor); solved for t, the drift
  // t - shown - offset is rate * (shown + offset - anchor) / (1 - rate).
  const double drifted = rate *
                         (static_cast<double>(shown) + static_cast<double>(offset) -
                          static_cast<double>(layout.clock_anchors[slot])) /
                         (1.0 - rate);
  // Both terms are within the model's time range (far inside int64), so the sum cannot overflow.
  return offset + static_cast<TimeNs>(std::llround(std::clamp(drifted, -1e15, 1e15)));
}

}  // namespace bubblescope::kineto
