#include "common/out_of_memory.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace bubblescope {
namespace {
constexpr char kWhat[] = "out of memory reading it";
}  // namespace

absl::Status OutOfMemoryReading(std::string_view path, int64_t budget_bytes) {
  std::string message = absl::StrCat(std::string(path), ": byte 0: ", kWhat);
  if (budget_bytes > 0) {
    absl::StrAppend(&message, " (the reading budget per file is ", budget_bytes >> 20, " MiB)");
  }
  return absl::ResourceExhaustedError(message);
}

bool IsOutOfMemory(const absl::Status& status) {
  return absl::IsResourceExhausted(status) && absl::StrContains(status.message(), kWhat);
}

}  // namespace bubblescope
