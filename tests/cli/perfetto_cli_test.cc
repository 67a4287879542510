// End to end: `bubblescope analyze --perfetto FILE` with the real binary. The merged trace is
// written beside the report, analyses back to the same figures, is never written over an input
// or the report, and a damaged or re-merged one fails with one line.
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

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kSet = std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/sim_1f1b_p4_m8";

// The first pipeline's bubble fraction in an analyze JSON report.
double BubbleFraction(const std::string& report_path) {
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  EXPECT_EQ(parser.load(report_path).get(report), simdjson::SUCCESS);
  double fraction = -1;
  EXPECT_EQ(report["pipelines"].at(0)["bubble_fraction"].get(fraction), simdjson::SUCCESS);
  return fraction;
}

TEST(PerfettoCliTest, WritesAMergedTraceThatAnalysesToTheSameFigures) {
  TempDir dir;
  const std::string merged = dir.path() + "/job.perfetto.json";
  const std::string report = dir.path() + "/report.json";
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", kSet, "--format", "json", "-o",
                                  report, "--perfetto", merged});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const std::string back = dir.path() + "/back.json";
  run = RunCommand({BUBBLESCOPE_BINARY, "analyze", merged, "--format", "json", "-o", back});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  // The set's truth.json gives 0.390541364369686; both runs measure exactly that.
  EXPECT_EQ(BubbleFraction(report), 0.390541364369686);
  EXPECT_EQ(BubbleFraction(back), BubbleFraction(report));
  EXPECT_THAT(ReadFile(merged), StartsWith("{\"bubblescope_merged\":{\"version\":1,"));
}

TEST(PerfettoCliTest, NeverWritesOverAnInputOrTheReport) {
  TempDir dir;
  const std::string input = dir.Write("set/rank0.pt.trace.json.gz",
                                      ReadFile(kSet + "/rank0.pt.trace.json.gz"));
  dir.Write("set/rank1.pt.trace.json.gz", ReadFile(kSet + "/rank1.pt.trace.json.gz"));
  const std::string before = ReadFile(input);
  CommandResult run =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", dir.path() + "/set", "--perfetto", input});
  EXPECT_EQ(run.exit_status, 1);
  EXPECT_THAT(run.err, HasSubstr("bubblescope: --perfetto: cannot write " + input +
                                 ": it is the input "));
  EXPECT_EQ(ReadFile(input), before);

  // Naming the -o or --html file is a usage error, found before anything is read or written.
  for (const char* flag : {"-o", "--html"}) {
    const std::string report = dir.path() + "/report.out";
    run = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir.path() + "/set", flag, report,
                      "--perfetto", report});
    EXPECT_EQ(run.exit_status, 2);
    EXPECT_EQ(run.err, "bubblescope: --perfetto names the same file as " + std::string(flag) +
                           " (" + report + "): one would replace the other\n");
    EXPECT_FALSE(std::filesystem::exists(report));
  }
}

TEST(PerfettoCliTest, ADamagedMergedTraceIsOneLineWithItsByteAndExitTwo) {
  TempDir dir;
  const std::string merged = dir.path() + "/job.perfetto.json";
  ASSERT_EQ(RunCommand({BUBBLESCOPE_BINARY, "analyze", kSet, "--perfetto", merged}).exit_status,
            0);
  std::string text = ReadFile(merged);
  const size_t version = text.find("\"version\":1");
  text.replace(version, 11, "\"version\":7");
  WriteFile(merged, text);
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", merged});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "bubblescope: " + merged + ": byte " + std::to_string(version + 10) +
                         ": bubblescope_merged: version 7 is not one this build reads (1)\n");
}

TEST(PerfettoCliTest, AMergedTraceIsNotMergedAgain) {
  TempDir dir;
  const std::string merged = dir.path() + "/job.perfetto.json";
  ASSERT_EQ(RunCommand({BUBBLESCOPE_BINARY, "analyze", kSet, "--perfetto", merged}).exit_status,
            0);
  CommandResult run = RunCommand(
      {BUBBLESCOPE_BINARY, "analyze", merged, "--perfetto", dir.path() + "/again.json"});
  EXPECT_EQ(run.exit_status, 1);
  EXPECT_EQ(run.err, "bubblescope: --perfetto: " + merged +
                         ": a merged trace already; write the overlay from the per-rank "
                         "traces\n");
}

TEST(PerfettoCliTest, HelpNamesTheFlag) {
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", "--help"});
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_THAT(run.out, HasSubstr("--perfetto FILE"));
  EXPECT_THAT(run.out, HasSubstr("ui.perfetto.dev"));
}

}  // namespace
}  // namespace bubblescope::testing
