// UTF-8 well-formedness, shared by the reader (rejecting invalid input with its byte offset) and
// the two JSON writers (replacing invalid bytes so their output always parses).
#pragma once

#include <cstddef>
#include <string_view>

namespace bubblescope::text {

// Length (1 to 4) of the well-formed UTF-8 sequence starting at text[i], or 0 when the bytes
// there are not one (Unicode table 3-7: no overlong forms, no surrogates, nothing above
// U+10FFFF). When `cut_short` is given it is set to true if the bytes are the valid beginning of
// a sequence that the end of `text` cuts off (0 is returned then too).
size_t Utf8SequenceLength(std::string_view text, size_t i, bool* cut_short = nullptr);

// The UTF-8 byte-order mark an editor may put first in a file; it says nothing of the text, so
// every reader of bubblescope's own files (reports, gate configs) passes over it as the trace
// readers do.
inline constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

// U+FFFD in UTF-8, which the writers put in place of each byte of an ill-formed sequence.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

}  // namespace bubblescope::text
