// Writing JSON strings, shared by the report's JsonWriter and the Kineto trace writer.
#pragma once

#include <string>
#include <string_view>

namespace bubblescope::text {

// Appends `text` to `out` as a quoted JSON string: quotes and backslashes escaped, \b \f \n \r \t
// as such, other control characters as \u00XX, well-formed UTF-8 passed through, and each byte of
// an ill-formed sequence replaced by U+FFFD, so the output is always valid JSON.
void AppendJsonString(std::string_view text, std::string* out);

}  // namespace bubblescope::text
