#include "watch/array_tail.h"

#include "readers/json_repair.h"
#include "text/json_space.h"

namespace bubblescope::watch {
namespace {

using text::IsJsonSpace;

// The end of the value starting at text[begin] (an object, an array or a scalar), or npos when
// the text ends first (or, for an object or array, its brackets do not match: damage that the
// next bytes cannot mend, read as an element never finished).
size_t ValueEnd(std::string_view text, size_t begin) {
  if (text[begin] == '{' || text[begin] == '[') {
    const size_t end = kineto::FirstDocumentEnd(text.substr(begin));
    return end == std::string_view::npos ? end : begin + end;
  }
  // A scalar element (never written by a trace writer, legal all the same): up to the next
  // separator, which must be there to know the scalar is whole.
  for (size_t i = begin; i < text.size(); ++i) {
    if (text[i] == ',' || text[i] == ']' || IsJsonSpace(text[i])) return i;
  }
  return std::string_view::npos;
}

}  // namespace

ArrayTailScan ScanArrayTail(std::string_view text, bool opened) {
  ArrayTailScan scan;
  scan.opened = opened;
  size_t at = 0;
  auto skip_space = [&] {
    while (at < text.size() && IsJsonSpace(text[at])) ++at;
  };
  if (!scan.opened) {
    skip_space();
    if (at == text.size()) return scan;
    if (text[at] != '[') {
      scan.damaged = true;
      scan.damage_at = at;
      return scan;
    }
    scan.opened = true;
    scan.consumed = ++at;
  }
  // Between elements: after the `[` or after an element, a comma (or the closing bracket) comes
  // next; a writer may leave a trailing comma before the `]`, which the Chrome format allows.
  bool after_element = false;
  while (true) {
    skip_space();
    if (at == text.size()) return scan;
    const char c = text[at];
    if (c == ']') {
      scan.closed = true;
      scan.consumed = at + 1;
      return scan;
    }
    if (c == ',') {
      ++at;
      after_element = false;
      continue;
    }
    if (after_element) {
      scan.damaged = true;
      scan.damage_at = at;
      return scan;
    }
    const size_t end = ValueEnd(text, at);
    if (end == std::string_view::npos) return scan;  // the element is still being written
    scan.elements.push_back(text.substr(at, end - at));
    scan.consumed = end;
    at = end;
    after_element = true;
  }
}

bool IsMetadataEvent(std::string_view element) {
  // A `"ph"` with its quotes unescaped can only be a key (a string value is never followed by a
  // colon), so the first one followed by `:` and `"M"` decides.
  for (size_t at = element.find("\"ph\""); at != std::string_view::npos;
       at = element.find("\"ph\"", at + 1)) {
    size_t i = at + 4;
    while (i < element.size() && IsJsonSpace(element[i])) ++i;
    if (i >= element.size() || element[i] != ':') continue;
    ++i;
    while (i < element.size() && IsJsonSpace(element[i])) ++i;
    return element.substr(i, 3) == "\"M\"";
  }
  return false;
}

}  // namespace bubblescope::watch
