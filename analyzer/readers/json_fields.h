// Walking the fields of a simdjson On-Demand object: key text and value, once each, in order; and
// reading a value through to its last token.
#pragma once

#include <string_view>

#include "simdjson.h"
#include "text/json_tokens.h"

namespace bubblescope::kineto {

// Calls `visit(key, value)` for every field of `object` (key as written, escapes left in place;
// `value` is a simdjson::ondemand::value& the visitor may walk or skip). Stops at the first
// error, whether simdjson's or the one `visit` returns.
template <typename Visit>
simdjson::error_code ForEachField(simdjson::ondemand::object& object, Visit&& visit) {
  for (auto field : object) {
    simdjson::ondemand::raw_json_string raw_key;
    if (auto error = field.key().get(raw_key)) return error;
    simdjson::ondemand::value value;
    if (auto error = field.value().get(value)) return error;
    if (auto error = visit(KeyText(raw_key.raw()), value)) return error;
  }
  return simdjson::SUCCESS;
}

// Reads every token of `value`, every member and element, each scalar by its grammar (a number
// however large; escapes in strings and keys decoded where there are any), so that broken JSON
// inside it is found: On-Demand skips a value it is not asked for unchecked. Only the parser's
// own buffers are used.
simdjson::error_code ReadThrough(simdjson::ondemand::value& value);

}  // namespace bubblescope::kineto
