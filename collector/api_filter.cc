#include "api_filter.h"

#include <array>
#include <cctype>

namespace bubblescope::collector {
namespace {

// The API's words after its prefix: "cudaStreamGetCaptureInfo" -> Stream, Get, Capture, Info.
// Calls `visit` with each; stops early when it returns true, and returns whether it did.
template <typename Visit>
bool AnyWord(std::string_view name, Visit visit) {
  size_t begin = 0;
  for (size_t i = 1; i <= name.size(); ++i) {
    if (i == name.size() || std::isupper(static_cast<unsigned char>(name[i]))) {
      if (visit(name.substr(begin, i - begin))) return true;
      begin = i;
    }
  }
  return false;
}

}  // namespace

bool IsHostQueryApi(std::string_view name) {
  std::string_view rest;
  if (name.substr(0, 4) == "cuda") {
    rest = name.substr(4);
  } else if (name.substr(0, 2) == "cu") {
    rest = name.substr(2);
  } else {
    return false;
  }
  if (rest.empty() || !std::isupper(static_cast<unsigned char>(rest[0]))) return false;
  static constexpr std::array<std::string_view, 5> kQueryWords = {"Get", "Peek", "Query", "Is",
                                                                  "Occupancy"};
  if (AnyWord(rest, [](std::string_view word) {
        for (std::string_view query : kQueryWords) {
          if (word == query) return true;
        }
        return false;
      })) {
    return true;
  }
  return rest == "FuncSetAttribute" || rest == "FuncSetCacheConfig" ||
         rest == "FuncSetSharedMemConfig";
}

}  // namespace bubblescope::collector
