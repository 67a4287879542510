#include "compare/schema_version.h"

#include <charconv>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "text/json_space.h"
#include "text/utf8.h"

namespace bubblescope::compare {
namespace {

constexpr std::string_view kAnalyzeSchemaPrefix = "bubblescope.analyze/";

std::string_view SkipSpace(std::string_view text) {
  size_t first = 0;
  while (first < text.size() && text::IsJsonSpace(text[first])) ++first;
  return text.substr(first);
}

// A decimal number with no sign, no leading '+' and nothing after it.
bool ParseVersionNumber(std::string_view text, int32_t* out) {
  if (text.empty()) return false;
  const char* last = text.data() + text.size();
  auto [end, error] = std::from_chars(text.data(), last, *out);
  return error == std::errc() && end == last && *out >= 0;
}

}  // namespace

absl::StatusOr<SchemaVersion> ParseAnalyzeSchema(std::string_view schema) {
  auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat("schema \"", std::string(schema),
                                                   "\" is not bubblescope.analyze/MAJOR[.MINOR]"));
  };
  if (schema.substr(0, kAnalyzeSchemaPrefix.size()) != kAnalyzeSchemaPrefix) return invalid();
  const std::string_view version = schema.substr(kAnalyzeSchemaPrefix.size());
  const size_t dot = version.find('.');
  SchemaVersion parsed;
  if (!ParseVersionNumber(version.substr(0, dot), &parsed.major)) return invalid();
  if (dot != std::string_view::npos &&
      !ParseVersionNumber(version.substr(dot + 1), &parsed.minor)) {
    return invalid();
  }
  return parsed;
}

bool LooksLikeBubblescopeReport(std::string_view head) {
  // A UTF-8 byte-order mark (an editor's save) does not change what the text is.
  if (head.starts_with(text::kUtf8ByteOrderMark)) {
    head.remove_prefix(text::kUtf8ByteOrderMark.size());
  }
  std::string_view rest = SkipSpace(head);
  if (rest.empty() || rest[0] != '{') return false;
  rest = SkipSpace(rest.substr(1));
  constexpr std::string_view kKey = "\"schema\"";
  if (rest.substr(0, kKey.size()) != kKey) return false;
  rest = SkipSpace(rest.substr(kKey.size()));
  if (rest.empty() || rest[0] != ':') return false;
  rest = SkipSpace(rest.substr(1));
  return rest.substr(0, 13) == "\"bubblescope.";
}

}  // namespace bubblescope::compare
