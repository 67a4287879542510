// `bubblescope watch DIR` (docs/watch.md): a folder that a running job writes its ranks' traces
// into, followed, and each pipeline iteration reported once it is complete on every rank of the
// pipeline.
//
// Each look at the folder (Poll) reads what the files gained: a growing JSON array (the
// collector's, `simulate --live`'s) from where the last look stopped, up to its last whole event
// (watch/array_tail.h); any other trace file (torch.profiler's file per rank per cycle, a
// finished set's files) whole, once it has stopped changing. A file's events join its rank's
// window (watch/rank_window.h). A rank's step is settled once the next step has begun in its
// file (or the file is finished), and a pipeline's iteration is ready once it is settled on every
// rank of the pipeline. Then the held windows are analysed together by the job driver
// (job::Analyze), each ready iteration's figures are read from its result, and the windows are
// trimmed to the last reported iteration, kept as the next one's context (its launches place the
// next step's first kernels). So memory holds a few iterations per rank whatever the job's
// length, and each iteration is reported once.
//
// The first analysis fits the job's clock model and finds its pipelines; later windows are
// analysed on that clock model (a window's few iterations give weaker evidence than the first
// ones did), and each window's own evidence re-checks it: where the two disagree by more than
// their uncertainty, or the pipelines found differ, a notice says so and the new ones are taken.
// With `once`, every file is read whole, as `analyze` reads it (a cut file flagged alike), before
// the one analysis, whose complete iterations are all reported: exactly `analyze`'s figures, and
// every profiler cycle's where a folder holds several (analyze reads one at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "crossrank/clock_alignment.h"
#include "job/job.h"
#include "loader/trace_text_reader.h"
#include "watch/iteration_report.h"

namespace bubblescope::watch {

struct FollowOptions {
  std::string dir;
  // Read everything there before analysing, and report every settled iteration (`--once`).
  bool once = false;
  // The most bytes of one growing file read in one look; the rest waits for the next look, which
  // comes at once (Polled::more_to_read). Bounds the memory of a look at a long job's files.
  int64_t read_bytes_per_look = int64_t{64} << 20;
  // The reading budget of a file read whole (loader's LoadOptions::max_file_bytes); 0: automatic.
  int64_t max_file_bytes = 0;
  // A rank that holds more steps than this that are not yet reported (a rank of its pipeline has
  // stopped writing) drops the oldest, with a notice: memory stays bounded while a job hangs.
  int32_t max_held_steps = 16;
  job::Options job = {};  // its clocks and own_clocks are the follower's
};

// What one look found.
struct Polled {
  std::vector<IterationReport> iterations;  // by step, then pipeline
  std::vector<WatchNotice> notices;
  // Some growing file has more bytes than one look reads: look again without waiting.
  bool more_to_read = false;
  // The look read something: events of a growing file, or a file whole.
  bool read_something = false;
  // The job has ended: every file followed is a growing array that is closed (the collector
  // closes a rank's file when its process ends) and every iteration they hold is reported; with
  // `once`, after the one look. Never for whole files alone: a folder of torch.profiler's cycle
  // files may always gain another cycle.
  bool all_finished = false;
};

class JobFollower {
 public:
  explicit JobFollower(FollowOptions options);
  ~JobFollower();
  JobFollower(const JobFollower&) = delete;
  JobFollower& operator=(const JobFollower&) = delete;

  // One look at the folder; `now_unix_ns` stamps what it reports. Errors: the folder cannot be
  // listed, an analysis fails (an invalid iteration marker), or, with `once`, a file is not a
  // readable trace (as `analyze` would fail); without `once` a bad file is a notice and ignored.
  absl::StatusOr<Polled> Poll(int64_t now_unix_ns);

  // Intervals held over every rank now: what the memory bound is about.
  size_t HeldIntervals() const;

 private:
  struct FileState;
  struct RankState;

  absl::Status ReadFolder(int64_t now_unix_ns, Polled& polled);
  absl::Status ReadGrowing(FileState& file, int64_t now_unix_ns, Polled& polled);
  absl::Status ReadWhole(FileState& file, int64_t now_unix_ns, Polled& polled);
  // Adds a file's ranks to their windows; false (with a notice) when the file's rank is unknown
  // or another file's.
  bool Adopt(FileState& file, std::vector<Rank> ranks, int64_t now_unix_ns, Polled& polled);
  std::optional<int64_t> Settled(int32_t rank) const;
  // The last step settled on every one of `ranks`; nullopt while one has none.
  std::optional<int64_t> Ready(const std::vector<int32_t>& ranks) const;
  bool SomethingReady() const;
  // What the windows keep after a report: from a step on, or whole (a waiting pipeline's).
  struct Kept {
    std::map<int32_t, int64_t> from;  // rank -> the step its window keeps from
    std::set<int32_t> whole;
  };
  // The analysis of every rank's window together (the windows moved into one trace and back).
  absl::StatusOr<job::Result> AnalyseWindows(clock_alignment::JobClocks& own);
  // The first analysis's structure and clock model taken, or a later one's checked against them.
  absl::Status Recheck(const job::Result& result, clock_alignment::JobClocks own,
                       int64_t now_unix_ns, Polled& polled);
  // The iterations ready and not yet reported, into `polled`; what each window keeps.
  Kept ReportReady(const job::Result& result, int64_t now_unix_ns, Polled& polled);
  void TrimWindows(const Kept& kept, int64_t now_unix_ns, Polled& polled);
  absl::Status Analyse(int64_t now_unix_ns, Polled& polled);

  FollowOptions options_;
  TraceTextReader text_reader_;
  std::map<std::string, std::unique_ptr<FileState>> files_;  // by path
  std::map<int32_t, std::unique_ptr<RankState>> ranks_;      // by rank id
  std::optional<clock_alignment::JobClocks> clocks_;
  // Each pipeline's ranks in stage order, as last found; and the last step reported of each.
  std::vector<std::vector<int32_t>> pipelines_;
  std::map<std::vector<int32_t>, int64_t> reported_;
  // Pipelines whose peers' files are not here yet, and how many ranks the last analysis had.
  std::set<std::vector<int32_t>> waiting_;
  size_t ranks_at_analysis_ = 0;
  std::string record_run_;  // the record run followed (the first one seen); empty: none
  bool analysed_ = false;
  bool said_waiting_ = false;  // the notice that the folder does not exist yet was given
};

// How far two clock models' differences between the same ranks lie apart at `at_ns`, set against
// their uncertainties: the ranks of the pair that disagree most (the lower first), and by how much,
// when they disagree by more than the larger uncertainty (and 1 us); nullopt when they agree.
struct ClockDisagreement {
  int32_t rank_a = -1;
  int32_t rank_b = -1;
  TimeNs by_ns = 0;
};
std::optional<ClockDisagreement> CompareClocks(const clock_alignment::JobClocks& reused,
                                               const clock_alignment::JobClocks& own, TimeNs at_ns);

}  // namespace bubblescope::watch
