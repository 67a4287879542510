// Messages that reach a terminal or a log line: one line each, whatever the text holds.
#pragma once

#include <string>
#include <string_view>

namespace bubblescope::text {

// `message` safe to print as one line of a terminal: line breaks (\n, \r) become spaces and
// every other control character (an ESC that would start a terminal escape sequence, a
// backspace, DEL) is spelled out as \xNN, so a file name cannot move the cursor or recolour
// the screen.
std::string OneLine(std::string_view message);

}  // namespace bubblescope::text
