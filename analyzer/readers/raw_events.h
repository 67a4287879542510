// A Kineto document's events as the text they were written in, for tools that re-emit a trace
// (the Perfetto overlay, perfetto/perfetto_overlay.h) and must keep every name and arg exactly as
// it was: the same simdjson On-Demand walk the reader makes, handing over each event's fields as
// key and value text instead of decoding them. Nothing here models the trace.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "simdjson.h"

namespace bubblescope::kineto {

// One member of an event: the key as written (escapes left in place) and the exact JSON text of
// its value (a string with its quotes, a number as spelled, a whole object or array).
struct RawField {
  std::string_view key;
  std::string_view value;
};

struct RawEvent {
  int64_t offset = 0;            // of its '{' in the file
  std::vector<RawField> fields;  // in the order written
};

// The top-level members that say how to read the events (object form only). Copies: a file
// cut short is streamed from a repaired copy that does not outlive the stream.
struct RawMembers {
  bool merged = false;            // a merged trace (readers/merged_trace.h)
  std::string base_time;          // baseTimeNanoseconds as written; empty when absent
  std::string distributed_info;   // the distributedInfo object's text; empty when absent
  std::string device_properties;  // the deviceProperties array's text; empty when absent
};

// Walks the document `json` (a whole file, as the loader reads it): `*members` first, then
// `visit` for every event that is a JSON object, in file order (elements that are not objects
// are passed over); an event's views last only until `visit` returns. A file cut short is read up
// to its last complete event, as the reader reads it. Errors, one line: "<display_path>: byte <N>:
// <what>" when the text is not a trace document.
absl::Status StreamRawEvents(std::string_view display_path, simdjson::padded_string_view json,
                             RawMembers* members,
                             const std::function<void(const RawEvent&)>& visit);

}  // namespace bubblescope::kineto
