// `analyze --mpi`'s two sides (docs/scale.md). Process 0 reads its share, gathers every process's
// rank headers and facts, and returns the job's ranks without their events (all that the notes,
// the reports and --perfetto read of them); it then analyses the job a part at a time, asking the
// processes that hold each part's digests for them. Every other process reads its share, sends
// its headers and facts, and answers process 0's requests until it says the analysis is done.
// Neither side prints anything; process 0 reports as a single process does.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/iterations.h"
#include "cli/job_input.h"
#include "distributed/mpi_world.h"
#include "distributed/part_exchange.h"
#include "job/job_parts.h"

namespace bubblescope {

class MpiProcessZero {
 public:
  // `steps`: the job's iteration marker, if any, which the ranks' facts are read with.
  MpiProcessZero(const distributed::MpiWorld& world, iterations::Options steps)
      : world_(world), steps_(std::move(steps)) {}
  // Tells the other processes that no request will come, if they still wait for one (a load
  // rejected under --strict, say).
  ~MpiProcessZero();
  MpiProcessZero(const MpiProcessZero&) = delete;
  MpiProcessZero& operator=(const MpiProcessZero&) = delete;

  // LoadTrace's errors, the files read by every process; the Trace holds the ranks' headers
  // (RankHeader). For this object's Analyzer only.
  TraceLoader Loader();
  // The job's result from the Loader's Trace, a part at a time (distributed_analysis.h); the
  // other processes are released once it returns.
  JobAnalyzer Analyzer();

 private:
  absl::StatusOr<std::vector<std::string>> Fetch(const std::vector<RankOrigin>& ranks) const;
  void Release();

  const distributed::MpiWorld& world_;
  iterations::Options steps_;
  distributed::HeldDigests held_;  // this process's share
  std::vector<RankOrigin> origins_;
  std::vector<job::RankFacts> facts_;
  bool others_waiting_ = false;
};

// Any other process: after process 0 has said go (`Broadcast` of kExitOk; any other value is
// returned at once), reads its share of `source`'s files, sends its headers and facts, and
// answers requests until process 0 is done; kExitOk when process 0 loaded the trace, else
// kExitBadInput.
int RunMpiReader(const distributed::MpiWorld& world, const JobSource& source);

}  // namespace bubblescope
