#include "cli/id_ranges.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace bubblescope {
namespace {

bool WholeNumber(std::string_view text, int64_t* value) {
  const char* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(text.data(), last, *value);
  return !text.empty() && error == std::errc() && end == last && *value >= 0 &&
         *value <= std::numeric_limits<int32_t>::max();
}

}  // namespace

absl::StatusOr<std::vector<perfetto::IdRange>> ParseIdRanges(std::string_view text) {
  std::vector<perfetto::IdRange> ranges;
  for (size_t begin = 0; begin <= text.size();) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view item = text.substr(begin, comma - begin);
    begin = comma + 1;
    const size_t dash = item.find('-', 1);  // not a leading minus sign
    perfetto::IdRange range;
    const bool parsed = dash == std::string_view::npos
                            ? WholeNumber(item, &range.first) && WholeNumber(item, &range.last)
                            : WholeNumber(item.substr(0, dash), &range.first) &&
                                  WholeNumber(item.substr(dash + 1), &range.last);
    if (!parsed) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", std::string(item), "': expected N or FIRST-LAST, whole numbers from 0 to ",
          std::numeric_limits<int32_t>::max(), " (e.g. 0-7,12)"));
    }
    if (range.last < range.first) {
      return absl::InvalidArgumentError(absl::StrCat("'", std::string(item),
                                                     "': the range runs backwards (write ",
                                                     range.last, "-", range.first, ")"));
    }
    ranges.push_back(range);
  }
  return ranges;
}

}  // namespace bubblescope
