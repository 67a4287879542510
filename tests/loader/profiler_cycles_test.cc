// The choice of a profiler cycle among files of several (loader/profiler_cycles.h), on its own
// and through the loader with Kineto files whose ProfilerStep numbers say which cycle each is.
#include "loader/profiler_cycles.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::TempDir;
using ::testing::ElementsAre;

CycleFile File(int32_t rank, int64_t first, int64_t last) {
  return CycleFile{.rank = rank, .first_step = first, .last_step = last};
}

// torch's schedule(wait=1, warmup=1, active=2, repeat=3) on two ranks: steps 2-3, 6-7, 10-11.
std::vector<CycleFile> ThreeCyclesOfTwoRanks() {
  return {File(0, 6, 7), File(1, 2, 3), File(0, 10, 11),
          File(1, 6, 7), File(0, 2, 3), File(1, 10, 11)};
}

TEST(ProfilerCyclesTest, TheNewestCompleteCycleIsReadByDefault) {
  absl::StatusOr<CycleChoice> choice = ChooseProfilerCycle(ThreeCyclesOfTwoRanks(), 0);
  ASSERT_TRUE(choice.ok()) << choice.status();
  ASSERT_EQ(choice->cycles.found.size(), 3u);
  EXPECT_EQ(choice->cycles.chosen, 3);
  EXPECT_FALSE(choice->cycles.by_flag);
  EXPECT_THAT(choice->cycle_of, ElementsAre(2, 1, 3, 2, 1, 3));
  EXPECT_THAT(choice->keep, ElementsAre(false, false, true, false, false, true));
  const ProfilerCycle& second = choice->cycles.found[1];
  EXPECT_EQ(second.number, 2);
  EXPECT_EQ(second.first_step, 6);
  EXPECT_EQ(second.last_step, 7);
  EXPECT_EQ(second.files, 2);
  EXPECT_TRUE(second.complete);
}

TEST(ProfilerCyclesTest, CycleNPicksOne) {
  absl::StatusOr<CycleChoice> choice = ChooseProfilerCycle(ThreeCyclesOfTwoRanks(), 1);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->cycles.chosen, 1);
  EXPECT_TRUE(choice->cycles.by_flag);
  EXPECT_THAT(choice->keep, ElementsAre(false, true, false, false, true, false));
}

TEST(ProfilerCyclesTest, ACycleBeyondThoseFoundIsAnErrorListingThem) {
  EXPECT_EQ(ChooseProfilerCycle(ThreeCyclesOfTwoRanks(), 4).status().message(),
            "--cycle 4: the traces hold 3 profiler cycles: 1 (steps 2-3, 2 files), 2 (steps "
            "6-7, 2 files), 3 (steps 10-11, 2 files)");
}

// The job stopped one step into its last active window: that cycle spans one step where the
// others span two, and a rank that died missed cycle 2: the newest complete cycle is the first.
TEST(ProfilerCyclesTest, ShortOrRankMissingCyclesAreIncomplete) {
  const std::vector<CycleFile> files = {File(0, 2, 3), File(1, 2, 3), File(0, 6, 7),
                                        File(0, 10, 10), File(1, 10, 10)};
  absl::StatusOr<CycleChoice> choice = ChooseProfilerCycle(files, 0);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->cycles.chosen, 1);
  EXPECT_TRUE(choice->cycles.found[0].complete);
  EXPECT_FALSE(choice->cycles.found[1].complete);
  EXPECT_FALSE(choice->cycles.found[2].complete);
  EXPECT_EQ(ListProfilerCycles(choice->cycles.found),
            "1 (steps 2-3, 2 files), 2 (steps 6-7, 1 file, incomplete), 3 (step 10, 2 files, "
            "incomplete)");
}

TEST(ProfilerCyclesTest, NoCompleteCycleIsAnErrorAskingForOne) {
  const std::vector<CycleFile> files = {File(0, 2, 3), File(0, 6, 7), File(1, 6, 6)};
  EXPECT_EQ(ChooseProfilerCycle(files, 0).status().message(),
            "the traces hold 2 profiler cycles and none has a file of every rank over every "
            "step: 1 (steps 2-3, 1 file, incomplete), 2 (steps 6-7, 2 files, incomplete); pick "
            "one with --cycle N");
}

// No rank claimed twice: one cycle whatever the steps (ranks may well differ in their steps).
// Nor are cycles told where a file holds no steps, or its steps overlap: the rank ids then
// report the clash as they always have.
TEST(ProfilerCyclesTest, OneCycleUnlessARankHasFilesOfDisjointSteps) {
  for (const std::vector<CycleFile>& files :
       {std::vector<CycleFile>{File(0, 2, 3), File(1, 6, 7)},
        std::vector<CycleFile>{
            File(0, 2, 3), File(0, 6, 7),
            CycleFile{.rank = 1, .first_step = std::nullopt, .last_step = std::nullopt}},
        std::vector<CycleFile>{File(0, 2, 5), File(0, 4, 7)}}) {
    absl::StatusOr<CycleChoice> choice = ChooseProfilerCycle(files, 0);
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_TRUE(choice->cycles.found.empty());
    EXPECT_EQ(choice->keep, std::vector<bool>(files.size(), true));
  }
  EXPECT_TRUE(ChooseProfilerCycle({File(0, 2, 3)}, 1).ok());
  EXPECT_EQ(ChooseProfilerCycle({File(0, 2, 3)}, 2).status().message(),
            "--cycle 2: the traces hold one profiler cycle");
}

TEST(ProfilerCyclesTest, LongListsNameTheNewestCycles) {
  std::vector<ProfilerCycle> cycles;
  for (int32_t n = 1; n <= 7; ++n) {
    cycles.push_back(
        {.number = n, .first_step = 10 * n, .last_step = 10 * n, .files = 1, .complete = true});
  }
  EXPECT_EQ(ListProfilerCycles(cycles),
            "3 (step 30, 1 file), 4 (step 40, 1 file), 5 (step 50, 1 file), 6 (step 60, 1 file), "
            "7 (step 70, 1 file) and 2 earlier");
}

// A rank's Kineto file holding ProfilerStep#first..#last, one op in each.
std::string KinetoSteps(int32_t rank, int64_t first, int64_t last) {
  std::string events;
  for (int64_t step = first; step <= last; ++step) {
    const int64_t ts = 100 * step;
    absl::StrAppend(&events, events.empty() ? "" : ",",
                    R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)", step,
                    R"(","pid":1,"tid":1,"ts":)", ts, R"(,"dur":50},)",
                    R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":)", ts + 10,
                    R"(,"dur":20})");
  }
  return absl::StrCat(R"({"distributedInfo":{"rank":)", rank, R"(,"world_size":2},"traceEvents":[)",
                      events, "]}");
}

// tensorboard_trace_handler's names: "<host>_<pid>.<time_ns>.pt.trace.json", no rank in them.
TEST(ProfilerCyclesTest, TheLoaderReadsOneCycleAndNotesTheOthers) {
  TempDir dir;
  dir.Write("h_11.100.pt.trace.json", KinetoSteps(0, 2, 3));
  dir.Write("h_12.101.pt.trace.json", KinetoSteps(1, 2, 3));
  const std::string newest0 = dir.Write("h_11.200.pt.trace.json", KinetoSteps(0, 6, 7));
  const std::string newest1 = dir.Write("h_12.201.pt.trace.json", KinetoSteps(1, 6, 7));
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, {});
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 2u);
  EXPECT_EQ(trace->ranks[0].source_path, newest0);
  EXPECT_EQ(trace->ranks[1].source_path, newest1);
  EXPECT_EQ(trace->profiler_cycles.chosen, 2);
  ASSERT_EQ(trace->skipped_files.size(), 2u);
  EXPECT_EQ(trace->skipped_files[0].other_profiler_cycle, 1);
  EXPECT_EQ(trace->skipped_files[0].reason, "of profiler cycle 1, not the one read (--cycle)");

  LoadOptions first;
  first.profiler_cycle = 1;
  trace = LoadTrace({dir.path()}, first);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->ranks[0].source_path, dir.path() + "/h_11.100.pt.trace.json");
  EXPECT_TRUE(trace->profiler_cycles.by_flag);
}

}  // namespace
}  // namespace bubblescope
