#include "readers/raw_events.h"

#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "common/out_of_memory.h"
#include "readers/json_fields.h"
#include "readers/json_repair.h"
#include "readers/merged_trace.h"
#include "text/json_tokens.h"

namespace bubblescope::kineto {
namespace {

namespace ondemand = simdjson::ondemand;

std::string_view TrimRight(std::string_view text) {
  const size_t end = text.find_last_not_of(" \t\n\r");
  return text.substr(0, end == std::string_view::npos ? 0 : end + 1);
}

// The exact text of `value`: a container whole (which consumes it), anything else its token.
simdjson::error_code ValueText(ondemand::value& value, std::string_view* text) {
  const std::string_view token = value.raw_json_token();
  std::string_view whole = token;
  if (!token.empty() && token[0] == '{') {
    ondemand::object object;
    if (auto error = value.get_object().get(object)) return error;
    if (auto error = object.raw_json().get(whole)) return error;
  } else if (!token.empty() && token[0] == '[') {
    ondemand::array array;
    if (auto error = value.get_array().get(array)) return error;
    if (auto error = array.raw_json().get(whole)) return error;
  }
  *text = TrimRight(whole);
  return simdjson::SUCCESS;
}

class RawWalker {
 public:
  RawWalker(ondemand::parser& parser, simdjson::padded_string_view json, int64_t bias)
      : parser_(parser), json_(json), bias_(bias) {}

  // The members pass: walks the whole document once, so that broken syntax is found before any
  // event is handed over.
  simdjson::error_code Members(RawMembers* members) {
    if (auto error = Iterate()) return error;
    if (IsArrayForm()) {
      ondemand::array events;
      if (auto error = document_.get_array().get(events)) return error;
      for (auto element : events) {
        ondemand::value ignored;
        if (auto error = element.get(ignored)) return error;
      }
      return simdjson::SUCCESS;
    }
    ondemand::object root;
    if (auto error = document_.get_object().get(root)) return error;
    return ForEachField(root, [&](std::string_view key, ondemand::value& value) {
      if (key == kMergedMemberName) {
        members->merged = true;
      } else if (key == "baseTimeNanoseconds") {
        members->base_time = std::string(TrimRight(value.raw_json_token()));
      } else if (key == "distributedInfo" || key == "deviceProperties") {
        std::string_view text;
        if (auto error = ValueText(value, &text)) return error;
        (key == "distributedInfo" ? members->distributed_info : members->device_properties) =
            std::string(text);
      }
      return simdjson::SUCCESS;
    });
  }

  simdjson::error_code Events(const std::function<void(const RawEvent&)>& visit) {
    if (auto error = Iterate()) return error;
    ondemand::array events;
    if (IsArrayForm()) {
      if (auto error = document_.get_array().get(events)) return error;
      return WalkEvents(events, visit);
    }
    ondemand::object root;
    if (auto error = document_.get_object().get(root)) return error;
    return ForEachField(root, [&](std::string_view key, ondemand::value& value) {
      const std::string_view token = value.raw_json_token();
      if (key != "traceEvents" || token.empty() || token[0] != '[') return simdjson::SUCCESS;
      if (auto error = value.get_array().get(events)) return error;
      return WalkEvents(events, visit);
    });
  }

  // Reads the whole document to its last byte, every value of it, so that broken syntax
  // anywhere is found: On-Demand checks no more of a value than it reads. With this parser's own
  // buffers: a DOM parse would hold the document again, several times its size.
  simdjson::error_code Validate() {
    if (auto error = Iterate()) return error;
    ondemand::value root;
    if (auto error = document_.get_value().get(root)) return error;
    if (auto error = ReadThrough(root)) return error;
    // A location past the root means more tokens follow it.
    const char* next = nullptr;
    return document_.current_location().get(next) ? simdjson::SUCCESS : simdjson::TRAILING_CONTENT;
  }

  // Where the walk stopped, as a file offset: the end of the text when the document could not
  // even be indexed (simdjson's stage-1 errors carry no position).
  int64_t Location() {
    const char* location = nullptr;
    if (!iterated_ || document_.current_location().get(location)) {
      return static_cast<int64_t>(json_.size()) + bias_;
    }
    return location - json_.data() + bias_;
  }

 private:
  simdjson::error_code Iterate() {
    iterated_ = false;
    if (auto error = parser_.iterate(json_).get(document_)) return error;
    iterated_ = true;
    return simdjson::SUCCESS;
  }

  bool IsArrayForm() const {
    const std::string_view text(json_.data(), json_.size());
    const size_t first = text.find_first_not_of(" \t\n\r");
    return first != std::string_view::npos && text[first] == '[';
  }

  simdjson::error_code WalkEvents(ondemand::array& events,
                                  const std::function<void(const RawEvent&)>& visit) {
    RawEvent event;
    for (auto element : events) {
      std::string_view token;
      if (auto error = element.raw_json_token().get(token)) return error;
      if (token.empty() || token[0] != '{') continue;
      ondemand::object object;
      if (auto error = element.get_object().get(object)) return error;
      event.offset = token.data() - json_.data() + bias_;
      event.fields.clear();
      for (auto field : object) {
        ondemand::raw_json_string raw_key;
        if (auto error = field.key().get(raw_key)) return error;
        ondemand::value value;
        if (auto error = field.value().get(value)) return error;
        RawField& raw = event.fields.emplace_back();
        raw.key = KeyText(raw_key.raw());
        if (auto error = ValueText(value, &raw.value)) return error;
      }
      visit(event);
    }
    return simdjson::SUCCESS;
  }

  ondemand::parser& parser_;
  simdjson::padded_string_view json_;
  int64_t bias_;
  ondemand::document document_;
  bool iterated_ = false;  // document_ holds an indexed document
};

// Both passes over `json`. `*members_failed` tells whether an error came from the first, before
// any event was handed over. The events are copied as raw text, and On-Demand checks no more of
// a value than it reads, so the whole document is validated first: broken JSON in the middle of
// a file (which the reader reads up to, and no further) must never reach a file written from it.
absl::Status Walk(ondemand::parser& parser, simdjson::padded_string_view json, int64_t bias,
                  std::string_view display_path, RawMembers* members,
                  const std::function<void(const RawEvent&)>& visit, bool* members_failed) {
  RawWalker walker(parser, json, bias);
  *members = RawMembers();
  simdjson::error_code error = walker.Members(members);
  *members_failed = error != simdjson::SUCCESS;
  if (!error) {
    const simdjson::error_code invalid = walker.Validate();
    if (invalid == simdjson::MEMALLOC) return OutOfMemoryReading(display_path);
    if (invalid != simdjson::SUCCESS) {
      *members_failed = true;
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: its JSON is broken before its end (read up to there), so its events cannot be "
          "written again",
          std::string(display_path)));
    }
  }
  if (!error) error = walker.Events(visit);
  if (!error) return absl::OkStatus();
  if (error == simdjson::MEMALLOC) {
    *members_failed = false;  // nothing to repair: memory, not the file, is at fault
    return OutOfMemoryReading(display_path);
  }
  return absl::InvalidArgumentError(absl::StrFormat("%s: byte %d: %s", std::string(display_path),
                                                    walker.Location(),
                                                    simdjson::error_message(error)));
}

}  // namespace

absl::Status StreamRawEvents(std::string_view display_path, simdjson::padded_string_view json,
                             RawMembers* members,
                             const std::function<void(const RawEvent&)>& visit) {
  const std::string_view text(json.data(), json.size());
  const size_t start = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;  // UTF-8 byte-order mark
  const int64_t bias = static_cast<int64_t>(start);
  ondemand::parser parser;
  const simdjson::padded_string_view view(json.data() + start, json.size() - start,
                                          json.size() + simdjson::SIMDJSON_PADDING - start);
  bool members_failed = false;
  absl::Status status = Walk(parser, view, bias, display_path, members, visit, &members_failed);
  if (status.ok() || !members_failed) return status;
  // A file cut short: its complete events, closed by the brackets it lacks, as the reader reads
  // it (readers/json_repair.h).
  const RepairPlan plan = PlanRepair(text.substr(start));
  if (!plan.ends_early || !plan.repairable) return status;
  simdjson::padded_string repaired(plan.keep_bytes + plan.closers.size());
  if (repaired.data() == nullptr) return OutOfMemoryReading(display_path);  // allocation failed
  std::memcpy(repaired.data(), text.data() + start, plan.keep_bytes);
  std::memcpy(repaired.data() + plan.keep_bytes, plan.closers.data(), plan.closers.size());
  return Walk(parser, repaired, bias, display_path, members, visit, &members_failed);
}

}  // namespace bubblescope::kineto
