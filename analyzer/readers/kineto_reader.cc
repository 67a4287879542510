#include "readers/kineto_reader.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/out_of_memory.h"
#include "common/status_macros.h"
#include "readers/json_number.h"
#include "readers/json_repair.h"
#include "readers/kineto_document.h"
#include "readers/rank_builder.h"
#include "text/json_tokens.h"

namespace bubblescope {
namespace {

using kineto::DocumentView;

absl::Status FileError(std::string_view path, int64_t offset, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: byte %d: %s", std::string(path), offset, std::string(what)));
}

// A text in a wide Unicode encoding: which one ("UTF-16", "UTF-32"; nullptr for none) and the
// byte where it shows.
struct WideText {
  const char* encoding = nullptr;
  int64_t offset = 0;
};

// UTF-32's byte-order marks hold UTF-16's (FF FE 00 00 starts with FF FE), so they are tried
// first; without a mark, the zeros beside the first '{' or '[' (from `first`, the first byte
// that is not JSON space) count the bytes of a character: 1 zero UTF-16, 3 zeros UTF-32.
WideText WideEncoding(std::string_view text, size_t first) {
  using std::string_view_literals::operator""sv;
  if (text.starts_with("\xFF\xFE\0\0"sv) || text.starts_with("\0\0\xFE\xFF"sv)) {
    return {"UTF-32", 0};
  }
  if (text.starts_with("\xFF\xFE"sv) || text.starts_with("\xFE\xFF"sv)) return {"UTF-16", 0};
  const size_t opener = text.find_first_of("{[", first);
  if (opener == std::string_view::npos || opener > first + 3) return {};
  size_t zeros_before = 0;
  while (zeros_before < opener - first && text[opener - 1 - zeros_before] == '\0') {
    ++zeros_before;
  }
  if (zeros_before != opener - first) return {};  // something else stands before the opener
  size_t zeros_after = 0;
  while (opener + 1 + zeros_after < text.size() && zeros_after < 3 &&
         text[opener + 1 + zeros_after] == '\0') {
    ++zeros_after;
  }
  const size_t zeros = std::max(zeros_before, zeros_after);
  if (zeros == 0) return {};
  return {zeros >= 3 ? "UTF-32" : "UTF-16", static_cast<int64_t>(first)};
}

// What a document that is neither an object nor an array is.
std::string DescribeTopLevel(std::string_view rest) {
  const size_t end = rest.find_first_of(" \t\n\r");
  const std::string_view token = rest.substr(0, end);
  std::string_view type;
  if (token[0] == '"') {
    type = "string";
  } else if (token == "true" || token == "false") {
    type = "boolean";
  } else if (token == "null") {
    type = "null";
  } else {
    int64_t ignored = 0;
    if (kineto::ParseScaledDecimal(token, 0, &ignored) != kineto::NumberStatus::kNotNumber) {
      type = "number";
    }
  }
  if (type.empty()) return "not JSON: expected '{' or '['";
  return "top-level " + std::string(type) + ", expected an object or array";
}

std::string_view SyntaxWhat(simdjson::error_code error) {
  switch (error) {
    case simdjson::TAPE_ERROR:
      return "malformed JSON (missing or extra comma, colon, bracket or key)";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
      return "document ends inside an object or array";
    case simdjson::UNCLOSED_STRING:
      return "string not closed before the end of the file";
    case simdjson::DEPTH_ERROR:
      return "JSON nested too deeply";
    case simdjson::CAPACITY:
      return "file too large for the JSON parser";
    case simdjson::UNESCAPED_CHARS:
      return "raw control character inside a string (JSON writes it escaped, as \\u00XX)";
    default:
      return simdjson::error_message(error);
  }
}

// What one document read gives: its ranks (one, or a merged trace's) and whether it was merged.
struct Parsed {
  std::vector<Rank> ranks;
  bool merged = false;
  // Read as ReaderOptions::part_of_growing_file says: empty profiler steps kept.
  bool part_of_growing_file = false;
  // The document is an object, and it gave its baseTimeNanoseconds (WalkResult's).
  bool object_form = false;
  bool saw_base_time = false;

  void Bump(ImportCounter counter, int64_t offset) {
    for (Rank& rank : ranks) rank.stats.Bump(counter, offset);
  }
  void SetTruncationDetail(const std::string& detail) {
    for (Rank& rank : ranks) rank.stats.set_truncation_detail(detail);
  }
};

// Kineto writes baseTimeNanoseconds after the events, each "ts" relative to it: a file cut
// before it (an object, no base read, times within a day of zero) holds times on a clock no
// one can place. Counted on the rank (kUnknownClockBase, at the cut), so that the loader keeps
// it off the other ranks' clock rather than put it there as if its base were 0 (an iteration of
// 1.7e12 ms). A bare array, or times from the epoch (older Kineto), never had a base to lose.
void CountLostClockBase(int64_t cut_offset, Parsed* parsed) {
  if (!parsed->object_form || parsed->saw_base_time || parsed->merged ||
      parsed->ranks.size() != 1) {
    return;
  }
  constexpr TimeNs kRelativeWithinNs = TimeNs{86'400} * 1'000'000'000;
  const Rank& rank = parsed->ranks[0];
  bool any = false;
  TimeNs earliest = 0;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.intervals.empty()) continue;
    earliest = any ? std::min(earliest, timeline.intervals.front().start)
                   : timeline.intervals.front().start;
    any = true;
  }
  if (any && earliest > -kRelativeWithinNs && earliest < kRelativeWithinNs) {
    parsed->Bump(ImportCounter::kUnknownClockBase, cut_offset);
  }
}

// One empty rank named after the file: what a file that is no trace leaves.
void ResetToOneRank(std::string_view display_path, Parsed* parsed) {
  parsed->ranks.clear();
  parsed->ranks.emplace_back();
  parsed->ranks[0].source_path = std::string(display_path);
  parsed->merged = false;
}

absl::Status ParseRepaired(simdjson::ondemand::parser& parser, std::string_view display_path,
                           const DocumentView& view, const kineto::RepairPlan& plan,
                           Parsed* parsed);
std::optional<size_t> TrailingContentAfter(std::string_view text);
absl::Status ParseBeforeTrailing(simdjson::ondemand::parser& parser, std::string_view display_path,
                                 const DocumentView& view, size_t end, Parsed* parsed);

// The ranks of a walked document, named after the file, a merged trace's with their rank ids.
void TakeRanks(std::string_view display_path, const kineto::WalkResult& walk, kineto::RankSet* set,
               Parsed* parsed) {
  parsed->ranks = set->Take();
  // Broken syntax inside a merged trace's layout, before its first rank entry, leaves none.
  if (parsed->ranks.empty()) return ResetToOneRank(display_path, parsed);
  parsed->merged = walk.merged.has_value();
  for (size_t i = 0; i < parsed->ranks.size(); ++i) {
    parsed->ranks[i].source_path = std::string(display_path);
    if (walk.merged) parsed->ranks[i].rank = walk.merged->ranks[i];
  }
}

absl::Status ParseDocument(simdjson::ondemand::parser& parser, std::string_view display_path,
                           const DocumentView& view, bool allow_repair, Parsed* parsed) {
  kineto::RankSet set;
  const kineto::WalkResult walk = kineto::WalkDocument(parser, view, &set);
  // The parser's index could not be allocated: memory, not the file, is at fault.
  if (walk.syntax == simdjson::MEMALLOC) {
    ResetToOneRank(display_path, parsed);
    return OutOfMemoryReading(display_path);
  }
  if (walk.not_a_trace) {
    ResetToOneRank(display_path, parsed);
    absl::Status error = FileError(display_path, walk.not_a_trace->first, walk.not_a_trace->second);
    // Well-formed JSON that simply is not a trace gets its own code, so that a directory's
    // non-trace files (truth.json, config.json) can be passed over by the loader.
    if (walk.not_a_trace_is_other_json) return absl::NotFoundError(error.message());
    return error;
  }
  const size_t usable_events = set.usable_events();
  set.Finish(parsed->part_of_growing_file);
  TakeRanks(display_path, walk, &set, parsed);
  parsed->object_form = walk.object_form;
  parsed->saw_base_time = walk.saw_base_time;
  const std::string_view text(view.json.data(), view.json.size());
  const int64_t file_size = static_cast<int64_t>(text.size()) + view.bias;
  if (walk.syntax != simdjson::SUCCESS) {
    if (allow_repair) {
      if (const std::optional<size_t> end = TrailingContentAfter(text)) {
        return ParseBeforeTrailing(parser, display_path, view, *end, parsed);
      }
    }
    if (walk.syntax == simdjson::UTF8_ERROR) {
      bool cut_mid_character = false;
      const size_t bad = kineto::FirstInvalidUtf8(text, &cut_mid_character);
      const int64_t bad_offset =
          static_cast<int64_t>(bad == std::string_view::npos ? 0 : bad) + view.bias;
      if (!cut_mid_character || !allow_repair) {
        return FileError(display_path, bad_offset, "invalid UTF-8");
      }
    }
    if (allow_repair) {
      const kineto::RepairPlan plan = kineto::PlanRepair(text);
      if (plan.ends_early) return ParseRepaired(parser, display_path, view, plan, parsed);
    }
    int64_t syntax_offset = walk.syntax_offset >= 0 ? walk.syntax_offset : file_size;
    if (walk.syntax == simdjson::UNESCAPED_CHARS) {
      // simdjson's position is past the character (at the end of the document, byte 118 of a
      // 118-byte file); the character's own byte is what the user can find.
      const size_t control = kineto::FirstUnescapedControl(text);
      if (control != std::string_view::npos) {
        syntax_offset = static_cast<int64_t>(control) + view.bias;
      }
    }
    if (walk.events_read == 0) {
      return FileError(display_path, syntax_offset, SyntaxWhat(walk.syntax));
    }
    // Broken syntax after some events: keep them, as for a cut-short file.
    parsed->Bump(ImportCounter::kTruncated, walk.last_event_offset);
    CountLostClockBase(walk.last_event_offset, parsed);
    parsed->SetTruncationDetail(absl::StrFormat(
        "syntax error at byte %d (%s); read %d events up to byte %d", syntax_offset,
        std::string(SyntaxWhat(walk.syntax)), walk.events_read, walk.last_event_offset));
  }
  if (usable_events == 0) {
    // The collector's own account of why the file is empty says more than a count.
    if (walk.cupti_unavailable) {
      return FileError(display_path, walk.events_offset,
                       kineto::CuptiUnavailableReason(*walk.cupti_unavailable));
    }
    return FileError(display_path, walk.events_offset,
                     walk.events_read == 0
                         ? std::string("no trace events")
                         : absl::StrFormat("no usable trace events among %d", walk.events_read));
  }
  if (walk.trailing_offset >= 0)
    parsed->Bump(ImportCounter::kTrailingContent, walk.trailing_offset);
  return absl::OkStatus();
}

// Where a complete document ends when more than white space follows it: a stray `]`, `,`,
// `"x"`, `garbage`, `42`, `{` or NUL bytes after the closing brace fail the parse as a whole, but
// the document before them is whole.
std::optional<size_t> TrailingContentAfter(std::string_view text) {
  const size_t end = kineto::FirstDocumentEnd(text);
  if (end == std::string_view::npos) return std::nullopt;
  if (text.find_first_not_of(" \t\n\r", end) == std::string_view::npos) return std::nullopt;
  return end;
}

// The document before `end` read alone, with every event it holds, and the rest counted as
// trailing content where it starts: the one documented rule (docs/input-errors.md) for any text
// after a complete document, never a syntax error or a cut that loses the last events.
absl::Status ParseBeforeTrailing(simdjson::ondemand::parser& parser, std::string_view display_path,
                                 const DocumentView& view, size_t end, Parsed* parsed) {
  const std::string_view text(view.json.data(), view.json.size());
  // The bytes after `end` stay readable in the same buffer: they serve as the parser's padding.
  const DocumentView document{
      .json = simdjson::padded_string_view(view.json.data(), end, view.json.capacity()),
      .bias = view.bias};
  absl::Status status =
      ParseDocument(parser, display_path, document, /*allow_repair=*/false, parsed);
  if (status.ok()) {
    parsed->Bump(ImportCounter::kTrailingContent,
                 static_cast<int64_t>(text.find_first_not_of(" \t\n\r", end)) + view.bias);
  }
  return status;
}

absl::Status ParseRepaired(simdjson::ondemand::parser& parser, std::string_view display_path,
                           const DocumentView& view, const kineto::RepairPlan& plan,
                           Parsed* parsed) {
  const int64_t file_size = static_cast<int64_t>(view.json.size()) + view.bias;
  if (!plan.repairable || (plan.complete_events == 0 && !plan.only_missing_close)) {
    ResetToOneRank(display_path, parsed);
    return FileError(display_path, file_size,
                     "file cut short before the first complete trace event");
  }
  simdjson::padded_string repaired(plan.keep_bytes + plan.closers.size());
  if (repaired.data() == nullptr) {  // simdjson's way of saying the allocation failed
    ResetToOneRank(display_path, parsed);
    return OutOfMemoryReading(display_path);
  }
  std::memcpy(repaired.data(), view.json.data(), plan.keep_bytes);
  std::memcpy(repaired.data() + plan.keep_bytes, plan.closers.data(), plan.closers.size());
  const DocumentView repaired_view{.json = repaired, .bias = view.bias};
  if (absl::Status status =
          ParseDocument(parser, display_path, repaired_view, /*allow_repair=*/false, parsed);
      !status.ok()) {
    return status;
  }
  const int64_t kept_end = static_cast<int64_t>(plan.keep_bytes) + view.bias;
  if (plan.only_missing_close) {
    parsed->Bump(ImportCounter::kUnterminatedArray, file_size);
  } else {
    parsed->Bump(ImportCounter::kTruncated, static_cast<int64_t>(plan.damage_offset) + view.bias);
    parsed->SetTruncationDetail(absl::StrFormat("cut at byte %d; read %d events up to byte %d",
                                                file_size, plan.complete_events, kept_end));
    CountLostClockBase(file_size, parsed);
  }
  return absl::OkStatus();
}

// The parser's index is sized to the document. One that must grow for this document takes an
// eighth more, so that the next files of about its size are indexed in the pages it already has
// (fresh pages cost a page fault each, docs/benchmarks.md). Without that room, the parser would
// be replaced by every file a few bytes larger than the one before. A failure here is left to
// the parse itself, which then asks for exactly what it needs and reports what it could not get.
void ReserveIndex(simdjson::ondemand::parser& parser, size_t document_bytes) {
  if (parser.capacity() >= document_bytes) return;
  const size_t wanted = document_bytes + document_bytes / 8;
  if (wanted <= parser.max_capacity()) {
    [[maybe_unused]] const simdjson::error_code ignored = parser.allocate(wanted);
  }
}

absl::Status ReadDocument(simdjson::ondemand::parser& parser, std::string_view display_path,
                          simdjson::padded_string_view json, Parsed* parsed) {
  ReserveIndex(parser, json.size());
  const std::string_view text(json.data(), json.size());
  size_t start = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") start = 3;  // UTF-8 byte-order mark
  const size_t first = text.find_first_not_of(" \t\n\r", start);
  if (first == std::string_view::npos) {
    ResetToOneRank(display_path, parsed);
    return FileError(display_path, 0, "empty file");
  }
  // UTF-16 or UTF-32, with or without a byte-order mark: its ASCII characters come with one or
  // three bytes of 0, which would otherwise read as damage (or a file cut short) where the first
  // 0 stands.
  if (const WideText wide = WideEncoding(text, first); wide.encoding != nullptr) {
    ResetToOneRank(display_path, parsed);
    return FileError(display_path, wide.offset,
                     absl::StrCat(wide.encoding, " text, not UTF-8 JSON (convert it: iconv -f ",
                                  wide.encoding, " -t UTF-8)"));
  }
  if (text[first] != '{' && text[first] != '[') {
    ResetToOneRank(display_path, parsed);
    return FileError(display_path, static_cast<int64_t>(first),
                     DescribeTopLevel(text.substr(first)));
  }
  const DocumentView view{
      .json = simdjson::padded_string_view(json.data() + start, json.size() - start,
                                           json.size() + simdjson::SIMDJSON_PADDING - start),
      .bias = static_cast<int64_t>(start)};
  return ParseDocument(parser, display_path, view, /*allow_repair=*/true, parsed);
}

}  // namespace

KinetoReader::KinetoReader() = default;
KinetoReader::~KinetoReader() = default;

void KinetoReader::ReserveFor(size_t bytes) { ReserveIndex(parser_, bytes); }

absl::Status KinetoReader::ReadRanks(std::string_view display_path,
                                     simdjson::padded_string_view json, std::vector<Rank>* ranks,
                                     bool* merged, bool part_of_growing_file) {
  Parsed parsed;
  parsed.part_of_growing_file = part_of_growing_file;
  absl::Status status = ReadDocument(parser_, display_path, json, &parsed);
  *ranks = std::move(parsed.ranks);
  if (merged != nullptr) *merged = parsed.merged;
  return status;
}

absl::Status KinetoReader::Read(std::string_view display_path, simdjson::padded_string_view json,
                                Rank* rank) {
  Parsed parsed;
  absl::Status status = ReadDocument(parser_, display_path, json, &parsed);
  if (status.ok() && parsed.merged && parsed.ranks.size() != 1) {
    *rank = Rank();
    rank->source_path = std::string(display_path);
    return FileError(
        display_path, 0,
        absl::StrFormat("a merged trace of %d ranks, read as one rank", parsed.ranks.size()));
  }
  *rank = std::move(parsed.ranks[0]);
  return status;
}

bool KinetoTraceReader::Sniff(std::string_view head, std::string_view path) const {
  if (head.starts_with("\xFF\xFE") || head.starts_with("\xFE\xFF")) return true;  // UTF-16
  if (head.starts_with(std::string_view("\0\0\xFE\xFF", 4))) return true;  // UTF-32, big-endian
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);             // UTF-8 byte-order mark
  const size_t first = head.find_first_not_of(" \t\n\r");
  if (first != std::string_view::npos && (head[first] == '{' || head[first] == '[')) return true;
  const absl::string_view name(path.data(), path.size());
  return absl::EndsWithIgnoreCase(name, ".json") || absl::EndsWithIgnoreCase(name, ".json.gz");
}

absl::StatusOr<FileRanks> KinetoTraceReader::Read(const std::string& path,
                                                  const ReaderOptions& options) {
  FileRanks file;
  BUBBLESCOPE_RETURN_IF_ERROR(reader_.ReadRanks(path, options.text, &file.ranks,
                                                &file.named_by_file, options.part_of_growing_file));
  file.bubblescope_merged = file.named_by_file;
  return file;
}

}  // namespace bubblescope
