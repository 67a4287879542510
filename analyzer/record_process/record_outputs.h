// What a recorded job left in the output directory: the collector's per-process trace files
// (`bubblescope-{run}-rank{R}-world{W}-{host}-{pid}.json`, "{run}-" left out when the collector
// was given no run id, "-world{W}" when the world size is unknown, "norank" in place of
// "rank{R}" when the rank is), which of them this run wrote, and which ranks wrote none.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace bubblescope {

inline constexpr char kCollectorFilePrefix[] = "bubblescope-";

// The rank and world size a collector file's name carries (-1 where it says nothing), and the
// record run it belongs to (empty when the name has no run id).
struct CollectorFileName {
  int32_t rank = -1;
  int32_t world_size = -1;
  std::string run_id;
};

// nullopt for a name that is not a collector trace file name (a directory is not searched).
std::optional<CollectorFileName> ParseCollectorFileName(std::string_view name);

// A file's identity at one moment; a change of any part means it was written in between.
struct FileStamp {
  uint64_t size = 0;
  int64_t modified_ns = 0;
  uint64_t inode = 0;
  bool operator==(const FileStamp&) const = default;
};

// The collector trace files of `directory` by name. An error when it cannot be listed.
using TraceFileStamps = std::map<std::string, FileStamp>;
absl::StatusOr<TraceFileStamps> StampCollectorFiles(const std::string& directory);

struct RecordedFile {
  std::string name;  // in the output directory
  uint64_t size = 0;
  CollectorFileName id;
};

// The files record run `run_id` wrote, in name order: those of `after` named with its run id,
// and those named without any run id (a collector that predates run ids) that are not in
// `before` or changed since.
std::vector<RecordedFile> WrittenBetween(const TraceFileStamps& before,
                                         const TraceFileStamps& after, const std::string& run_id);

// Ranks 0..W-1 without a file among `files`, W the largest world size the names give (0, and
// none missing, when no name gives one).
struct MissingRanks {
  int32_t world_size = 0;
  std::vector<int32_t> ranks;
};
MissingRanks FindMissingRanks(const std::vector<RecordedFile>& files);

// "512 B", "1.5 KiB", "20.0 MiB", "3.2 GiB" (binary units, one decimal).
std::string HumanBytes(uint64_t bytes);

}  // namespace bubblescope
