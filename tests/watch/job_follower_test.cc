#include "watch/job_follower.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "support/subprocess.h"
#include "support/test_files.h"
#include "watch/array_tail.h"

namespace bubblescope::watch {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunCommand;
using testing::TempDir;
using testing::WriteFile;

// (pipeline, step) -> the figures analyze gives the iteration: its window and bubble fraction.
using Figures = std::map<std::pair<int32_t, int64_t>, std::pair<TimeNs, double>>;

Figures AnalyzeFigures(const std::string& dir, int32_t cycle = 0) {
  LoadOptions load;
  load.profiler_cycle = cycle;
  absl::StatusOr<Trace> trace = LoadTrace({dir}, load);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return {};
  absl::StatusOr<job::Result> result = job::Analyze(*trace, {});
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  Figures figures;
  for (size_t p = 0; p < result->pipelines.size(); ++p) {
    for (const bubble::IterationFigures& iteration : result->pipelines[p].bubble.iterations) {
      if (!iteration.complete) continue;
      figures[{static_cast<int32_t>(p), iteration.number}] = {iteration.window(),
                                                              iteration.bubble_fraction};
    }
  }
  return figures;
}

Figures FiguresOf(const std::vector<IterationReport>& reports) {
  Figures figures;
  for (const IterationReport& report : reports) {
    const bool fresh = figures
                           .emplace(std::pair(report.pipeline, report.step),
                                    std::pair(report.window_ns, report.bubble_fraction))
                           .second;
    EXPECT_TRUE(fresh) << "pipeline " << report.pipeline << " step " << report.step
                       << " reported twice";
  }
  return figures;
}

std::vector<IterationReport> WatchOnce(const std::string& dir) {
  JobFollower follower({.dir = dir, .once = true});
  absl::StatusOr<Polled> polled = follower.Poll(0);
  EXPECT_TRUE(polled.ok()) << polled.status();
  if (!polled.ok()) return {};
  EXPECT_TRUE(polled->all_finished);
  return polled->iterations;
}

TEST(JobFollowerTest, OnceGivesAnalyzesIterationsExactly) {
  for (const char* set : {"sim_1f1b_imbalanced_p4_m8", "sim_interleaved_p4_v2_m8",
                          "torch_cpu/1f1b_p4_m8", "torch_cpu/dp2_1f1b_p2_m4"}) {
    SCOPED_TRACE(set);
    const std::string dir = std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/" + set;
    const Figures expected = AnalyzeFigures(dir);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(FiguresOf(WatchOnce(dir)), expected);
  }
}

TEST(JobFollowerTest, OnceFollowsEveryProfilerCycleOfAFolder) {
  // torch.profiler's files of three cycles (steps 2-3, 6-7 and 10) per rank: analyze reads one
  // cycle at a time, watch the rank's files one after another as they came.
  const std::string dir =
      std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/recipe_cycles_1f1b_p2_m4";
  Figures expected;
  for (int32_t cycle = 1; cycle <= 3; ++cycle) expected.merge(AnalyzeFigures(dir, cycle));
  ASSERT_EQ(expected.size(), 5u);
  EXPECT_EQ(FiguresOf(WatchOnce(dir)), expected);
}

TEST(JobFollowerTest, OnceReportsTheSlowestStageAndTheScheduleAlone) {
  // Stage 2 of this job is 1.5x slower than the others (its truth.json): the slowest stage of
  // every iteration, and a 1F1B schedule of p = 4, m = 8 leaves (p-1)/(m+p-1) = 3/11 by itself.
  const std::vector<IterationReport> reports =
      WatchOnce(std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/sim_1f1b_imbalanced_p4_m8");
  ASSERT_EQ(reports.size(), 3u);
  for (const IterationReport& report : reports) {
    EXPECT_EQ(report.slowest_stage, 2);
    ASSERT_EQ(report.stages.size(), 4u);
    EXPECT_EQ(report.stages[2].rank, 2);
    ASSERT_TRUE(report.ideal_bubble_fraction.has_value());
    EXPECT_NEAR(*report.ideal_bubble_fraction, 3.0 / 11.0, 1e-9);
    EXPECT_DOUBLE_EQ(*report.excess_bubble_fraction,
                     report.bubble_fraction - *report.ideal_bubble_fraction);
    EXPECT_FALSE(report.top_cause.empty());
  }
}

// The number after `"key":` in a trace event's text (0 when absent).
double NumberAfter(std::string_view event, std::string_view key) {
  const size_t at = event.find(key);
  if (at == std::string_view::npos) return 0;
  size_t i = event.find(':', at) + 1;
  while (event[i] == ' ') ++i;
  return std::strtod(std::string(event.substr(i, 40)).c_str(), nullptr);
}

// One rank's array file as a job writing it would grow it: metadata first, then each event once
// it has ended (a tracer writes an event when it completes), by end time; step ranges already
// when they begin.
struct GrowingFile {
  std::string path;
  std::vector<std::string> metadata = {};
  std::vector<std::pair<double, std::string>> events = {};  // (end time, text), by end time
};

GrowingFile FromFinishedArray(const std::string& source, const std::string& path) {
  const std::string text = ReadFile(source);
  GrowingFile file{.path = path};
  for (std::string_view element : ScanArrayTail(text, false).elements) {
    if (IsMetadataEvent(element)) {
      file.metadata.emplace_back(element);
    } else {
      // A step's range at its start: the earliest any writer could show it, so the follower
      // must not take a step's range for the step being over.
      const bool step_range = element.find("\"ProfilerStep#") != std::string_view::npos;
      file.events.emplace_back(
          NumberAfter(element, "\"ts\"") + (step_range ? 0 : NumberAfter(element, "\"dur\"")),
          std::string(element));
    }
  }
  std::stable_sort(file.events.begin(), file.events.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return file;
}

// The file as written up to time `until` (microseconds), open; or whole and closed.
void WriteUpTo(const GrowingFile& file, double until, bool close) {
  std::string text = "[\n";
  for (const std::string& event : file.metadata) text += event + ",\n";
  for (const auto& [end, event] : file.events) {
    if (!close && end > until) break;
    text += event + ",\n";
  }
  if (close) text += "{}]\n";
  WriteFile(file.path, text);
}

// A 4-stage job of 24 iterations written as it runs (each rank's file grown look by look) and
// followed, with what analyze gives the finished job.
class GrowingJobTest : public ::testing::Test {
 protected:
  static constexpr int kLooks = 72;  // 3 a step

  void SetUp() override {
    const testing::CommandResult made =
        RunCommand({BUBBLESCOPE_BINARY, "simulate", "-o", finished_.path(), "--format", "array",
                    "-p", "4", "-m", "4", "-k", "24", "--fwd-us", "1000,1000,1500,1000", "--bwd-us",
                    "2000,2000,3000,2000", "--iteration-gap-us", "500"});
    ASSERT_EQ(made.exit_status, 0) << made.err;
    expected_ = AnalyzeFigures(finished_.path());
    ASSERT_EQ(expected_.size(), 24u);
    for (int rank = 0; rank < 4; ++rank) {
      const std::string name = "rank" + std::to_string(rank) + ".pt.trace.json";
      files_.push_back(FromFinishedArray(finished_.path() + "/" + name, live_.path() + "/" + name));
      first_ = std::min(first_, files_.back().events.front().first);
      last_ = std::max(last_, files_.back().events.back().first);
    }
  }

  // Grows the files over kLooks looks (rank `late`'s only from look `late_from` on, holding
  // its metadata alone until look `late_events_from`), polling after each; every look twice, as
  // a poller would (a whole file is read once it held still).
  void Follow(int late = -1, int late_from = 0, int late_events_from = -1) {
    if (late_events_from < 0) late_events_from = late_from;
    JobFollower follower({.dir = live_.path()});
    for (int look = 0; look <= kLooks; ++look) {
      const double until = first_ + (last_ - first_) * look / kLooks;
      for (size_t rank = 0; rank < files_.size(); ++rank) {
        if (static_cast<int>(rank) != late || look >= late_events_from) {
          WriteUpTo(files_[rank], until, look == kLooks);
        } else if (look >= late_from) {
          WriteUpTo(files_[rank], first_ - 1, false);  // its metadata, no event yet
        }
      }
      for (int again = 0; again < 2; ++again) {
        absl::StatusOr<Polled> polled = follower.Poll(look);
        ASSERT_TRUE(polled.ok()) << polled.status();
        for (const WatchNotice& notice : polled->notices) notices_.push_back(notice.text);
        // The job has ended once every file is closed, and not before.
        EXPECT_EQ(polled->all_finished, look == kLooks) << "look " << look;
        if (!polled->iterations.empty()) ++looks_reporting_;
        reports_.insert(reports_.end(), polled->iterations.begin(), polled->iterations.end());
        most_held_ = std::max(most_held_, follower.HeldIntervals());
      }
    }
  }

  TempDir finished_;
  TempDir live_;
  Figures expected_;
  std::vector<GrowingFile> files_;
  double first_ = 1e300;
  double last_ = 0;
  std::vector<IterationReport> reports_;
  std::vector<std::string> notices_;
  size_t looks_reporting_ = 0;
  size_t most_held_ = 0;
};

TEST_F(GrowingJobTest, EachIterationIsReportedOnceAsTheJobGoesWithAnalyzesFigures) {
  Follow();
  EXPECT_TRUE(notices_.empty()) << notices_[0];
  EXPECT_EQ(FiguresOf(reports_), expected_);
  // Reported as the job went, not all at the end.
  EXPECT_GE(looks_reporting_, 20u);
  // Never more than a few iterations held, however long the job: of its 24 iterations at most 4
  // at once (the context, the one settled, the next, the one being written), a sixth of its
  // events (its intervals are fewer than its events: flows and step ranges are none).
  size_t total = 0;
  for (const GrowingFile& file : files_) total += file.events.size();
  EXPECT_LE(most_held_, total / 6);
}

TEST_F(GrowingJobTest, APipelineWaitsForARankWhoseFileComesLate) {
  // Rank 0's file appears a third of the way through: until then the others' pipeline lacks its
  // first stage, and nothing of it may be reported (nor twice once it is whole).
  Follow(/*late=*/0, /*late_from=*/24);
  ASSERT_FALSE(notices_.empty());
  EXPECT_NE(notices_[0].find("exchanges with ranks [0] whose files are not here yet"),
            std::string::npos)
      << notices_[0];
  EXPECT_EQ(FiguresOf(reports_), expected_);
  // The pipeline found once its first stage came.
  EXPECT_EQ(notices_,
            (std::vector<std::string>{
                notices_[0], "the pipelines changed: [1, 2, 3] before, [0, 1, 2, 3] now"}));
}

TEST_F(GrowingJobTest, ARankWhoseFileHoldsNoStepYetCostsTheOthersNothing) {
  // Rank 0's file appears a third of the way through with its metadata alone, its events only
  // later: meanwhile the other ranks' windows must keep every step not yet reported.
  Follow(/*late=*/0, /*late_from=*/24, /*late_events_from=*/36);
  EXPECT_EQ(FiguresOf(reports_), expected_);
}

TEST(JobFollowerTest, AFileSeenEmptyIsToldApartOnceItHoldsSomething) {
  // A writer makes the file before it writes its first byte: seen then, it is neither a growing
  // array nor a whole file yet (taking it for a whole file left the job's arrays unread).
  TempDir dir;
  const std::string path = dir.Write("rank0.json", "");
  JobFollower follower({.dir = dir.path()});
  ASSERT_TRUE(follower.Poll(1).ok());
  WriteFile(path, "  \n");
  ASSERT_TRUE(follower.Poll(2).ok());
  WriteFile(path,
            "  \n[\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
            "\"ts\":1,\"dur\":2},\n");
  absl::StatusOr<Polled> polled = follower.Poll(3);
  ASSERT_TRUE(polled.ok()) << polled.status();
  EXPECT_TRUE(polled->read_something);
  EXPECT_EQ(follower.HeldIntervals(), 1u);
  EXPECT_FALSE(polled->all_finished);
  WriteFile(path,
            "  \n[\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
            "\"ts\":1,\"dur\":2},\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\","
            "\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":2}\n]\n");
  polled = follower.Poll(4);
  ASSERT_TRUE(polled.ok()) << polled.status();
  EXPECT_EQ(follower.HeldIntervals(), 2u);
  EXPECT_TRUE(polled->all_finished);  // its only file closed
}

TEST(JobFollowerTest, AFileReplacedOrDamagedWhileFollowedIsANoticeNotAnEnd) {
  TempDir dir;
  const std::string path = dir.Write("rank0.json",
                                     "[\n{\"ph\":\"M\",\"name\":\"process_name\","
                                     "\"pid\":1,\"tid\":0,\"args\":{}},\n");
  JobFollower follower({.dir = dir.path()});
  ASSERT_TRUE(follower.Poll(1).ok());
  // Shorter than what was read of it: another file under the old name.
  WriteFile(path, "[\n");
  absl::StatusOr<Polled> polled = follower.Poll(2);
  ASSERT_TRUE(polled.ok()) << polled.status();
  ASSERT_EQ(polled->notices.size(), 1u);
  EXPECT_EQ(polled->notices[0].text,
            path +
                ": 2 bytes, fewer than the 60 already read of it (the file was replaced): "
                "no longer followed");
  EXPECT_EQ(polled->notices[0].analysed_unix_ns, 2);

  const std::string other = dir.Write("rank1.json", "[\n{\"ph\":\"X\"} {\"ph\":\"X\"}");
  polled = follower.Poll(3);
  ASSERT_TRUE(polled.ok()) << polled.status();
  // The damage, then the one event before it, which is no usable event.
  ASSERT_EQ(polled->notices.size(), 2u);
  EXPECT_EQ(polled->notices[0].text,
            other + ": byte 13: not a JSON array of events from here on; read up to it");
}

// Two clock models of ranks 0 and 1 on two hosts (nodes 0 and 1): rank 1's clock `offset_ns`
// ahead of rank 0's at the anchor, drifting `rate`, within `uncertainty_ns`.
clock_alignment::JobClocks TwoHosts(TimeNs offset_ns, double rate, TimeNs uncertainty_ns,
                                    bool nodes_swapped = false) {
  clock_alignment::JobClocks clocks;
  clocks.node_of = {{0, nodes_swapped ? 1 : 0}, {1, nodes_swapped ? 0 : 1}};
  clocks.nodes = 2;
  clocks.anchor_ns = 1'000'000'000;
  clock_alignment::PairFit fit;
  // The fit is of node 1 against node 0: swapped nodes see the difference the other way round.
  fit.line = {.offset_ns = nodes_swapped ? -offset_ns : offset_ns,
              .rate = nodes_swapped ? -rate : rate};
  fit.uncertainty_ns = uncertainty_ns;
  fit.samples = 40;
  clocks.fits[{0, 1}] = fit;
  return clocks;
}

TEST(CompareClocksTest, ModelsWithinTheirUncertaintyAgree) {
  const clock_alignment::JobClocks first = TwoHosts(500'000, 0, 2'000);
  EXPECT_EQ(CompareClocks(first, TwoHosts(501'500, 0, 1'000), 1'000'000'000), std::nullopt);
  // However the nodes are numbered.
  EXPECT_EQ(CompareClocks(first, TwoHosts(501'500, 0, 1'000, true), 1'000'000'000), std::nullopt);
}

TEST(CompareClocksTest, ModelsFartherApartThanTheirUncertaintyDisagree) {
  const clock_alignment::JobClocks first = TwoHosts(500'000, 0, 2'000);
  const std::optional<ClockDisagreement> off =
      CompareClocks(first, TwoHosts(510'000, 0, 1'000, true), 1'000'000'000);
  ASSERT_TRUE(off.has_value());
  EXPECT_EQ(off->rank_a, 0);
  EXPECT_EQ(off->rank_b, 1);
  EXPECT_EQ(off->by_ns, 10'000);
}

TEST(CompareClocksTest, ADriftTheFirstModelMissedShowsLater) {
  // The first model saw no drift; 100 ppm over 60 s puts the clocks 6 ms apart from it.
  const clock_alignment::JobClocks first = TwoHosts(500'000, 0, 2'000);
  const clock_alignment::JobClocks later = TwoHosts(500'000, 100e-6, 1'000);
  EXPECT_EQ(CompareClocks(first, later, 1'000'000'000), std::nullopt);  // at the anchor: agree
  const std::optional<ClockDisagreement> off = CompareClocks(first, later, 61'000'000'000);
  ASSERT_TRUE(off.has_value());
  EXPECT_EQ(off->by_ns, 6'000'000);
}

}  // namespace
}  // namespace bubblescope::watch
