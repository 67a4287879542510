// Fuzz target for loading a job from disk: a directory of up to four entries with fuzzed names,
// kinds and contents, loaded by LoadTrace as `bubblescope analyze` loads it (directory listing,
// trace-name filter, entries passed over, reading budget, --rank overrides parsed as the CLI
// parses them, rank ids from distributedInfo or file names, duplicate ranks), then the job
// driver and both reports over what loaded.
//
// Input (fuzz_input.h): the entries' contents, separated by kFileSeparator lines; before them,
// from the end: how the paths are given (the directory; every entry by path; or the directory
// and its first entry), the reading budget (256 B to 1 MiB), for each of four entries its kind
// (a regular file mostly; a directory, a symbolic link to the first entry or to nothing, a FIFO),
// a name suffix and a name stem of up to 12 bytes ('/' and NUL become '_'), then up to two
// --rank overrides naming an entry (by path or name) or fuzzed text.
//
// Checks: a load error names a path of the job's directory, or is an override's own error; a load
// keeps the Trace's promises (rank ids unique, sorted, >= 0; each rank read from one of the
// entries and checked as fuzz_checks.h's CheckRank; every override of a loaded file obeyed;
// every entry passed over named with a reason); the job driver and both reports as job_fuzzer;
// the Perfetto overlay of what loaded (docs/perfetto.md) written, loaded back and analysed to
// the same figures, unless it left events out (which it counts) or the job was itself a merged
// trace (which is not merged again, with an error naming it).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/analyze_command.h"
#include "file_fuzz_util.h"
#include "fuzz_checks.h"
#include "fuzz_input.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "perfetto/perfetto_overlay.h"

namespace {

namespace fs = std::filesystem;
using bubblescope::fuzz::Fail;
using bubblescope::fuzz::FuzzInput;

constexpr size_t kMaxEntries = 4;

enum class EntryKind : uint8_t { kFile, kDirectory, kLinkToFirst, kDanglingLink, kFifo };

struct Entry {
  std::string name;
  std::string path;
  EntryKind kind = EntryKind::kFile;
};

std::string EntryName(FuzzInput& input) {
  static constexpr std::string_view kSuffixes[] = {
      ".json", ".json.gz", ".pt.trace.json", ".JSON", ".Json.GZ", ".txt", "", ".json.tmp"};
  const std::string_view suffix = kSuffixes[input.TakeInRange<size_t>(0, 7)];
  std::string name = input.TakeString(12);
  for (char& c : name) {
    if (c == '/' || c == '\0') c = '_';
  }
  name += suffix;
  if (name.empty() || name == "." || name == "..") name = absl::StrCat("_", name);
  return name;
}

EntryKind TakeKind(FuzzInput& input, bool fifo_allowed) {
  switch (input.TakeInRange<uint8_t>(0, 7)) {
    case 4:
      return EntryKind::kDirectory;
    case 5:
      return EntryKind::kLinkToFirst;
    case 6:
      return EntryKind::kDanglingLink;
    case 7:
      // Named on the command line a FIFO is opened and read, which waits for a writer forever,
      // as it would in bubblescope; only a directory listing may hold one.
      return fifo_allowed ? EntryKind::kFifo : EntryKind::kFile;
    default:
      return EntryKind::kFile;
  }
}

// Makes `entry` in the work directory; false when it cannot be made.
bool Make(const Entry& entry, const Entry& first, std::string_view contents) {
  std::error_code error;
  switch (entry.kind) {
    case EntryKind::kFile: {
      std::ofstream out(entry.path, std::ios::binary | std::ios::trunc);
      out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
      return static_cast<bool>(out);
    }
    case EntryKind::kDirectory:
      return fs::create_directory(entry.path, error);
    case EntryKind::kLinkToFirst:
      fs::create_symlink(first.name, entry.path, error);
      return !error;
    case EntryKind::kDanglingLink:
      fs::create_symlink("missing-target.json", entry.path, error);
      return !error;
    case EntryKind::kFifo:
      return mkfifo(entry.path.c_str(), 0600) == 0;
  }
  return false;
}

// One --rank argument as typed, "PATH=N": PATH an entry's path or name (which entry is known
// once the entries are made) or fuzzed text; N a small rank or fuzzed text.
struct OverrideText {
  uint8_t target = 0;
  std::string path;  // fuzzed text, used when target % 4 == 3
  std::string rank;
};

std::vector<OverrideText> TakeOverrides(FuzzInput& input) {
  std::vector<OverrideText> overrides(static_cast<size_t>(input.TakeInRange(0, 2)));
  for (OverrideText& text : overrides) {
    text.target = input.TakeByte();
    if (text.target % 4 == 3) text.path = input.TakeString(12);
    text.rank = input.TakeBool() ? input.TakeString(12) : std::to_string(input.TakeInRange(0, 7));
  }
  return overrides;
}

// The overrides the CLI's own parser accepts, their paths resolved against `entries`.
std::vector<bubblescope::RankOverride> ParseOverrides(const std::vector<OverrideText>& texts,
                                                      const std::vector<Entry>& entries) {
  std::vector<bubblescope::RankOverride> overrides;
  for (const OverrideText& text : texts) {
    std::string path = text.path;
    if (text.target % 4 != 3) {
      const Entry& entry = entries[text.target % entries.size()];
      path = (text.target & 4) != 0 ? entry.name : entry.path;
    }
    absl::StatusOr<bubblescope::RankOverride> parsed =
        bubblescope::ParseRankOverride(path + "=" + text.rank);
    if (parsed.ok()) overrides.push_back(*parsed);
  }
  return overrides;
}

bool Under(std::string_view path, std::string_view dir) {
  return path.size() > dir.size() + 1 && path.substr(0, dir.size()) == dir &&
         path[dir.size()] == '/';
}

void CheckLoaded(const bubblescope::Trace& trace, std::string_view dir,
                 const std::vector<bubblescope::RankOverride>& overrides) {
  if (trace.ranks.empty()) Fail("a load succeeded with no rank");
  for (size_t i = 0; i < trace.ranks.size(); ++i) {
    const bubblescope::Rank& rank = trace.ranks[i];
    if (rank.rank < 0) Fail("a loaded rank without an id");
    if (i > 0 && rank.rank <= trace.ranks[i - 1].rank) Fail("rank ids not unique and sorted");
    if (!Under(rank.source_path, dir)) Fail("a rank read from outside the job's directory");
    for (const bubblescope::RankOverride& rank_override : overrides) {
      if (rank_override.path == rank.source_path && rank_override.rank != rank.rank) {
        Fail(absl::StrCat(rank.source_path, ": --rank ", rank_override.rank, " not obeyed"));
      }
    }
    bubblescope::fuzz::CheckRank(rank);
  }
  for (const bubblescope::SkippedFile& skipped : trace.skipped_files) {
    if (!Under(skipped.path, dir) || skipped.reason.empty()) {
      Fail("an entry passed over without its path or a reason");
    }
  }
}

// The overlay's read-back job has `original`'s figures exactly.
void CheckSameFigures(const bubblescope::job::Result& original,
                      const bubblescope::job::Result& back) {
  if (original.pipelines.size() != back.pipelines.size()) Fail("overlay: pipelines differ");
  for (size_t p = 0; p < original.pipelines.size(); ++p) {
    const bubblescope::bubble::Result& x = original.pipelines[p].bubble;
    const bubblescope::bubble::Result& y = back.pipelines[p].bubble;
    if (x.ranks != y.ranks || x.bubble_fraction != y.bubble_fraction || x.idle != y.idle ||
        x.capacity != y.capacity || x.latency.p50 != y.latency.p50 ||
        x.latency.max != y.latency.max || x.per_rank.size() != y.per_rank.size()) {
      Fail(absl::StrCat("overlay: pipeline ", p, "'s bubble differs when read back"));
    }
    for (size_t r = 0; r < x.per_rank.size(); ++r) {
      const bubblescope::IdleSplit& a = x.per_rank[r].split;
      const bubblescope::IdleSplit& b = y.per_rank[r].split;
      if (a.fill != b.fill || a.drain != b.drain || a.stall != b.stall) {
        Fail(absl::StrCat("overlay: rank ", x.per_rank[r].rank, "'s idle differs when read back"));
      }
    }
    const auto& a = original.pipelines[p].shape;
    const auto& b = back.pipelines[p].shape;
    if (a.has_value() != b.has_value() ||
        (a && (a->p != b->p || a->m != b->m || a->v != b->v || a->family != b->family))) {
      Fail(absl::StrCat("overlay: pipeline ", p, "'s shape differs when read back"));
    }
  }
}

void CheckOverlayRoundTrip(const bubblescope::Trace& trace, const fs::path& root,
                           std::string_view dir) {
  using namespace bubblescope;  // NOLINT(build/namespaces): fuzz harness code
  absl::StatusOr<job::Result> original = job::Analyze(trace, {});
  if (!original.ok()) Fail("analysing a loaded job");
  perfetto::OverlayCounts counts;
  absl::StatusOr<std::string> merged = perfetto::RenderOverlay(trace, *original, &counts);
  if (!merged.ok()) {
    if (!absl::StrContains(merged.status().message(), std::string(dir))) {
      Fail(
          absl::StrCat("an overlay error naming no path of the job: ", merged.status().ToString()));
    }
    return;
  }
  if (counts.left_out > 0) return;
  const std::string path = (root / "merged.json").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << *merged;
    if (!out.good()) Fail("cannot write the overlay");
  }
  LoadOptions options;
  options.jobs = 1;
  absl::StatusOr<Trace> back = LoadTrace({path}, options);
  if (!back.ok()) Fail(absl::StrCat("the overlay does not load: ", back.status().ToString()));
  if (back->ranks.size() != trace.ranks.size()) Fail("overlay: ranks differ when read back");
  absl::StatusOr<job::Result> again = job::Analyze(*back, {});
  if (!again.ok()) Fail("analysing the overlay read back");
  CheckSameFigures(*original, *again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz entry point, no API
  FuzzInput input(data, size);
  const int paths_given = input.TakeInRange(0, 2);  // the directory; each entry; both
  LoadOptions options;
  options.jobs = 1;  // one core; the workers' sharing of files is not what this target tests
  options.max_file_bytes = int64_t{256} << input.TakeInRange(0, 12);
  // Every choice comes before the contents: an entry's, whether or not its contents exist.
  std::vector<Entry> specs(kMaxEntries);
  for (Entry& spec : specs) {
    spec.kind = TakeKind(input, paths_given == 0);
    spec.name = EntryName(input);
  }
  const std::vector<OverrideText> override_texts = TakeOverrides(input);
  const std::vector<std::string_view> contents = fuzz::SplitFiles(input.rest(), kMaxEntries);

  const fs::path& root = fuzz::WorkDirectory();
  const std::string dir = (root / "job").string();
  std::error_code error;
  fs::remove_all(dir, error);
  if (!fs::create_directory(dir, error)) Fail("cannot make the job directory");

  std::vector<Entry> entries;
  for (size_t i = 0; i < contents.size(); ++i) {
    Entry entry = specs[i];
    entry.path = dir + "/" + entry.name;
    // A name taken twice is one entry: writing a file over a FIFO made before would wait for a
    // reader forever.
    const bool taken = std::any_of(entries.begin(), entries.end(),
                                   [&](const Entry& made) { return made.name == entry.name; });
    if (!taken && Make(entry, entries.empty() ? entry : entries.front(), contents[i])) {
      entries.push_back(entry);
    }
  }
  if (entries.empty()) return 0;
  const std::vector<RankOverride> overrides = ParseOverrides(override_texts, entries);

  std::vector<std::string> paths;
  if (paths_given != 1) paths.push_back(dir);
  if (paths_given == 1) {
    for (const Entry& entry : entries) paths.push_back(entry.path);
  } else if (paths_given == 2 && entries.front().kind != EntryKind::kFifo) {
    paths.push_back(entries.front().path);
  }
  options.rank_overrides = overrides;

  absl::StatusOr<Trace> trace = LoadTrace(paths, options);
  if (!trace.ok()) {
    const absl::string_view message = trace.status().message();
    if (!absl::StrContains(message, dir) && !absl::StartsWith(message, "rank override ")) {
      Fail(absl::StrCat("a load error naming no path of the job: ", trace.status().ToString()));
    }
    return 0;
  }
  CheckLoaded(*trace, dir, overrides);
  fuzz::RequireOk(fuzz::AnalyzeAndReport(*trace, {}), "analysing a loaded job");
  CheckOverlayRoundTrip(*trace, root, dir);
  return 0;
}
