// Writing user-controlled text (kernel names, file paths, finding messages) into an HTML page:
// the HTML report's one escaping rule, for element content and quoted attribute values alike.
#pragma once

#include <string>
#include <string_view>

namespace bubblescope::text {

// Appends `text` to `out` so that it reads back as itself inside an element or a quoted
// attribute: & < > " ' as character references; tab, newline and carriage return as such; every
// other control character (C0 and DEL, which HTML forbids) and each byte of an ill-formed UTF-8
// sequence replaced by U+FFFD; well-formed UTF-8 passed through.
void AppendHtmlEscaped(std::string_view text, std::string* out);

// The same, returned.
std::string HtmlEscaped(std::string_view text);

}  // namespace bubblescope::text
