#include "readers/json_fields.h"

#include <cstdint>

#include "readers/json_number.h"

namespace bubblescope::kineto {

namespace ondemand = simdjson::ondemand;

simdjson::error_code ReadThrough(ondemand::value& value) {
  ondemand::json_type type;
  if (auto error = value.type().get(type)) return error;
  switch (type) {
    case ondemand::json_type::array: {
      ondemand::array array;
      if (auto error = value.get_array().get(array)) return error;
      for (auto element : array) {
        ondemand::value child;
        if (auto error = element.get(child)) return error;
        if (auto error = ReadThrough(child)) return error;
      }
      return simdjson::SUCCESS;
    }
    case ondemand::json_type::object: {
      ondemand::object object;
      if (auto error = value.get_object().get(object)) return error;
      for (auto field : object) {
        ondemand::raw_json_string key;
        if (auto error = field.key().get(key)) return error;
        if (KeyText(key.raw()).find('\\') != std::string_view::npos) {
          std::string_view unescaped;
          if (auto error = field.unescaped_key().get(unescaped)) return error;
        }
        ondemand::value child;
        if (auto error = field.value().get(child)) return error;
        if (auto error = ReadThrough(child)) return error;
      }
      return simdjson::SUCCESS;
    }
    case ondemand::json_type::number: {
      // Any JSON number will do, however large: only its grammar is checked.
      int64_t ignored = 0;
      return ParseInteger(value.raw_json_token(), &ignored) == NumberStatus::kNotNumber
                 ? simdjson::NUMBER_ERROR
                 : simdjson::SUCCESS;
    }
    case ondemand::json_type::string: {
      // A string without escapes needs no decoding (and no room in the parser's buffer) to be
      // checked: its quotes and its UTF-8 were checked when the document was indexed.
      if (value.raw_json_token().find('\\') == std::string_view::npos) {
        ondemand::raw_json_string raw;
        return value.get_raw_json_string().get(raw);
      }
      std::string_view decoded;
      return value.get_string().get(decoded);
    }
    case ondemand::json_type::boolean: {
      bool ignored = false;
      return value.get_bool().get(ignored);
    }
    case ondemand::json_type::null: {
      bool is_null = false;
      if (auto error = value.is_null().get(is_null)) return error;
      return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    }
  }
  return simdjson::TAPE_ERROR;
}

}  // namespace bubblescope::kineto
