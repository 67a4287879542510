// Small JSON text helpers for the writers: string escaping and the two timestamp spellings Kineto
// uses (exact microseconds with a 3-digit nanosecond fraction).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bubblescope::json_text {

// Appends `text` as a quoted JSON string. Quotes and backslashes are escaped, control characters
// become \u00XX, valid UTF-8 passes through unchanged and each byte of an invalid UTF-8 sequence
// becomes U+FFFD, so the output is always a document strict parsers accept.
void AppendString(std::string_view text, std::string* out);

void AppendInt(int64_t value, std::string* out);

// Appends `ns` nanoseconds as microseconds with exactly three decimals ("1.234", "-0.005").
void AppendMicrosFixed3(int64_t ns, std::string* out);

// Appends `ns` as microseconds: an integer when the nanosecond part is zero ("1682725898236567"),
// otherwise three decimals ("1682725898236567.250").
void AppendMicrosCompact(int64_t ns, std::string* out);

}  // namespace bubblescope::json_text
