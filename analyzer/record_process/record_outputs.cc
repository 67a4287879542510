#include "record_process/record_outputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "record_format/record_run_id.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;

// Larger than any job; keeps the missing-rank list of a damaged name bounded.
constexpr int32_t kMaxWorldSize = 1'000'000;

// Reads the decimal number at the front of `text` and removes it; nullopt (text unchanged) when
// there is none or it does not fit an int32.
std::optional<int32_t> ConsumeNumber(std::string_view& text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  int32_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return value;
}

bool ConsumePrefix(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

bool AllDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<CollectorFileName> ParseCollectorFileName(std::string_view name) {
  std::string_view rest = name;
  if (!ConsumePrefix(rest, kCollectorFilePrefix)) return std::nullopt;
  if (rest.ends_with(".json")) {
    rest.remove_suffix(5);
  } else if (rest.ends_with(".json.gz")) {
    rest.remove_suffix(8);
  } else {
    return std::nullopt;
  }
  CollectorFileName id;
  // A run id comes first when there is one; it never holds "rank"
  // (record_format/record_run_id.h), so the first "rank" ends it: "{id}-rank3-..." or
  // "{id}-norank-...".
  const size_t rank_word = rest.find("rank");
  if (rank_word == std::string_view::npos) return std::nullopt;
  if (rank_word > 0 && !(rank_word == 2 && rest.starts_with("norank"))) {
    size_t end = rank_word - 1;
    if (rank_word >= 3 && rest.substr(rank_word - 3, 3) == "-no") end = rank_word - 3;
    if (rest[end] != '-' || !record_format::IsValidRecordRunId(rest.substr(0, end))) {
      return std::nullopt;
    }
    id.run_id = std::string(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  if (!ConsumePrefix(rest, "norank")) {
    if (!ConsumePrefix(rest, "rank")) return std::nullopt;
    std::optional<int32_t> rank = ConsumeNumber(rest);
    if (!rank) return std::nullopt;
    id.rank = *rank;
  }
  if (ConsumePrefix(rest, "-world")) {
    std::optional<int32_t> world = ConsumeNumber(rest);
    if (!world || *world <= 0 || *world > kMaxWorldSize) return std::nullopt;
    id.world_size = *world;
  }
  // What is left is "-{host}-{pid}"; the host name may itself hold dashes.
  const size_t last_dash = rest.rfind('-');
  if (!rest.starts_with('-') || last_dash == std::string_view::npos || last_dash <= 1 ||
      !AllDigits(rest.substr(last_dash + 1))) {
    return std::nullopt;
  }
  return id;
}

absl::StatusOr<TraceFileStamps> StampCollectorFiles(const std::string& directory) {
  std::error_code error;
  fs::directory_iterator entries(directory, error);
  if (error) return absl::NotFoundError(absl::StrCat(directory, ": ", error.message()));
  TraceFileStamps stamps;
  for (; entries != fs::directory_iterator(); entries.increment(error)) {
    if (error) return absl::InternalError(absl::StrCat(directory, ": ", error.message()));
    std::string name = entries->path().filename().string();
    if (!ParseCollectorFileName(name)) continue;
    struct stat info {};
    if (stat(entries->path().c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    stamps[name] = FileStamp{static_cast<uint64_t>(info.st_size),
                             int64_t{info.st_mtim.tv_sec} * 1'000'000'000 + info.st_mtim.tv_nsec,
                             static_cast<uint64_t>(info.st_ino)};
  }
  if (error) return absl::InternalError(absl::StrCat(directory, ": ", error.message()));
  return stamps;
}

std::vector<RecordedFile> WrittenBetween(const TraceFileStamps& before,
                                         const TraceFileStamps& after, const std::string& run_id) {
  std::vector<RecordedFile> written;
  for (const auto& [name, stamp] : after) {
    CollectorFileName id = *ParseCollectorFileName(name);  // it parsed when it was stamped
    if (id.run_id.empty()) {
      auto earlier = before.find(name);
      if (earlier != before.end() && earlier->second == stamp) continue;
    } else if (id.run_id != run_id) {
      continue;
    }
    written.push_back(RecordedFile{name, stamp.size, std::move(id)});
  }
  return written;
}

MissingRanks FindMissingRanks(const std::vector<RecordedFile>& files) {
  MissingRanks missing;
  std::set<int32_t> present;
  for (const RecordedFile& file : files) {
    missing.world_size = std::max(missing.world_size, file.id.world_size);
    if (file.id.rank >= 0) present.insert(file.id.rank);
  }
  for (int32_t rank = 0; rank < missing.world_size; ++rank) {
    if (!present.contains(rank)) missing.ranks.push_back(rank);
  }
  return missing;
}

std::string HumanBytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

}  // namespace bubblescope
