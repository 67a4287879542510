// Integers and nanosecond times as JSON number text, shared by the Kineto writer and the
// collector: the two spellings Kineto uses for microseconds keep every nanosecond exactly.
#pragma once

#include <cstdint>
#include <string>

namespace bubblescope::text {

void AppendInt(int64_t value, std::string* out);

// Appends `ns` nanoseconds as microseconds with exactly three decimals ("1.234", "-0.005").
void AppendMicrosFixed3(int64_t ns, std::string* out);

// Appends `ns` as microseconds: an integer when the nanosecond part is zero ("1682725898236567"),
// otherwise three decimals ("1682725898236567.250").
void AppendMicrosCompact(int64_t ns, std::string* out);

}  // namespace bubblescope::text
