#include "readers/kineto_document.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "readers/json_fields.h"
#include "readers/json_number.h"
#include "readers/kineto_event.h"
#include "readers/kineto_metadata.h"
#include "text/json_tokens.h"

namespace bubblescope::kineto {
namespace {

namespace ondemand = simdjson::ondemand;

std::string_view JsonTypeName(std::string_view token) {
  if (token.empty()) return "nothing";
  switch (token[0]) {
    case '"':
      return "a string";
    case '{':
      return "an object";
    case '[':
      return "an array";
    case 't':
    case 'f':
      return "a boolean";
    case 'n':
      return "null";
    default:
      return "a number";
  }
}

class DocumentWalker : public CollectorMetadataSink {
 public:
  DocumentWalker(const DocumentView& view, RankSet* ranks)
      : view_(view), begin_(view.json.data()), ranks_(ranks), dropped_(1) {
    event_reader_.set_collector_metadata_sink(this);
  }
  DocumentWalker(const DocumentWalker&) = delete;
  DocumentWalker& operator=(const DocumentWalker&) = delete;

  simdjson::error_code ReadCollectorArgs(const EventFields& fields,
                                         ondemand::value& args) override {
    const std::optional<size_t> slot = SlotOf(fields);
    if (!slot) return simdjson::SUCCESS;  // the event itself is counted when it ends
    Rank* rank = &ranks_->rank(*slot);
    if (fields.name == kDroppedCountsEventName) {
      return ReadDroppedCounts(args, begin_, view_.bias, rank, &dropped_[*slot]);
    }
    if (fields.name == kCuptiUnavailableEventName) {
      if (result_.cupti_unavailable) return simdjson::SUCCESS;
      return ReadCuptiUnavailable(args, begin_, view_.bias, rank,
                                  &result_.cupti_unavailable.emplace());
    }
    return ReadProcessMetadata(args, begin_, view_.bias, rank, ranks_->BuilderOf(*slot));
  }

  WalkResult Walk(ondemand::parser& parser) {
    if (auto error = parser.iterate(view_.json).get(document_)) {
      result_.syntax = error;  // stage-1 errors carry no position; the caller locates them
      return result_;
    }
    const std::string_view text(view_.json.data(), view_.json.size());
    const size_t first = text.find_first_not_of(" \t\n\r");
    simdjson::error_code error = simdjson::SUCCESS;
    if (first != std::string_view::npos && text[first] == '[') {
      ondemand::array events;
      error = document_.get_array().get(events);
      if (!error) {
        result_.events_offset = view_.bias + static_cast<int64_t>(first);
        error = WalkEvents(events);
      }
    } else {
      error = WalkRoot(static_cast<int64_t>(first));
    }
    if (error) {
      result_.syntax = error;
      result_.syntax_offset = Location();
    } else if (const char* next = nullptr; !document_.current_location().get(next)) {
      // The walk consumed the whole document; a location past it means more tokens follow.
      result_.trailing_offset = Offset(next);
    }
    return result_;
  }

 private:
  int64_t Offset(const char* p) const { return p - begin_ + view_.bias; }

  int64_t Location() {
    const char* location = nullptr;
    if (document_.current_location().get(location)) {
      return static_cast<int64_t>(view_.json.size()) + view_.bias;
    }
    return Offset(location);
  }

  simdjson::error_code WalkRoot(int64_t root_offset) {
    ondemand::object root;
    if (auto error = document_.get_object().get(root)) return error;
    result_.object_form = true;
    bool saw_events = false;
    for (auto field : root) {
      ondemand::raw_json_string raw_key;
      if (auto error = field.key().get(raw_key)) return error;
      ondemand::value value;
      if (auto error = field.value().get(value)) return error;
      const std::string_view key = KeyText(raw_key.raw());
      const std::string_view token = value.raw_json_token();
      if (key == "traceEvents") {
        if (token.empty() || token[0] != '[') {
          result_.not_a_trace.emplace(
              Offset(token.data()),
              "traceEvents is " + std::string(JsonTypeName(token)) + ", expected an array");
          return simdjson::SUCCESS;
        }
        saw_events = true;
        result_.events_offset = Offset(token.data());
        ondemand::array events;
        if (auto error = value.get_array().get(events)) return error;
        if (auto error = WalkEvents(events)) return error;
      } else if (key == kMergedMemberName) {
        if (saw_events) {
          result_.not_a_trace.emplace(Offset(token.data()),
                                      std::string(kMergedMemberName) + " after traceEvents");
          return simdjson::SUCCESS;
        }
        ranks_->Clear();
        result_.merged.emplace();
        std::optional<std::pair<int64_t, std::string>> problem;
        if (auto error =
                ReadMergedLayout(value, begin_, view_.bias, ranks_, &*result_.merged, &problem)) {
          return error;
        }
        if (problem) {
          result_.not_a_trace = std::move(problem);
          return simdjson::SUCCESS;
        }
        dropped_.assign(ranks_->size(), DroppedTotals());
      } else if (result_.merged) {
        continue;  // a merged trace keeps each rank's own members in its layout
      } else if (key == "deviceProperties") {
        if (auto error = ReadDeviceProperties(value, begin_, view_.bias, &ranks_->rank(0))) {
          return error;
        }
      } else if (key == "distributedInfo") {
        if (auto error = ReadDistributedInfo(value, begin_, view_.bias, &ranks_->rank(0),
                                             ranks_->BuilderOf(0))) {
          return error;
        }
      } else if (key == "baseTimeNanoseconds") {
        result_.saw_base_time = true;
        ReadBaseTime(token);
      } else if (key == "host_name") {
        // Kineto's machine name (gethostname, kineto #1323, 2026): ranks of one host share a
        // clock (docs/cross-rank.md, "Clocks").
        std::string_view host;
        if (!token.empty() && token[0] == '"' && StringTokenContent(token, &host)) {
          ranks_->rank(0).host = std::string(UnescapeJsonString(host, &host_scratch_));
        } else {
          ranks_->rank(0).stats.Bump(ImportCounter::kWrongFieldType, Offset(token.data()));
        }
      } else if (auto error = ReadThrough(value)) {
        // A member the walk has no use for is still read through: `"x": [1,,2]` after
        // traceEvents is a syntax error, counted like any other, never accepted in silence.
        return error;
      }
    }
    if (!saw_events) {
      result_.not_a_trace.emplace(view_.bias + root_offset, "no traceEvents array");
      result_.not_a_trace_is_other_json = true;
    }
    return simdjson::SUCCESS;
  }

  void ReadBaseTime(std::string_view token) {
    Rank& rank = ranks_->rank(0);
    int64_t base = 0;
    if (token.empty() || token[0] == '"' || token[0] == '{' || token[0] == '[') {
      rank.stats.Bump(ImportCounter::kWrongFieldType, Offset(token.data()));
    } else if (ParseInteger(token, &base) != NumberStatus::kOk) {
      rank.stats.Bump(ImportCounter::kBadNumber, Offset(token.data()));
    } else {
      ranks_->BuilderOf(0)->SetBaseTime(base, Offset(token.data()));
    }
  }

  simdjson::error_code WalkEvents(ondemand::array& events) {
    for (auto element : events) {
      std::string_view token;
      if (auto error = element.raw_json_token().get(token)) return error;
      const int64_t offset = Offset(token.data());
      result_.last_event_offset = offset;
      if (token.empty() || token[0] != '{') {
        ranks_->rank(0).stats.Bump(ImportCounter::kEventNotObject, offset);
        ++result_.events_read;
        continue;
      }
      ondemand::object object;
      if (auto error = element.get_object().get(object)) return error;
      EventFields fields;
      if (auto error = event_reader_.Read(object, &fields)) return error;
      AddEvent(&fields, offset);
      ++result_.events_read;
    }
    return simdjson::SUCCESS;
  }

  // The slot of the rank an event belongs to: the only one of a per-rank trace; in a merged
  // trace, the one its pid leads to (nullopt when the layout names no such pid).
  std::optional<size_t> SlotOf(const EventFields& fields) const {
    if (!result_.merged) return 0;
    if (!fields.pid.present || fields.pid.is_string) return std::nullopt;
    const auto it = result_.merged->processes.find(fields.pid.value);
    if (it == result_.merged->processes.end()) return std::nullopt;
    return it->second.slot;
  }

  // A merged trace's event is handed on as its rank's own file had it: the original pid back,
  // its time moved back onto the rank's clock. The events on an overlay pid are counted, not
  // modelled. (They are told by their pid, not by their category: an event of a rank's own file
  // may have any category, and must come back.)
  void AddEvent(EventFields* fields, int64_t offset) {
    if (!result_.merged)
      return ranks_->BuilderOf(0)->AddEvent(*fields, event_reader_.pg_ranks(), offset);
    const MergedLayout& layout = *result_.merged;
    if (fields->pid.present && !fields->pid.is_string) {
      const auto overlay = layout.overlay_pids.find(fields->pid.value);
      if (overlay != layout.overlay_pids.end()) {
        return ranks_->rank(overlay->second).stats.Bump(ImportCounter::kOverlayEvent, offset);
      }
    }
    const std::optional<size_t> slot = SlotOf(*fields);
    if (!slot) {
      // An event no rank claims: counted on the first rank, as the file's other damage is.
      return ranks_->rank(0).stats.Bump(
          fields->damaged
              ? fields->damage
              : (fields->pid.present ? ImportCounter::kBadId : ImportCounter::kMissingField),
          offset);
    }
    fields->pid = layout.processes.at(fields->pid.value).original;
    if (fields->has_ts &&
        __builtin_add_overflow(fields->ts, RankClockDifference(layout, *slot, fields->ts),
                               &fields->ts)) {
      fields->has_ts = false;
      if (!fields->damaged) {
        fields->damaged = true;
        fields->damage = ImportCounter::kBadNumber;
      }
    }
    ranks_->BuilderOf(*slot)->AddEvent(*fields, event_reader_.pg_ranks(), offset);
  }

  const DocumentView& view_;
  const char* begin_;
  RankSet* ranks_;
  // "bubblescope_dropped" totals seen so far in this document, per rank.
  std::vector<DroppedTotals> dropped_;
  std::string host_scratch_;
  ondemand::document document_;
  EventFieldReader event_reader_;
  WalkResult result_;
};

}  // namespace

RankSet::RankSet() { AddMergedRank(); }

Rank* RankSet::AddMergedRank() {
  Rank* rank = ranks_.emplace_back(std::make_unique<Rank>()).get();
  builders_.push_back(std::make_unique<RankBuilder>(rank));
  return rank;
}

void RankSet::Clear() {
  builders_.clear();
  ranks_.clear();
}

size_t RankSet::usable_events() const {
  size_t total = 0;
  for (const auto& builder : builders_) total += builder->usable_events();
  return total;
}

void RankSet::Finish(bool keep_empty_steps) {
  for (auto& builder : builders_) builder->Finish(keep_empty_steps);
}

std::vector<Rank> RankSet::Take() {
  builders_.clear();
  std::vector<Rank> ranks;
  ranks.reserve(ranks_.size());
  for (auto& rank : ranks_) ranks.push_back(std::move(*rank));
  ranks_.clear();
  return ranks;
}

WalkResult WalkDocument(ondemand::parser& parser, const DocumentView& view, RankSet* ranks) {
  return DocumentWalker(view, ranks).Walk(parser);
}

}  // namespace bubblescope::kineto
