// Inputs built to hang, exhaust or overflow bubblescope, run through the real executable with a
// time limit: each must end in bounded time with a report or a one-line error, never a hang, a
// crash or garbage figures. docs/input-errors.md states the promises.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::CommandResult;
using ::bubblescope::testing::Gzip;
using ::bubblescope::testing::RunCommand;
using ::bubblescope::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

// Far more than the work takes (about a second, ten under the sanitizers), far less than a
// quadratic pass over the inputs below would.
constexpr int kTimeLimitSeconds = 60;

CommandResult Analyze(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BUBBLESCOPE_BINARY, "analyze"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, kTimeLimitSeconds);
}

// `count` launches, kernels and ac2g flow pairs, all at one timestamp: linking each flow must not
// rescan every interval that shares its timestamp (200,000 flows took minutes that way).
TEST(HostileInputTest, ManyFlowsAtOneTimestampAreLinkedInOnePass) {
  constexpr int kCount = 200'000;
  std::string json = R"({"traceEvents":[)";
  json.reserve(static_cast<size_t>(kCount) * 400);
  for (int i = 1; i <= kCount; ++i) {
    const std::string id = std::to_string(i);
    if (i > 1) json += ',';
    json += R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,)"
            R"("dur":1,"args":{"correlation":)" +
            id + R"(}},)";
    json += R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":0,"dur":1,)"
            R"("args":{"device":0,"stream":7}},)";
    json += R"({"ph":"s","id":)" + id + R"(,"pid":1,"tid":1,"ts":0,"cat":"ac2g","name":"ac2g"},)";
    json += R"({"ph":"f","id":)" + id +
            R"(,"pid":0,"tid":7,"ts":0,"cat":"ac2g","name":"ac2g","bp":"e"})";
  }
  json += "]}";
  TempDir dir;
  const std::string path = dir.Write("flows.json.gz", Gzip(json, 1));
  const CommandResult run = Analyze({path, "--format", "json"});
  ASSERT_FALSE(run.signaled) << "killed after " << kTimeLimitSeconds << " s or by a signal";
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("\"kernels\": 200000"));
  EXPECT_THAT(run.out, Not(HasSubstr("unmatched_flow")));  // every flow found its pair
}

// The documented maximum of a million layers per stage: the rebalance search stays bounded
// (trying every move took half an hour).
TEST(HostileInputTest, AMillionLayersPerStageAreSearchedInBoundedTime) {
  const CommandResult run =
      Analyze({std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/sim_1f1b_imbalanced_p4_m8",
               "--layers-per-stage", "1000000,1000000,1000000,1000000"});
  ASSERT_FALSE(run.signaled) << "killed after " << kTimeLimitSeconds << " s or by a signal";
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("from stage 2 (rank 2) to stage 0 (rank 0)"));
}

// A kernel 146 years from the rest (just inside the model's time range) stretches the last
// iteration's window to 4.6e18 ns: summed over four ranks that exceeds int64. The figures must
// stay bounded and sane (the old sums wrapped: a bubble of 0 from a window of years) and the
// sanitizers must see no overflow.
TEST(HostileInputTest, TimesFarApartDoNotOverflowTheFigures) {
  TempDir dir;
  const std::string set = dir.path() + "/set";
  ASSERT_EQ(RunCommand({BUBBLESCOPE_BINARY, "simulate", "-o", set, "-p", "4", "-m", "2", "-k", "2",
                        "--format", "old"})
                .exit_status,
            0);
  const std::string rank3 = set + "/rank3.pt.trace.json";
  std::string json = testing::ReadFile(rank3);
  const std::string events = "\"traceEvents\": [\n";
  const size_t at = json.find(events);
  ASSERT_NE(at, std::string::npos);
  json.insert(at + events.size(),
              R"({"ph": "X", "cat": "kernel", "name": "far", "pid": 0, "tid": 7, )"
              R"("ts": 4600000000000000, "dur": 1, "args": {"device": 0, "stream": 7}}, )");
  testing::WriteFile(rank3, json);
  const CommandResult run = Analyze({set, "--format", "json"});
  ASSERT_FALSE(run.signaled);
  ASSERT_EQ(run.exit_status, 0) << run.err;
  // Rank 3 sits idle nearly all of the stretched window, so nearly all of it is bubble.
  const std::string key = "\n      \"bubble_fraction\": ";
  const size_t figure = run.out.find(key);
  ASSERT_NE(figure, std::string::npos) << run.out;
  const double bubble = std::stod(run.out.substr(figure + key.size(), 20));
  EXPECT_GT(bubble, 0.99);
  EXPECT_LE(bubble, 1.0);
}

// Streams that never end and gzip data that inflates far beyond its size stop at the reading
// budget with a one-line error naming the file and byte offset, exit 2: no memory is exhausted.
TEST(HostileInputTest, EndlessOrExplodingInputStopsAtTheReadingBudget) {
  CommandResult run = Analyze({"--max-file-mb", "16", "/dev/zero"});
  ASSERT_FALSE(run.signaled);
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err,
            "bubblescope: /dev/zero: byte 16777216: more than 16 MiB of text, the reading "
            "budget per file (--max-file-mb sets it)\n");
  TempDir dir;
  const std::string bomb = dir.Write("bomb.json.gz", Gzip(std::string(size_t{64} << 20, ' '), 9));
  run = Analyze({"--max-file-mb", "8", bomb});
  ASSERT_FALSE(run.signaled);
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr(bomb + ": byte "));
  EXPECT_THAT(run.err, HasSubstr("more than 8 MiB of text"));
}

// Without --max-file-mb the budget follows the memory the process may use: under a 1.5 GB
// address-space limit /dev/zero ends in the same error, where it used to end in std::bad_alloc
// and SIGABRT. (The sanitizers reserve far more address space than that, so not under them.)
TEST(HostileInputTest, TheAutomaticBudgetFollowsTheProcessMemoryLimit) {
#ifdef BUBBLESCOPE_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#else
  const CommandResult run = RunCommand(
      {"/bin/sh", "-c",
       std::string("ulimit -v 1500000 && exec '") + BUBBLESCOPE_BINARY + "' analyze /dev/zero"},
      kTimeLimitSeconds);
  ASSERT_FALSE(run.signaled) << run.err;
  EXPECT_EQ(run.exit_status, 2) << run.err;
  EXPECT_THAT(run.err, HasSubstr("the reading budget per file"));
#endif
}

CommandResult Bubblescope(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BUBBLESCOPE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, kTimeLimitSeconds);
}

// The issue's base4: a 4-stage 1F1B job of 8 microbatches, in the newer Kineto layout (times
// relative to a baseTimeNanoseconds written after the events), and its JSON report.
struct Base4 {
  TempDir dir;
  std::string set = dir.path() + "/base4";
  std::string report = dir.path() + "/base4.json";
  Base4() {
    EXPECT_EQ(Bubblescope({"simulate", "-o", set, "--schedule", "1f1b", "--stages", "4",
                           "--microbatches", "8"})
                  .exit_status,
              0);
    EXPECT_EQ(Bubblescope({"analyze", set, "--format", "json", "-o", report}).exit_status, 0);
  }
};

// A report whose figures are missing is refused by gate and diff naming the member (exit 2):
// read as 0, a pipeline without its bubble or latency passed `--max-bubble 0.3 --max-latency
// 10ms`, and diff showed -39.2 points.
TEST(HostileInputTest, AReportWithoutItsFiguresIsRefusedNotReadAsZero) {
  Base4 base;
  for (const std::string& pipeline :
       {std::string(R"({"ranks": [0, 1, 2, 3]})"),
        std::string(R"({"ranks": [0, 1, 2, 3], "bubble_fraction": 0.1, "latency_us": {}})"),
        std::string("{}")}) {
    const std::string report = base.dir.Write(
        "hollow.json", R"({"schema": "bubblescope.analyze/1", "pipelines": [)" + pipeline + "]}");
    const CommandResult gate = Bubblescope({"gate", "--baseline", base.report, report,
                                            "--max-bubble", "0.3", "--max-latency", "10ms"});
    EXPECT_EQ(gate.exit_status, 2) << pipeline << gate.out;
    EXPECT_THAT(gate.err, HasSubstr(report + ": byte "));
    EXPECT_THAT(gate.err, HasSubstr("pipelines[0]"));
    EXPECT_THAT(gate.err, HasSubstr("a missing figure is never read as 0"));
    const CommandResult diff = Bubblescope({"diff", base.report, report});
    EXPECT_EQ(diff.exit_status, 2) << pipeline << diff.out;
    EXPECT_THAT(diff.err, HasSubstr("has no \""));
  }
}

// A rank cut before its baseTimeNanoseconds (Kineto writes it last) has an unknown clock: it
// is left out of the job, said so, never put on the others' clock as if its base were 0 (an
// iteration of 1.7e12 ms, "cost_us": 6.7e15); and diff, gate and whatif accept the report
// analyze writes, directly and from its digests.
TEST(HostileInputTest, ARankCutBeforeItsClockBaseIsKeptOffTheOthersClock) {
  Base4 base;
  const std::string rank1 = base.set + "/rank1.pt.trace.json";
  const std::string json = testing::ReadFile(rank1);
  testing::WriteFile(rank1, json.substr(0, json.size() / 2));
  const std::string report = base.dir.path() + "/cut.json";
  const CommandResult run = Bubblescope({"analyze", base.set, "--format", "json", "-o", report});
  ASSERT_FALSE(run.signaled);
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("baseTimeNanoseconds"));
  const std::string written = testing::ReadFile(report);
  EXPECT_THAT(written, Not(HasSubstr("e+15")));
  EXPECT_THAT(written, Not(HasSubstr("e+12")));
  EXPECT_EQ(Bubblescope({"diff", base.report, report}).exit_status, 0);
  EXPECT_NE(
      Bubblescope({"gate", "--baseline", base.report, report, "--max-bubble", "1"}).exit_status, 2);
  const CommandResult whatif = Bubblescope({"whatif", report});
  EXPECT_THAT(whatif.err, Not(HasSubstr("outside")));

  // The digests are of the ranks the job can place: the cut rank is passed over there too.
  const std::string digests = base.dir.path() + "/digests";
  const CommandResult digest = Bubblescope({"digest", base.set, "-o", digests});
  ASSERT_EQ(digest.exit_status, 0) << digest.err;
  EXPECT_THAT(digest.err, HasSubstr("baseTimeNanoseconds"));
  EXPECT_FALSE(std::filesystem::exists(digests + "/rank1.bsdigest"));
  const CommandResult from_digests = Bubblescope({"analyze", digests, "--format", "json"});
  EXPECT_EQ(from_digests.exit_status, 0) << from_digests.err;
  EXPECT_THAT(from_digests.err, HasSubstr("INCOMPLETE JOB"));
  EXPECT_THAT(from_digests.out, Not(HasSubstr("e+15")));
}

// Two outputs naming one new file in different spellings are refused before anything is
// written, for every spelling: `-o ./r --html r` wrote one over the other.
TEST(HostileInputTest, TwoSpellingsOfOneOutputAreRefusedBeforeAnythingIsWritten) {
  Base4 base;
  const std::string work = base.dir.path() + "/work";
  std::filesystem::create_directories(work + "/sub");
  for (const auto& [first, second] : std::vector<std::pair<std::string, std::string>>{
           {"./r", "r"}, {"sub/../r", "r"}, {".//r", work + "/r"}}) {
    const CommandResult run =
        RunCommand({"/bin/sh", "-c",
                    "cd '" + work + "' && exec '" + BUBBLESCOPE_BINARY + "' analyze '" + base.set +
                        "' -o '" + first + "' --html '" + second + "'"},
                   kTimeLimitSeconds);
    EXPECT_EQ(run.exit_status, 2) << first << " " << second << run.err;
    EXPECT_THAT(run.err, HasSubstr("--html names the same file as -o"));
    EXPECT_FALSE(std::filesystem::exists(work + "/r"));
  }
}

// A digest set is written into a directory apart from its inputs: `digest DIR -o DIR` (or a
// symlink to DIR) put the digests beside the traces, and `analyze DIR` then read both.
TEST(HostileInputTest, DigestsIntoTheInputDirectoryAreRefused) {
  Base4 base;
  const std::string link = base.dir.path() + "/link";
  std::filesystem::create_directory_symlink(base.set, link);
  for (const std::string& output : {base.set, link, base.set + "/."}) {
    const CommandResult run = Bubblescope({"digest", base.set, "-o", output});
    EXPECT_EQ(run.exit_status, 2) << output << run.err;
    EXPECT_THAT(run.err, HasSubstr("it is the input directory"));
  }
  const CommandResult file_input =
      Bubblescope({"digest", base.set + "/rank0.pt.trace.json", "-o", link});
  EXPECT_EQ(file_input.exit_status, 2);
  EXPECT_THAT(file_input.err, HasSubstr("it holds the input"));
  size_t digests = 0;
  for (const auto& entry : std::filesystem::directory_iterator(base.set)) {
    digests += entry.path().extension() == ".bsdigest" ? 1 : 0;
  }
  EXPECT_EQ(digests, 0u);
  EXPECT_EQ(Bubblescope({"analyze", base.set}).exit_status, 0);
}

}  // namespace
}  // namespace bubblescope
