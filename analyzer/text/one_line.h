// Messages that reach a terminal or a log line: one line each, whatever the text holds.
#pragma once

#include <string>
#include <string_view>

namespace bubblescope::text {

// `message` with every line break (\n, \r) replaced by a space.
std::string OneLine(std::string_view message);

}  // namespace bubblescope::text
