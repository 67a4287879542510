#include "support/shared_traces.h"

#include <cstdlib>
#include <string_view>

namespace bubblescope::testing {

std::string SharedTracePath(const std::string& relative) {
  return std::string(BUBBLESCOPE_SHARED_DIR) + "/traces/" + relative;
}

bool SharedTracesRequired() {
  const char* required = std::getenv("BUBBLESCOPE_REQUIRE_SHARED");
  return required != nullptr && std::string_view(required) != "" &&
         std::string_view(required) != "0";
}

}  // namespace bubblescope::testing
