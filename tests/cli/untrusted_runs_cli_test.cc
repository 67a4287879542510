// The promises of docs/input-errors.md against runs built to break them (issue 25), through the
// real executable: a job without a complete iteration never reads as a 0% bubble or passes the
// gate; every file read stays within its reading budget; memory running out is said as such;
// outputs are checked together and written whole; figures out of range are refused.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compare_sets.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;
using ::bubblescope::testing::AnalyzeToJson;
using ::bubblescope::testing::CommandResult;
using ::bubblescope::testing::ReadFile;
using ::bubblescope::testing::RunCommand;
using ::bubblescope::testing::SimulateRun;
using ::bubblescope::testing::TempDir;
using ::bubblescope::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::Not;

CommandResult Bubblescope(std::vector<std::string> args) {
  args.insert(args.begin(), BUBBLESCOPE_BINARY);
  return RunCommand(args, 120);
}

#ifndef BUBBLESCOPE_SANITIZED
// `command` (bubblescope's arguments, shell-quoted by the caller) under an address-space limit
// of `kilobytes`; ASan reserves far more address space than any such limit, so sanitized builds
// leave these tests out.
CommandResult RunLimited(int kilobytes, const std::string& command) {
  return RunCommand({"/bin/bash", "-c",
                     "ulimit -v " + std::to_string(kilobytes) + " && exec '" +
                         std::string(BUBBLESCOPE_BINARY) + "' " + command},
                    120);
}
#endif

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

class UntrustedRunsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    base_ = new std::string(SimulateRun(*dir_, "base", {"--iterations", "3"}));
    report_ = new std::string(AnalyzeToJson(*base_));
    // The same job with rank 3's steps numbered 10, 11, 12: no step is on every rank.
    renumbered_ = new std::string(dir_->path() + "/renumbered");
    fs::create_directory(*renumbered_);
    for (int rank = 0; rank < 4; ++rank) {
      const std::string name = "/rank" + std::to_string(rank) + ".pt.trace.json";
      std::string text = ReadFile(*base_ + name);
      if (rank == 3) text = Replaced(text, "ProfilerStep#", "ProfilerStep#1");
      WriteFile(*renumbered_ + name, text);
    }
  }
  static void TearDownTestSuite() {
    delete renumbered_;
    delete report_;
    delete base_;
    delete dir_;
  }

  static TempDir* dir_;
  static std::string* base_;
  static std::string* report_;
  static std::string* renumbered_;
};

TempDir* UntrustedRunsTest::dir_ = nullptr;
std::string* UntrustedRunsTest::base_ = nullptr;
std::string* UntrustedRunsTest::report_ = nullptr;
std::string* UntrustedRunsTest::renumbered_ = nullptr;

// The text report with the first screen's wrapped lines joined again (a continuation starts
// with two spaces past its line's own indent).
std::string Unwrapped(std::string text) {
  for (size_t at = text.find("\n  "); at != std::string::npos; at = text.find("\n  ", at)) {
    size_t end = at + 1;
    while (end < text.size() && text[end] == ' ') ++end;
    text.replace(at, end - at, " ");
  }
  return text;
}

// Item 1: no complete iteration is a stated condition, never a 0% bubble; --strict refuses it.
TEST_F(UntrustedRunsTest, NoCompleteIterationIsStatedNotAZeroBubble) {
  CommandResult run = Bubblescope({"analyze", *renumbered_});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(Unwrapped(run.out),
              HasSubstr("diagnosis: pipeline 0 (p=4 m=8 v=1 1f1b): no complete "
                        "iteration to measure: 6 iterations (from profiler_steps) found, "
                        "none on every pipeline rank"));
  EXPECT_THAT(run.out, HasSubstr("no bubble or latency figure"));
  EXPECT_THAT(run.out, Not(HasSubstr("bubble 0.0%")));
  EXPECT_THAT(run.err, HasSubstr("warning: pipeline 0: no complete iteration"));

  run = Bubblescope({"analyze", *renumbered_, "--strict"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("bubblescope: --strict: pipeline 0: no complete iteration"));
  EXPECT_EQ(run.out, "");

  run = Bubblescope({"analyze", *renumbered_, "--format", "json"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("\"no_complete_iteration\": \"6 iterations (from "
                                 "profiler_steps) found, none on every pipeline rank"));
  // No figure is null, as the text says, not a 0 bubble and 0 latency.
  EXPECT_THAT(run.out, HasSubstr("\"bubble_fraction\": null"));
  EXPECT_THAT(run.out, HasSubstr("\"latency_us\": null"));
  EXPECT_THAT(run.out, HasSubstr("\"excess_bubble_fraction\": null"));
  run = Bubblescope({"analyze", *base_, "--format", "json"});
  EXPECT_THAT(run.out, HasSubstr("\"no_complete_iteration\": null"));
}

// Item 1: the gate passed a job whose bubble is 39% as a perfect pipeline. A figure it cannot
// compute is an error, exit 2, in the text, Markdown and JUnit verdicts alike.
TEST_F(UntrustedRunsTest, TheGateRefusesToJudgeAJobWithoutACompleteIteration) {
  const std::string markdown = dir_->path() + "/gate.md";
  const std::string junit = dir_->path() + "/gate.xml";
  const CommandResult run =
      Bubblescope({"gate", "--baseline", *report_, *renumbered_, "--max-bubble", "0.5",
                   "--max-bubble-increase", "0.02", "--markdown", markdown, "--junit", junit});
  EXPECT_EQ(run.exit_status, 2) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("bubblescope gate: ERROR: 0 of 2 checks failed; 2 cannot be "
                                 "judged"));
  EXPECT_THAT(run.out, HasSubstr("no bubble can be computed: no complete iteration in the "
                                 "current run"));
  EXPECT_THAT(run.err, HasSubstr("bubblescope: gate: 2 checks cannot be judged"));
  EXPECT_THAT(ReadFile(markdown), HasSubstr("## bubblescope gate: **error**"));
  EXPECT_THAT(ReadFile(junit), HasSubstr("errors=\"2\""));
  EXPECT_THAT(ReadFile(junit), HasSubstr("<error type=\"no_figure\""));
}

// Item 1: an iteration marker that matches nothing, in analyze, whatif and gate.
TEST_F(UntrustedRunsTest, AMarkerMatchingNothingLeavesNoIterationAnywhere) {
  const std::string why = "the iteration marker matches no annotation on the pipeline's ranks";
  CommandResult run = Bubblescope({"analyze", *base_, "--iteration-marker", "^train_stpe$"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(Unwrapped(run.out), HasSubstr("no complete iteration to measure: " + why));
  run = Bubblescope({"whatif", *base_, "--iteration-marker", "^train_stpe$"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("no prediction: no complete iteration: " + why));
  EXPECT_THAT(run.out, Not(HasSubstr("iteration 0.000 ms")));
  run = Bubblescope({"gate", "--baseline", *report_, *base_, "--iteration-marker", "^train_stpe$",
                     "--max-latency", "10s"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.out, HasSubstr("no latency can be computed"));
}

// Item 1: a rank without any step range is named.
TEST_F(UntrustedRunsTest, ARankWithoutStepRangesIsNamed) {
  const std::string set = dir_->path() + "/stepless";
  fs::create_directory(set);
  for (int rank = 0; rank < 4; ++rank) {
    const std::string name = "/rank" + std::to_string(rank) + ".pt.trace.json";
    std::string text = ReadFile(*base_ + name);
    if (rank == 2) text = Replaced(text, "ProfilerStep#", "SomethingElse#");
    WriteFile(set + name, text);
  }
  const CommandResult run = Bubblescope({"analyze", set});
  EXPECT_THAT(run.out, HasSubstr("none on every pipeline rank: rank 2 has none of them"));
}

// Item 2: a gate config is read within a budget of its own (a config is a few lines), and a
// directory is an error, not an empty config.
TEST_F(UntrustedRunsTest, AGateConfigIsReadWithinItsBudget) {
  CommandResult run =
      Bubblescope({"gate", "--baseline", *report_, *report_, "--config", "/dev/zero"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err,
            "bubblescope: --config: /dev/zero: byte 1048576: more than 1 MiB of text, "
            "the reading budget per file\n");
  run = Bubblescope({"gate", "--baseline", *report_, *report_, "--config", dir_->path()});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "bubblescope: --config: " + dir_->path() + ": Is a directory\n");
}

// Item 2: a report given to diff that never ends (a stream of one endless string) stops at the
// reading budget instead of aborting on std::bad_alloc.
TEST_F(UntrustedRunsTest, AnEndlessReportStopsAtTheReadingBudget) {
#ifdef BUBBLESCOPE_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#else
  const CommandResult run =
      RunLimited(1'500'000,
                 "diff <(printf '{\"schema\":\"bubblescope.analyze/1\",\"x\":\"'; "
                 "tr '\\0' a < /dev/zero) '" +
                     *report_ + "'");
  ASSERT_FALSE(run.signaled) << run.err;
  EXPECT_EQ(run.exit_status, 2) << run.err;
  EXPECT_THAT(run.err, HasSubstr("the reading budget per file"));
#endif
}

// Items 3 and 4: 10,000 tiny rank files fit in 300 MB (each rank held a 64 KiB name block: they
// took 700 MB and aborted), and memory running out while a valid report or trace is read is
// "out of memory", exit 2, never broken JSON.
TEST_F(UntrustedRunsTest, MemoryIsInProportionAndItsExhaustionIsSaidAsSuch) {
#ifdef BUBBLESCOPE_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#else
  TempDir many;
  for (int rank = 0; rank < 10'000; ++rank) {
    many.Write("rank" + std::to_string(rank) + ".json",
               R"({"distributedInfo": {"rank": )" + std::to_string(rank) +
                   R"(}, "traceEvents": [{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,)"
                   R"("ts":1,"dur":2,"args":{"device":0,"stream":7}}]})");
  }
  CommandResult run = RunLimited(300'000, "analyze -j1 '" + many.path() + "' --format json");
  ASSERT_FALSE(run.signaled) << run.err;
  EXPECT_EQ(run.exit_status, 0) << run.err;
  // Under less, memory runs out wherever it happens to: never an abort (a rank moved into the
  // trace once allocated in a noexcept move, and aborted at 40, 56, 64 and 84-92 MB), always
  // one line, and past the readers one that says what to do.
  bool advised = false;
  for (int limit = 36'000; limit <= 96'000; limit += 4'000) {
    run = RunLimited(limit, "analyze -j1 '" + many.path() + "' --format json -o /dev/null");
    ASSERT_FALSE(run.signaled) << limit << " kB: " << run.err;
    if (run.exit_status == 0) continue;
    EXPECT_EQ(run.exit_status, 2) << limit << " kB: " << run.err;
    EXPECT_THAT(run.err, ::testing::StartsWith("bubblescope: ")) << limit << " kB";
    EXPECT_THAT(run.err, HasSubstr("out of memory")) << limit << " kB: " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << limit << " kB: " << run.err;
    advised = advised || run.err.find("analyze --mpi") != std::string::npos;
  }
  EXPECT_TRUE(advised) << "no run ran out of memory past the readers";

  // A valid 30 MB report under 150 MB: its parser index does not fit, and the automatic budget
  // says so before reading it, naming what fits: (150,000 kB - 32 MiB) / 9 = 12.7 MiB. (With the
  // budget the limit / 3, 48 MiB, the file was read and memory ran out.)
  std::string report = ReadFile(*report_);
  report.erase(report.find_last_of('}'));
  report += ", \"padding\": [";
  for (int i = 0; i < 15'000'000; ++i) report += "0,";
  report += "0]}";
  const std::string big = many.Write("big.json", report);
  report.clear();
  run = RunLimited(150'000, "diff '" + big + "' '" + *report_ + "'");
  ASSERT_FALSE(run.signaled) << run.err;
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, ::testing::MatchesRegex(
                           "bubblescope: .*big.json: byte [0-9]+: more than 12 MiB of text, the "
                           "reading budget per file\n"));
#endif
}

// Item 5: all outputs of one command are checked together before anything is written.
TEST_F(UntrustedRunsTest, OutputsNamingOneFileAreRefusedBeforeAnyIsWritten) {
  TempDir out;
  const std::string both = out.path() + "/g.out";
  CommandResult run = Bubblescope({"gate", "--baseline", *report_, *report_, "--max-bubble", "0.5",
                                   "--markdown", both, "--junit", both});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "bubblescope: --junit names the same file as --markdown (" + both +
                         "): one would replace the other\n");
  EXPECT_FALSE(fs::exists(both));

  const std::string page = out.Write("a", "kept");
  fs::create_symlink(page, out.path() + "/link-to-a");
  run = Bubblescope({"analyze", *base_, "--html", page, "--perfetto", out.path() + "/link-to-a"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("--perfetto names the same file as --html"));
  EXPECT_EQ(ReadFile(page), "kept");
}

// Item 5: the longest name a file system takes (255 bytes) is written: the temporary file's
// name is shortened to fit, and nothing is left beside it.
TEST_F(UntrustedRunsTest, AReportWithTheLongestFileNameIsWritten) {
  TempDir out;
  for (size_t length : {size_t{244}, size_t{255}}) {
    const std::string path = out.path() + "/" + std::string(length, 'r');
    const CommandResult run = Bubblescope({"analyze", *base_, "-o", path});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    EXPECT_THAT(ReadFile(path), HasSubstr("pipeline 0"));
    fs::remove(path);
  }
  EXPECT_TRUE(fs::is_empty(out.path()));
}

// Item 7: as a shell's `>`: a user's -o never replaces a file that user may not write. Run as
// nobody through setpriv where the suite runs as root.
TEST_F(UntrustedRunsTest, AFileTheUserMayNotWriteIsNotReplaced) {
  if (::geteuid() != 0 || !fs::exists("/usr/bin/setpriv")) {
    GTEST_SKIP() << "needs root and setpriv to run as another user";
  }
  TempDir out;
  fs::permissions(out.path(), fs::perms::all);
  const std::string theirs = out.Write("theirs.txt", "theirs");
  fs::permissions(theirs, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const CommandResult run =
      RunCommand({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                  BUBBLESCOPE_BINARY, "analyze", *base_ + "/rank0.pt.trace.json", "-o", theirs},
                 120);
  EXPECT_EQ(run.exit_status, 1) << run.err;
  EXPECT_EQ(run.err, "bubblescope: -o: cannot write " + theirs +
                         ": you may not write it "
                         "(Permission denied)\n");
  EXPECT_EQ(ReadFile(theirs), "theirs");
}

// Item 6: figures out of range in a report are refused, not compared, and what diff writes
// its own reader reads.
TEST_F(UntrustedRunsTest, ReportFiguresOutOfRangeAreRefused) {
  TempDir out;
  const std::string report = ReadFile(*report_);
  const size_t bubble = report.find("\"bubble_fraction\": ");
  ASSERT_NE(bubble, std::string::npos);
  const size_t value = bubble + std::string("\"bubble_fraction\": ").size();
  const std::string negative = out.Write(
      "negative.json", report.substr(0, value) + "-7.5" + report.substr(report.find(',', value)));
  CommandResult run =
      Bubblescope({"gate", "--baseline", *report_, negative, "--max-bubble", "0.3"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "bubblescope: " + negative + ": byte " + std::to_string(value) +
                         ": \"bubble_fraction\" is -7.5, outside 0 to 1\n");

  const size_t window = report.find("\"window_us\": ");
  ASSERT_NE(window, std::string::npos);
  const size_t window_value = window + std::string("\"window_us\": ").size();
  const std::string huge =
      out.Write("huge.json", report.substr(0, window_value) + "1.2e20" +
                                 report.substr(report.find(',', window_value)));
  run = Bubblescope({"diff", huge, huge, "--format", "json"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("\"window_us\" is 1.2e20, outside 0 to 4.6e15 us"));  // as written

  run = Bubblescope({"analyze", *base_, "--slow-link-threshold", "nan"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("'nan' is not a number from 0 to 1"));
}

// Item 6: a [memory] sample of 2^63 - 1 bytes is no sample; what-if predictions stay in range.
TEST_F(UntrustedRunsTest, AnAbsurdMemorySampleIsCountedAndPredictionsStayInRange) {
  TempDir out;
  const std::string set = out.path() + "/set";
  fs::create_directory(set);
  for (int rank = 0; rank < 4; ++rank) {
    const std::string name = "/rank" + std::to_string(rank) + ".pt.trace.json";
    std::string text = ReadFile(*base_ + name);
    if (rank == 1) {
      const size_t at = text.find("\"Total Allocated\": ");
      ASSERT_NE(at, std::string::npos);
      const size_t value = at + std::string("\"Total Allocated\": ").size();
      text = text.substr(0, value) + "9223372036854775807" + text.substr(text.find(',', value));
    }
    WriteFile(set + name, text);
  }
  const CommandResult run = Bubblescope({"whatif", set, "--format", "json"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("1 [memory] event without usable byte counts"));
  EXPECT_THAT(run.out, Not(HasSubstr("-922337203685477")));
}

// Item 7: eight `simulate --force` runs into one folder at once leave one whole set.
TEST_F(UntrustedRunsTest, ConcurrentSimulationsIntoOneFolderLeaveOneWholeSet) {
  TempDir out;
  const std::string folder = out.path() + "/set";
  std::string script;
  for (int i = 0; i < 8; ++i) {
    script += "'" + std::string(BUBBLESCOPE_BINARY) + "' simulate -o '" + folder + "' -p " +
              std::to_string(2 + i % 3) + " -m " + std::to_string(4 + i) +
              " -k 1 --force >/dev/null 2>&1 & ";
  }
  script += "wait";
  const CommandResult run = RunCommand({"/bin/sh", "-c", script}, 120);
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const std::string truth = ReadFile(folder + "/truth.json");
  const size_t at = truth.find("\"stages\": ");
  ASSERT_NE(at, std::string::npos);
  const int stages = std::stoi(truth.substr(at + 10));
  int rank_files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.path().filename().string().starts_with("rank")) ++rank_files;
  }
  EXPECT_EQ(rank_files, stages);
  const CommandResult analyzed = Bubblescope({"analyze", folder, "--strict"});
  EXPECT_EQ(analyzed.exit_status, 0) << analyzed.err;
}

}  // namespace
}  // namespace bubblescope
