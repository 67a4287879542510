// Writes a simulated job to a directory the way a profiled job leaves it: one
// Kineto trace file per rank (rank<r>.pt.trace.json, or .json.gz) and the job's
// truth.json beside them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "schedule_engine/config.h"
#include "synth/synthetic_job.h"
#include "writers/kineto_writer.h"
#include "writers/nsys_writer.h"

namespace bubblescope::sim {

inline constexpr char kTruthFileName[] = "truth.json";

struct SetWriteOptions {
  KinetoWriteOptions kineto;  // layout, NCCL args; gzip_level applies when gzip is set
  bool gzip = false;          // write rank<r>.pt.trace.json.gz
  // Set: write each rank as an Nsight Systems SQLite export, rank<r>.sqlite, instead of Kineto
  // (gzip does not apply).
  std::optional<NsysWriteOptions> nsys;
  // Replace existing rank files and truth.json, and remove other rank files of
  // the same naming scheme (the other compression, or ranks beyond this job's)
  // so the directory holds exactly this job. Without it an existing rank file
  // or truth.json is an error and nothing is written.
  bool overwrite = false;
};

// "rank<r>.pt.trace.json", plus ".gz" when gzip.
std::string RankFileName(int32_t rank, bool gzip);
// "rank<r>.sqlite": a rank's Nsight Systems export.
std::string NsysRankFileName(int32_t rank);
// "<worker>.<time_ns>.pt.trace.json" (".gz" when gzip): the file torch.profiler's
// tensorboard_trace_handler writes at the end of each profiled cycle, its worker name torch's
// default "<host>_<pid>" (the rank's host, else "sim-host") and `time_ns` the wall clock's
// nanoseconds since the epoch when it was written.
std::string ProfilerCycleFileName(const Rank& rank, int64_t time_ns, bool gzip);

// A set's directory claimed for writing: created if missing, locked against every other writer of
// a set until destroyed (runs writing into one directory at once, 8 `simulate --force` in
// parallel, write one whole set after another, never a mix), and holding no earlier set's files.
class SetDirectory {
 public:
  // Files of a set already there (rank files, the simulator's cycle files, truth.json) are an
  // AlreadyExists error naming the first, unless `overwrite`: then each is removed, except those
  // named in `replaced` (file names), which their writer replaces whole.
  static absl::StatusOr<std::unique_ptr<SetDirectory>> Claim(
      const std::string& directory, const std::vector<std::string>& replaced, bool overwrite);
  ~SetDirectory();
  SetDirectory(const SetDirectory&) = delete;
  SetDirectory& operator=(const SetDirectory&) = delete;

  // The path of the file `name` in the directory.
  std::string PathOf(std::string_view name) const;

 private:
  SetDirectory(std::string directory, int lock_fd);
  std::string directory_;
  int lock_fd_;
};

// Creates `directory` (and its parents) if needed, writes every rank of
// `simulation` and the truth, and sets each rank's source_path to the name of
// its file (written as the file's traceName: a set is the same bytes wherever
// it is written). Returns the paths written, rank files first (by rank), truth.json
// last. Errors: AlreadyExists naming the first file in the way (without
// overwrite); otherwise the failing path and why.
absl::StatusOr<std::vector<std::string>> WriteSimulationSet(const Config& config,
                                                            Simulation& simulation,
                                                            const std::string& directory,
                                                            const SetWriteOptions& options);

}  // namespace bubblescope::sim
