// JSON's whitespace, for the hand-written scanners (the reader's token and number scanners, its
// repair of cut files, the report reader's version probe).
#pragma once

namespace bubblescope::text {

// RFC 8259's four whitespace characters: space, tab, line feed, carriage return.
inline bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace bubblescope::text
