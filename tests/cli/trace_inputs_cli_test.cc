// End to end: what `analyze` makes of a folder as torch and users leave it: several profiler
// cycles of one job (tests/data/torch_cycles, real torch.profiler output), a folder of trace
// sets, and an analyze --perfetto file saved beside the ranks.
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

CommandResult Bubblescope(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BUBBLESCOPE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

std::string Cycles() { return std::string(BUBBLESCOPE_SOURCE_DIR) + "/tests/data/torch_cycles"; }

// Rank 0 is pid 21207's files, rank 1 pid 21208's; each pid's files sort by time, cycle by cycle.
constexpr char kRank0Cycle1[] = "vm_21207.1795717940448357563.pt.trace.json.gz";
constexpr char kRank0Cycle3[] = "vm_21207.1795717940734170890.pt.trace.json.gz";

TEST(TraceInputsCliTest, TheNewestCompleteCycleIsAnalysedAndSaidSo) {
  const CommandResult run = Bubblescope({"analyze", Cycles()});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("note: the traces hold 3 profiler cycles: 1 (steps 2-3, 2 files), "
                                 "2 (steps 6-7, 2 files), 3 (steps 10-11, 2 files); reading cycle "
                                 "3 (the newest complete one), leaving out 4 files; --cycle N "
                                 "reads another\n"));
  EXPECT_THAT(run.out, HasSubstr("profiler cycle 3 of 3 (steps 10-11), the newest complete one; "
                                 "--cycle N reads another\n"));
  EXPECT_THAT(run.out, HasSubstr(kRank0Cycle3));
}

// docs/getting-traces.md's one-cycle block run as written with a loop one step short of the
// window (recipe.py): torch closes the window with an empty ProfilerStep#4 on every rank, which
// is no iteration; the report says so in words and measures the two recorded steps.
TEST(TraceInputsCliTest, AnEmptyClosingStepIsNoIteration) {
  const CommandResult run =
      Bubblescope({"analyze", std::string(BUBBLESCOPE_SOURCE_DIR) +
                                  "/sample_traces/torch_cpu/recipe_1f1b_p4_m8_short_loop"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("iterations: 2 complete of 2 (from profiler_steps)"));
  EXPECT_THAT(run.out, HasSubstr("4 empty ProfilerStep ranges (nothing recorded in them: torch "
                                 "closing a profiler window the loop left early), not iterations"));
}

// docs/getting-traces.md's repeat=0 block run as written over 11 steps (recipe.py): torch closes
// the third cycle's window with an empty ProfilerStep#11, so that cycle is cut short, and the
// newest complete one is the second; the empty step is counted on the ranks read.
TEST(TraceInputsCliTest, ACycleEndingInAnEmptyStepIsCutShort) {
  const std::string recipe =
      std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/recipe_cycles_1f1b_p2_m4";
  const CommandResult run = Bubblescope({"analyze", recipe});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("note: the traces hold 3 profiler cycles: 1 (steps 2-3, 2 files), "
                                 "2 (steps 6-7, 2 files), 3 (step 10, 2 files, incomplete); "
                                 "reading cycle 2 (the newest complete one)"));
  EXPECT_THAT(run.out, HasSubstr("profiler cycle 2 of 3 (steps 6-7), the newest complete one"));
  EXPECT_THAT(run.out, Not(HasSubstr("p50 0.000 ms")));
  EXPECT_THAT(run.out, HasSubstr("iterations: 2 complete of 2"));
  const CommandResult third = Bubblescope({"analyze", recipe, "--cycle", "3", "--format", "json"});
  ASSERT_EQ(third.exit_status, 0) << third.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(third.out);
  EXPECT_EQ(int64_t(doc["pipelines"].at(0)["complete_iterations"]), 1);
}

TEST(TraceInputsCliTest, CycleNPicksOneAndTheJsonSaysWhich) {
  const CommandResult run = Bubblescope({"analyze", Cycles(), "--cycle", "1", "--format", "json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(run.out);
  EXPECT_EQ(int64_t(doc["profiler_cycle"]["number"]), 1);
  EXPECT_EQ(std::string_view(doc["profiler_cycle"]["chosen_by"]), "flag");
  simdjson::dom::array cycles = doc["profiler_cycle"]["cycles"];
  ASSERT_EQ(cycles.size(), 3u);
  EXPECT_EQ(int64_t(cycles.at(2)["first_step"]), 10);
  EXPECT_EQ(int64_t(cycles.at(2)["last_step"]), 11);
  EXPECT_TRUE(bool(cycles.at(2)["complete"]));
  EXPECT_THAT(std::string(std::string_view(doc["ranks"].at(0)["source"])), HasSubstr(kRank0Cycle1));

  const CommandResult past = Bubblescope({"analyze", Cycles(), "--cycle", "4"});
  EXPECT_EQ(past.exit_status, 2);
  EXPECT_EQ(past.err,
            "bubblescope: --cycle 4: the traces hold 3 profiler cycles: 1 (steps 2-3, "
            "2 files), 2 (steps 6-7, 2 files), 3 (steps 10-11, 2 files)\n");
}

TEST(TraceInputsCliTest, OneCyclesFilesAloneHaveNoCycleMember) {
  TempDir dir;
  fs::copy_file(Cycles() + "/" + kRank0Cycle3, fs::path(dir.path()) / kRank0Cycle3);
  const CommandResult run = Bubblescope({"analyze", dir.path(), "--format", "json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("\"profiler_cycle\": null"));
}

TEST(TraceInputsCliTest, AFolderOfTraceSetsNamesThem) {
  const std::string sets =
      std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/gpu_h100_collector";
  const CommandResult run = Bubblescope({"analyze", sets});
  EXPECT_EQ(run.exit_status, 2);
  // The sets first, the provenance.json beside them (no trace) after.
  EXPECT_THAT(run.err, StartsWith("bubblescope: " + sets +
                                  " holds 4 trace sets in subfolders (demo_one_stage, "
                                  "nccl_self, profiler_inside, training_loop); name one: "
                                  "bubblescope analyze " +
                                  sets +
                                  "/demo_one_stage; beside "
                                  "them, no trace: " +
                                  sets + "/provenance.json: "));
}

// The overlay written into the folder it was made from: the next analyze reads the same ranks.
TEST(TraceInputsCliTest, APerfettoFileSavedInTheTraceFolderIsPassedOver) {
  TempDir dir;
  const fs::path traces = fs::path(dir.path()) / "traces";
  fs::create_directories(traces);
  for (const char* name : {kRank0Cycle3, "vm_21208.1795717940743718200.pt.trace.json.gz"}) {
    fs::copy_file(Cycles() + "/" + name, traces / name);
  }
  const std::string merged = (traces / "pipeline_perfetto.json").string();
  const CommandResult first =
      Bubblescope({"analyze", traces.string(), "--perfetto", merged, "-o", "/dev/null"});
  ASSERT_EQ(first.exit_status, 0) << first.err;
  const CommandResult again = Bubblescope({"analyze", traces.string(), "--format", "json"});
  ASSERT_EQ(again.exit_status, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("note: skipped " + merged +
                                   ": a merged trace that analyze "
                                   "--perfetto wrote (bubblescope_merged); its ranks are the "
                                   "folder's other files\n"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(again.out);
  EXPECT_EQ(simdjson::dom::array(doc["ranks"]).size(), 2u);
}

// The truth.json `simulate` writes beside its ranks is passed over without a note; any other
// JSON without traceEvents in the folder still gets one, and a truth.json elsewhere is named.
TEST(TraceInputsCliTest, TheSimulatorsTruthIsPassedOverQuietly) {
  TempDir dir;
  const fs::path traces = fs::path(dir.path()) / "traces";
  const CommandResult simulated = Bubblescope({"simulate", "-o", traces.string()});
  ASSERT_EQ(simulated.exit_status, 0) << simulated.err;
  ASSERT_TRUE(fs::exists(traces / "truth.json"));
  const CommandResult plain = Bubblescope({"analyze", traces.string(), "-o", "/dev/null"});
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  EXPECT_EQ(plain.err, "");

  const std::string config = (traces / "run_config.json").string();
  WriteFile(config, "{\"lr\": 0.1}");
  const CommandResult other = Bubblescope({"analyze", traces.string(), "-o", "/dev/null"});
  ASSERT_EQ(other.exit_status, 0) << other.err;
  EXPECT_EQ(other.err, "note: skipped " + config + ": JSON without traceEvents, not a trace\n");
}

// diff and gate read a traces side as analyze does: --cycle picks the cycle of both sides,
// --rank goes to the side whose files it names, and one naming neither is an error.
TEST(TraceInputsCliTest, DiffAndGateTakeAnalyzesSelectionFlags) {
  const CommandResult newest = Bubblescope({"diff", Cycles(), Cycles(), "--format", "json"});
  ASSERT_EQ(newest.exit_status, 0) << newest.err;
  EXPECT_THAT(newest.err, HasSubstr("reading cycle 3 (the newest complete one)"));
  const CommandResult first = Bubblescope({"diff", Cycles(), Cycles(), "--cycle", "1"});
  ASSERT_EQ(first.exit_status, 0) << first.err;
  EXPECT_THAT(first.err, HasSubstr("reading cycle 1 (--cycle)"));

  const CommandResult renamed =
      Bubblescope({"diff", Cycles(), Cycles(), "--rank", std::string(kRank0Cycle3) + "=0"});
  EXPECT_EQ(renamed.exit_status, 0) << renamed.err;
  const CommandResult stray = Bubblescope({"gate", "--baseline", Cycles(), Cycles(), "--max-bubble",
                                           "1", "--rank", "/nowhere/rank9.json=9"});
  EXPECT_EQ(stray.exit_status, 2);
  EXPECT_THAT(stray.err, HasSubstr("bubblescope: --rank /nowhere/rank9.json=9: names no trace "
                                   "file of either side\n"));
}

// The torch CPU traces hold no memory samples: a gate on memory alone skips every check, and
// says it checked nothing rather than passing.
TEST(TraceInputsCliTest, AGateThatCheckedNothingExitsTwo) {
  const CommandResult run =
      Bubblescope({"gate", "--baseline", Cycles(), Cycles(), "--max-memory", "1GiB"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.out, HasSubstr("bubblescope gate: NOTHING CHECKED: 0 of 2 checks failed (2 "
                                 "skipped)"));
  EXPECT_THAT(run.err, HasSubstr("bubblescope: gate: nothing was checked: all 2 checks were "
                                 "skipped (the current run has no memory samples)\n"));
}

}  // namespace
}  // namespace bubblescope::testing
