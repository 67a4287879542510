#include "text/one_line.h"

namespace bubblescope::text {

std::string OneLine(std::string_view message) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string line;
  line.reserve(message.size());
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r') {
      line.push_back(' ');
    } else if (byte < 0x20 || byte == 0x7f) {
      line += "\\x";
      line.push_back(kHex[byte >> 4]);
      line.push_back(kHex[byte & 0xf]);
    } else {
      line.push_back(c);
    }
  }
  return line;
}

}  // namespace bubblescope::text
