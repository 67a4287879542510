#include "text/shortest_double.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace bubblescope::text {

bool AppendShortestDouble(double value, std::string* out) {
  char buffer[32];
  constexpr double kLargestPlain = 9007199254740992.0;  // 2^53
  auto [end, error] =
      std::abs(value) >= kLargestPlain
          ? std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific)
          : std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (error != std::errc()) return false;
  out->append(buffer, end);
  return true;
}

}  // namespace bubblescope::text
