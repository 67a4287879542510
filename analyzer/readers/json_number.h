// Exact decimal parsing of raw JSON number tokens. Trace timestamps are microseconds with up to
// nanosecond fractions on clocks near 2^60 ns; going through a double would lose the low digits,
// so the digits are turned into a scaled integer directly.
#pragma once

#include <cstdint>
#include <string_view>

namespace bubblescope::kineto {

enum class NumberStatus : uint8_t {
  kOk,
  kNotNumber,   // the token is not a JSON number
  kOutOfRange,  // a JSON number whose scaled value does not fit int64
};

// Parses `token` (a JSON number, trailing whitespace allowed) as value x 10^scale_digits, rounded
// half away from zero, without any floating point. Exponents are honoured exactly.
NumberStatus ParseScaledDecimal(std::string_view token, int scale_digits, int64_t* out);

// Microseconds (Chrome-trace "ts"/"dur") to integer nanoseconds.
inline NumberStatus MicrosToNanos(std::string_view token, int64_t* out) {
  return ParseScaledDecimal(token, 3, out);
}

// A plain integer (ids, counts, byte sizes); integral-valued fractions such as 3.0 are accepted,
// others are rounded half away from zero.
inline NumberStatus ParseInteger(std::string_view token, int64_t* out) {
  return ParseScaledDecimal(token, 0, out);
}

}  // namespace bubblescope::kineto
