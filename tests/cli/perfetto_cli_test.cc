// End to end: `bubblescope analyze --perfetto FILE` with the real binary. The merged trace is
// written beside the report, analyses back to the same figures, is never written over an input
// or the report, and a damaged or re-merged one fails with one line; a .gz name compresses it,
// and --perfetto-pipelines / --perfetto-ranks keep it to the ranks chosen.
#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
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

// The names in `dir`, sorted.
std::vector<std::string> DirectoryEntries(const std::string& dir) {
  std::vector<std::string> names;
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

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
  const std::string input =
      dir.Write("set/rank0.pt.trace.json.gz", ReadFile(kSet + "/rank0.pt.trace.json.gz"));
  dir.Write("set/rank1.pt.trace.json.gz", ReadFile(kSet + "/rank1.pt.trace.json.gz"));
  const std::string before = ReadFile(input);
  CommandResult run =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", dir.path() + "/set", "--perfetto", input});
  EXPECT_EQ(run.exit_status, 1);
  EXPECT_THAT(run.err,
              HasSubstr("bubblescope: --perfetto: cannot write " + input + ": it is the input "));
  EXPECT_EQ(ReadFile(input), before);

  // Naming the -o or --html file is a usage error, found before anything is read or written.
  for (const char* flag : {"-o", "--html"}) {
    const std::string report = dir.path() + "/report.out";
    run = RunCommand(
        {BUBBLESCOPE_BINARY, "analyze", dir.path() + "/set", flag, report, "--perfetto", report});
    EXPECT_EQ(run.exit_status, 2);
    EXPECT_EQ(run.err, "bubblescope: --perfetto names the same file as " + std::string(flag) +
                           " (" + report + "): one would replace the other\n");
    EXPECT_FALSE(std::filesystem::exists(report));
  }
}

TEST(PerfettoCliTest, ADamagedMergedTraceIsOneLineWithItsByteAndExitTwo) {
  TempDir dir;
  const std::string merged = dir.path() + "/job.perfetto.json";
  ASSERT_EQ(RunCommand({BUBBLESCOPE_BINARY, "analyze", kSet, "--perfetto", merged}).exit_status, 0);
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
  ASSERT_EQ(RunCommand({BUBBLESCOPE_BINARY, "analyze", kSet, "--perfetto", merged}).exit_status, 0);
  CommandResult run =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", merged, "--perfetto", dir.path() + "/again.json"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "bubblescope: --perfetto: " + merged +
                         ": a merged trace already; write the overlay from the per-rank "
                         "traces\n");
  // Nothing of the refused trace is left: neither the file nor its temporary or scratch files.
  EXPECT_EQ(DirectoryEntries(dir.path()), std::vector<std::string>{"job.perfetto.json"});
}

// A .gz name: the same merged trace as one gzip member, which bubblescope reads back too.
TEST(PerfettoCliTest, AGzNameWritesTheSameTraceCompressed) {
  TempDir dir;
  const std::string plain = dir.path() + "/job.json";
  const std::string gz = dir.path() + "/job.json.gz";
  ASSERT_EQ(RunCommand({BUBBLESCOPE_BINARY, "analyze", kSet, "--perfetto", plain}).exit_status, 0);
  ASSERT_EQ(RunCommand({BUBBLESCOPE_BINARY, "analyze", kSet, "--perfetto", gz}).exit_status, 0);
  const std::string compressed = ReadFile(gz);
  EXPECT_THAT(compressed, StartsWith("\x1f\x8b"));
  EXPECT_LT(compressed.size(), ReadFile(plain).size() / 4);
  EXPECT_TRUE(Gunzip(compressed) == ReadFile(plain));
  const std::string back = dir.path() + "/back.json";
  const CommandResult run =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", gz, "--format", "json", "-o", back});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(BubbleFraction(back), 0.390541364369686);  // the set's truth.json
  EXPECT_EQ(DirectoryEntries(dir.path()),
            (std::vector<std::string>{"back.json", "job.json", "job.json.gz"}));
}

// Two data-parallel copies of a 2-stage pipeline: pipeline 0 is ranks 0 and 2, pipeline 1 ranks
// 1 and 3.
const std::string kDpSet =
    std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/dp2_1f1b_p2_m4";

// The rank ids in a merged trace's layout, in order.
std::vector<int64_t> MergedRanks(const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element merged;
  EXPECT_EQ(parser.load(path).get(merged), simdjson::SUCCESS);
  std::vector<int64_t> ranks;
  for (simdjson::dom::element entry : merged["bubblescope_merged"]["ranks"].get_array()) {
    ranks.push_back(int64_t(entry["rank"]));
  }
  return ranks;
}

TEST(PerfettoCliTest, PipelinesAndRanksLimitTheTrace) {
  TempDir dir;
  const std::string merged = dir.path() + "/job.json";
  const std::vector<std::pair<std::vector<std::string>, std::vector<int64_t>>> cases = {
      {{}, {0, 1, 2, 3}},
      {{"--perfetto-pipelines", "1"}, {1, 3}},
      {{"--perfetto-ranks", "0-1,3"}, {0, 1, 3}},
      {{"--perfetto-pipelines", "0", "--perfetto-ranks", "2-3"}, {2}},
  };
  for (const auto& [flags, ranks] : cases) {
    std::vector<std::string> command = {BUBBLESCOPE_BINARY, "analyze", kDpSet, "--perfetto",
                                        merged};
    command.insert(command.end(), flags.begin(), flags.end());
    const CommandResult run = RunCommand(command);
    ASSERT_EQ(run.exit_status, 0) << run.err;
    EXPECT_EQ(MergedRanks(merged), ranks);
  }
}

// A choice the job lacks is a usage error found before anything is written: no report, no trace.
TEST(PerfettoCliTest, ChoicesTheJobLacksAreOneLineAndWriteNothing) {
  TempDir dir;
  const std::string merged = dir.path() + "/job.json";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--perfetto-pipelines", "0,2"}, "--perfetto-pipelines: no pipeline 2: the job has 2 (0-1)"},
      {{"--perfetto-ranks", "0-7"}, "--perfetto-ranks: no rank 4 in the job (its 4 ranks: 0-3)"},
      {{"--perfetto-pipelines", "1", "--perfetto-ranks", "0,2"},
       "--perfetto-pipelines and --perfetto-ranks: none of the chosen ranks is in a chosen "
       "pipeline: the merged trace would be empty"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> command = {BUBBLESCOPE_BINARY, "analyze", kDpSet, "--perfetto",
                                        merged};
    command.insert(command.end(), flags.begin(), flags.end());
    const CommandResult run = RunCommand(command);
    EXPECT_EQ(run.exit_status, 2);
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(run.err, "bubblescope: " + message + "\n");
  }
  EXPECT_EQ(DirectoryEntries(dir.path()), std::vector<std::string>{});
  // Bad syntax, and a limit without the trace it limits, are refused when the flags are read.
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {"--perfetto", merged, "--perfetto-ranks", "3-1"}, {"--perfetto-ranks", "1"}}) {
    std::vector<std::string> command = {BUBBLESCOPE_BINARY, "analyze", kDpSet};
    command.insert(command.end(), flags.begin(), flags.end());
    const CommandResult run = RunCommand(command);
    EXPECT_EQ(run.exit_status, 2);
    EXPECT_THAT(run.err,
                HasSubstr(flags.size() == 4 ? "--perfetto-ranks: '3-1': the range runs backwards"
                                            : "--perfetto-ranks requires --perfetto"));
  }
}

TEST(PerfettoCliTest, HelpNamesTheFlag) {
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", "--help"});
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_THAT(run.out, HasSubstr("--perfetto FILE"));
  EXPECT_THAT(run.out, HasSubstr("ui.perfetto.dev"));
  EXPECT_THAT(run.out, HasSubstr("--perfetto-pipelines LIST"));
  EXPECT_THAT(run.out, HasSubstr("--perfetto-ranks LIST"));
  EXPECT_THAT(run.out, HasSubstr("gzip-compressed when FILE ends in .gz"));
}

}  // namespace
}  // namespace bubblescope::testing
