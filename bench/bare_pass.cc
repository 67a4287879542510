#include "bare_pass.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "loader/file_source.h"
#include "simdjson.h"

namespace bubblescope::bench {
namespace {

namespace ondemand = simdjson::ondemand;

uint64_t Mix(uint64_t checksum, uint64_t value) { return (checksum ^ value) * 0x100000001B3ULL; }

uint64_t ReadNumberOrString(ondemand::value value) {
  ondemand::json_type type;
  if (value.type().get(type)) return 0;
  if (type == ondemand::json_type::number) {
    double number = 0;
    if (value.get_double().get(number)) return 0;
    return static_cast<uint64_t>(number);
  }
  std::string_view text;
  if (value.get_string().get(text)) return 0;
  return text.size();
}

// Reads the seven fields of one event; every other member is skipped unparsed.
simdjson::error_code ReadEvent(ondemand::value event_value, BarePassResult* result) {
  ondemand::object event;
  if (auto error = event_value.get_object().get(event)) return error;
  for (auto field : event) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return error;
    if (key == "ph" || key == "cat" || key == "name") {
      std::string_view text;
      if (field.value().get_string().get(text) == simdjson::SUCCESS) {
        result->checksum = Mix(
            result->checksum, text.size() + static_cast<unsigned char>(text.empty() ? 0 : text[0]));
      }
    } else if (key == "ts" || key == "dur" || key == "pid" || key == "tid") {
      result->checksum = Mix(result->checksum, ReadNumberOrString(field.value()));
    }
  }
  ++result->events;
  return simdjson::SUCCESS;
}

simdjson::error_code ReadEvents(ondemand::array events, BarePassResult* result) {
  for (auto element : events) {
    ondemand::value event;
    if (auto error = element.get(event)) return error;
    if (auto error = ReadEvent(event, result)) return error;
  }
  return simdjson::SUCCESS;
}

simdjson::error_code ReadDocument(ondemand::document& document, BarePassResult* result) {
  ondemand::json_type type;
  if (auto error = document.type().get(type)) return error;
  if (type == ondemand::json_type::array) {
    ondemand::array events;
    if (auto error = document.get_array().get(events)) return error;
    return ReadEvents(events, result);
  }
  ondemand::object root;
  if (auto error = document.get_object().get(root)) return error;
  for (auto field : root) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return error;
    if (key != "traceEvents") continue;
    ondemand::array events;
    if (auto error = field.value().get_array().get(events)) return error;
    if (auto error = ReadEvents(events, result)) return error;
  }
  return simdjson::SUCCESS;
}

}  // namespace

absl::StatusOr<BarePassResult> BareSimdjsonPass(const std::vector<std::string>& files) {
  BarePassResult result;
  ondemand::parser parser;
  for (const std::string& path : files) {
    absl::StatusOr<FileContents> contents = ReadFileSource(path);
    if (!contents.ok()) return contents.status();
    result.largest_file_bytes =
        std::max(result.largest_file_bytes, static_cast<int64_t>(contents->text.size()));
    ondemand::document document;
    if (auto error = parser.iterate(contents->text).get(document)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", simdjson::error_message(error)));
    }
    if (auto error = ReadDocument(document, &result)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", simdjson::error_message(error)));
    }
  }
  return result;
}

}  // namespace bubblescope::bench
