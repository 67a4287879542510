// The one way every reader says that memory ran out while it read a file (a trace, a report, a
// gate config): a one-line ResourceExhausted error naming the file, never a damage message or
// an abort (docs/input-errors.md, "Memory"). Callers catch std::bad_alloc and simdjson's
// MEMALLOC at the file's boundary and return this.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace bubblescope {

// "<path>: byte 0: out of memory reading it", with " (the reading budget per file is N MiB)"
// when `budget_bytes` > 0.
absl::Status OutOfMemoryReading(std::string_view path, int64_t budget_bytes = 0);

// True for the error OutOfMemoryReading returns (a ResourceExhausted status naming memory), so
// a caller that wraps errors can keep it as it is.
bool IsOutOfMemory(const absl::Status& status);

}  // namespace bubblescope
