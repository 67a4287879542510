#include "loader/rank_from_name.h"

#include <array>
#include <cstddef>
#include <limits>

#include "absl/strings/ascii.h"

namespace bubblescope {
namespace {

constexpr std::array<std::string_view, 2> kKeywords = {"rank", "worker"};

bool IsSeparator(char c) { return c == '-' || c == '_' || c == '.'; }

bool MatchesKeywordAt(std::string_view name, size_t at, std::string_view keyword) {
  if (name.size() - at < keyword.size()) return false;
  for (size_t i = 0; i < keyword.size(); ++i) {
    if (absl::ascii_tolower(static_cast<unsigned char>(name[at + i])) != keyword[i]) return false;
  }
  return true;
}

// The number that starts at `at` (after at most one separator), if any and if it fits.
std::optional<int32_t> NumberAt(std::string_view name, size_t at) {
  if (at < name.size() && IsSeparator(name[at])) ++at;
  if (at >= name.size() || !absl::ascii_isdigit(static_cast<unsigned char>(name[at]))) {
    return std::nullopt;
  }
  int64_t value = 0;
  for (; at < name.size() && absl::ascii_isdigit(static_cast<unsigned char>(name[at])); ++at) {
    value = value * 10 + (name[at] - '0');
    if (value > std::numeric_limits<int32_t>::max()) return std::nullopt;
  }
  return static_cast<int32_t>(value);
}

}  // namespace

std::optional<int32_t> RankFromFileName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  std::optional<int32_t> last;
  for (size_t at = 0; at < name.size(); ++at) {
    for (std::string_view keyword : kKeywords) {
      if (!MatchesKeywordAt(name, at, keyword)) continue;
      if (std::optional<int32_t> number = NumberAt(name, at + keyword.size())) last = number;
    }
  }
  return last;
}

}  // namespace bubblescope
