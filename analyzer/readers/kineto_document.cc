#include "readers/kineto_document.h"

#include <string>
#include <string_view>

#include "readers/json_number.h"
#include "readers/json_tokens.h"
#include "readers/kineto_event.h"
#include "readers/kineto_metadata.h"

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
  DocumentWalker(const DocumentView& view, Rank* rank, RankBuilder* builder)
      : view_(view), begin_(view.json.data()), rank_(rank), builder_(builder) {
    event_reader_.set_collector_metadata_sink(this);
  }
  DocumentWalker(const DocumentWalker&) = delete;
  DocumentWalker& operator=(const DocumentWalker&) = delete;

  simdjson::error_code ReadCollectorArgs(std::string_view event_name,
                                         ondemand::value& args) override {
    if (event_name == kDroppedCountsEventName) {
      return ReadDroppedCounts(args, begin_, view_.bias, rank_, &dropped_);
    }
    return ReadProcessMetadata(args, begin_, view_.bias, rank_, builder_);
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
      } else if (key == "deviceProperties") {
        if (auto error = ReadDeviceProperties(value, begin_, view_.bias, rank_)) return error;
      } else if (key == "distributedInfo") {
        if (auto error = ReadDistributedInfo(value, begin_, view_.bias, rank_, builder_)) {
          return error;
        }
      } else if (key == "baseTimeNanoseconds") {
        ReadBaseTime(token);
      }
    }
    if (!saw_events) {
      result_.not_a_trace.emplace(view_.bias + root_offset, "no traceEvents array");
      result_.not_a_trace_is_other_json = true;
    }
    return simdjson::SUCCESS;
  }

  void ReadBaseTime(std::string_view token) {
    int64_t base = 0;
    if (token.empty() || token[0] == '"' || token[0] == '{' || token[0] == '[') {
      rank_->stats.Bump(ImportCounter::kWrongFieldType, Offset(token.data()));
    } else if (ParseInteger(token, &base) != NumberStatus::kOk) {
      rank_->stats.Bump(ImportCounter::kBadNumber, Offset(token.data()));
    } else {
      builder_->SetBaseTime(base, Offset(token.data()));
    }
  }

  simdjson::error_code WalkEvents(ondemand::array& events) {
    for (auto element : events) {
      std::string_view token;
      if (auto error = element.raw_json_token().get(token)) return error;
      const int64_t offset = Offset(token.data());
      result_.last_event_offset = offset;
      if (token.empty() || token[0] != '{') {
        rank_->stats.Bump(ImportCounter::kEventNotObject, offset);
        ++result_.events_read;
        continue;
      }
      ondemand::object object;
      if (auto error = element.get_object().get(object)) return error;
      EventFields fields;
      if (auto error = event_reader_.Read(object, &fields)) return error;
      builder_->AddEvent(fields, event_reader_.pg_ranks(), offset);
      ++result_.events_read;
    }
    return simdjson::SUCCESS;
  }

  const DocumentView& view_;
  const char* begin_;
  Rank* rank_;
  RankBuilder* builder_;
  DroppedTotals dropped_;  // "bubblescope_dropped" totals seen so far in this document
  ondemand::document document_;
  EventFieldReader event_reader_;
  WalkResult result_;
};

}  // namespace

WalkResult WalkDocument(ondemand::parser& parser, const DocumentView& view, Rank* rank,
                        RankBuilder* builder) {
  return DocumentWalker(view, rank, builder).Walk(parser);
}

}  // namespace bubblescope::kineto
