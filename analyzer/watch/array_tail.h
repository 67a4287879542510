// The part of a growing JSON array file that can be read now. `bubblescope record`'s collector
// (and `simulate --live`) write a rank's trace as one JSON array, opened at the start and
// appended to as the job runs, closed with `]` at its end; a reader opening it mid-run sees the
// array's opening, whole events, and perhaps half an event being written. ScanArrayTail finds the
// whole events among the bytes added since the last scan, so each is read once.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace bubblescope::watch {

struct ArrayTailScan {
  // The complete elements, each its whole text (views into the bytes scanned), in file order.
  std::vector<std::string_view> elements;
  // Bytes of the scanned text taken: through the last complete element, or through the closing
  // `]`. The next scan starts there.
  size_t consumed = 0;
  bool opened = false;  // the array's `[` has been taken (by this scan or an earlier one)
  bool closed = false;  // the array's closing `]` was taken: the file is finished
  // A byte no JSON array can hold there (text before the `[`, or between two elements something
  // other than a comma): nothing from it on is taken; `damage_at` is its place in the text.
  bool damaged = false;
  size_t damage_at = 0;
};

// Scans `text`, the file's bytes from where the last scan stopped; `opened`: an earlier scan took
// the `[`. Strings and their escapes are respected, so brackets inside names do not count.
ArrayTailScan ScanArrayTail(std::string_view text, bool opened);

// Whether an element is a metadata event (`"ph": "M"`: process and thread names, the collector's
// process record with the rank's distributedInfo and host): these say who the rank is, so they
// are kept and read with every later part of the file.
bool IsMetadataEvent(std::string_view element);

}  // namespace bubblescope::watch
