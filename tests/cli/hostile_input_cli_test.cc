// Inputs built to hang, exhaust or overflow bubblescope, run through the real executable with a
// time limit: each must end in bounded time with a report or a one-line error, never a hang, a
// crash or garbage figures. docs/input-errors.md states the promises.
#include <string>
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
            R"("dur":1,"args":{"correlation":)" + id + R"(}},)";
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
  const CommandResult run =
      RunCommand({"/bin/sh", "-c",
                  std::string("ulimit -v 1500000 && exec '") + BUBBLESCOPE_BINARY +
                      "' analyze /dev/zero"},
                 kTimeLimitSeconds);
  ASSERT_FALSE(run.signaled) << run.err;
  EXPECT_EQ(run.exit_status, 2) << run.err;
  EXPECT_THAT(run.err, HasSubstr("the reading budget per file"));
#endif
}

}  // namespace
}  // namespace bubblescope
