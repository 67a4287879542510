#include "text/one_line.h"

namespace bubblescope::text {

std::string OneLine(std::string_view message) {
  std::string line(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return line;
}

}  // namespace bubblescope::text
