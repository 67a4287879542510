// `bubblescope record` end to end: the real binary runs small shell jobs. The collector library
// is not exercised (a throwaway file stands in for it): what matters here is the environment the
// job gets, its exit status, signals, the listing of the files the job wrote, and that
// `bubblescope analyze DIR` reads the collector's file names with no extra flags.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "support/subprocess.h"
#include "support/test_files.h"

extern char** environ;

namespace bubblescope::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

size_t LineCount(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// NAME -> VALUE from NUL-separated "NAME=VALUE" entries (`env -0`).
std::map<std::string, std::string> ParseEnvironment(const std::string& text) {
  std::map<std::string, std::string> variables;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(start, end - start);
    size_t equals = entry.find('=');
    variables[entry.substr(0, equals)] =
        equals == std::string::npos ? "" : entry.substr(equals + 1);
    start = end + 1;
  }
  return variables;
}

// record's standard error after its first line, which says what is recorded (record_window.h;
// the default window here); a test failure when that line is not there.
std::string AfterWindowLine(const std::string& err) {
  const std::string prefix = "bubblescope: record: recording a bounded window (the default): ";
  EXPECT_THAT(err, StartsWith(prefix));
  const size_t end = err.find('\n');
  return end == std::string::npos ? "" : err.substr(end + 1);
}

// A kernel of `duration_us` on a device, in the older Kineto layout (absolute µs), without
// distributedInfo: the rank can only come from the file name.
std::string KernelTrace(int duration_us) {
  return R"({"schemaVersion":1,"traceEvents":[
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1000,"dur":)" +
         std::to_string(duration_us) + R"(,"args":{"device":0,"stream":7,"correlation":1}}
]})";
}

class RecordCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    collector_ = dir_.Write("fake_collector.so", "not a library");
    output_ = (fs::path(dir_.path()) / "out").string();
  }

  // `bubblescope record -o OUT --collector FAKE [extra...] -- command...`
  std::vector<std::string> RecordArgv(const std::vector<std::string>& command,
                                      const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> argv = {BUBBLESCOPE_BINARY, "record",  "-o", output_,
                                     "--collector",      collector_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
  CommandResult Record(const std::vector<std::string>& command,
                       const std::vector<std::string>& extra = {}) const {
    return RunCommand(RecordArgv(command, extra));
  }
  std::string Path(const std::string& name) const {
    return (fs::path(dir_.path()) / name).string();
  }

  TempDir dir_;
  std::string collector_;
  std::string output_;
};

TEST_F(RecordCliTest, JobSeesExactlyTheInjectedVariables) {
  CommandResult run = Record({"env", "-0"}, {"--kinds", "nvtx,kernel", "--flush-ms", "250"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  std::map<std::string, std::string> expected;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text = *entry;
    size_t equals = text.find('=');
    expected[text.substr(0, equals)] = text.substr(equals + 1);
  }
  expected["CUDA_INJECTION64_PATH"] = collector_;
  expected["NCCL_PROFILER_PLUGIN"] = collector_;
  expected["BUBBLESCOPE_OUTPUT_DIR"] = output_;
  expected["BUBBLESCOPE_KINDS"] = "kernel,nvtx";
  expected["BUBBLESCOPE_FLUSH_MS"] = "250";
  expected["BUBBLESCOPE_START"] = "steps:+2:+6";  // the default window and its caps
  expected["BUBBLESCOPE_LIMIT"] = "256:0";
  std::map<std::string, std::string> got = ParseEnvironment(run.out);
  // A new run id: the UTC date and time, then 4 random hex digits.
  EXPECT_THAT(got["BUBBLESCOPE_RUN_ID"], MatchesRegex("20[0-9]{6}-[0-9]{6}-[0-9a-f]{4}"));
  expected["BUBBLESCOPE_RUN_ID"] = got["BUBBLESCOPE_RUN_ID"];
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(fs::is_directory(output_));
}

// A chosen window reaches the job as the collector's variables and is said before the job runs.
TEST_F(RecordCliTest, TheChosenWindowIsSaidAndPassedOn) {
  CommandResult run = Record({"sh", "-c", "echo \"$BUBBLESCOPE_START|${BUBBLESCOPE_LIMIT-unset}\""},
                             {"--steps", "3:4", "--max-mb", "100"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "steps:3:4|100:0\n");
  EXPECT_THAT(run.err, StartsWith("bubblescope: record: recording training steps 3 to 4 (NVTX "
                                  "ranges ProfilerStep#3 to #4); at most 100 MiB of trace per "
                                  "process\n"));
  run = Record({"sh", "-c", "echo \"${BUBBLESCOPE_START-unset}|${BUBBLESCOPE_LIMIT-unset}\""},
               {"--whole-job"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "unset|unset\n");
  EXPECT_THAT(run.err, StartsWith("bubblescope: record: recording the whole job, without a cap "
                                  "(--whole-job)\n"));
  run = Record({"true"}, {"--start-after", "5", "--profiler-api"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err,
            "bubblescope: record: --steps, --start-after, --profiler-api and "
            "--whole-job each choose the window: give one\n");
}

// --live: the job (and what it starts) gets BUBBLESCOPE_FLUSH_ON_STEP=1 beside the window's
// variables, and record says how to follow the run; without it the job gets no such variable.
TEST_F(RecordCliTest, LiveFlushesAtEachStepAndSaysHowToWatch) {
  const std::vector<std::string> job = {
      "sh", "-c",
      "sh -c 'echo \"${BUBBLESCOPE_FLUSH_ON_STEP-unset}|$BUBBLESCOPE_START\"' & wait $!"};
  CommandResult run = Record(job, {"--live"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "1|steps:+2:+6\n");
  EXPECT_THAT(run.err, HasSubstr("\nbubblescope: record: live: each process writes its trace as "
                                 "each training step begins; follow it with: bubblescope watch " +
                                 output_ + "\n"));
  run = Record(job);
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "unset|steps:+2:+6\n");
  EXPECT_THAT(run.err, Not(HasSubstr("live")));
}

TEST_F(RecordCliTest, OptionsAfterTheCommandAreTheJobs) {
  CommandResult run =
      RunCommand({BUBBLESCOPE_BINARY, "record", "-o", output_, "--collector", collector_, "sh",
                  "-c", "printf '%s,' \"$@\"", "sh", "-o", "--kinds", "--"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "-o,--kinds,--,");
}

TEST_F(RecordCliTest, GrandchildrenInheritTheVariables) {
  // `&` makes the shell fork: printenv runs as a grandchild of record.
  CommandResult run =
      Record({"sh", "-c",
              "printenv CUDA_INJECTION64_PATH NCCL_PROFILER_PLUGIN BUBBLESCOPE_OUTPUT_DIR "
              "BUBBLESCOPE_KINDS BUBBLESCOPE_FLUSH_MS & wait $!"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, collector_ + "\n" + collector_ + "\n" + output_ +
                         "\nkernel,memcpy,memset,memory,nvtx,runtime,driver,nccl\n1000\n");
}

TEST_F(RecordCliTest, ExitStatusIsTheJobs) {
  CommandResult run = Record({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(run.exit_status, 3);
  EXPECT_FALSE(run.signaled);
  EXPECT_EQ(run.out, "out\n");
  EXPECT_THAT(AfterWindowLine(run.err), StartsWith("err\n"));
}

TEST_F(RecordCliTest, JobKilledBySignalIs128PlusN) {
  CommandResult run = Record({"sh", "-c", "kill -KILL $$"});
  EXPECT_FALSE(run.signaled);  // record itself exits normally
  EXPECT_EQ(run.exit_status, 128 + 9);
}

TEST_F(RecordCliTest, MissingCommandIs127WithAMessage) {
  CommandResult run = Record({"bubblescope-no-such-command", "--flag"});
  EXPECT_EQ(run.exit_status, 127);
  EXPECT_EQ(AfterWindowLine(run.err),
            "bubblescope: record: bubblescope-no-such-command: command not found\n");
}

TEST_F(RecordCliTest, BadOptionsAreOneLineErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{BUBBLESCOPE_BINARY, "record", "--collector", collector_, "--kinds", "kernel,gpu", "--",
        "true"},
       "bubblescope: record: --kinds: 'gpu' is not one of"},
      {{BUBBLESCOPE_BINARY, "record", "--collector", collector_, "--flush-ms", "0", "--", "true"},
       "bubblescope: record: --flush-ms: '0' is not"},
      {{BUBBLESCOPE_BINARY, "record", "--collector", Path("missing.so"), "--", "true"},
       "bubblescope: record: --collector: '" + Path("missing.so") + "' is not a file"},
      {{BUBBLESCOPE_BINARY, "record", "--collector", collector_},
       "bubblescope: record: no COMMAND to run"},
      {{BUBBLESCOPE_BINARY, "record", "-o", collector_, "--collector", collector_, "--", "true"},
       "bubblescope: record: cannot create " + collector_},
  };
  for (const auto& [argv, message] : cases) {
    CommandResult run = RunCommand(argv);
    EXPECT_EQ(run.exit_status, 2) << message;
    EXPECT_THAT(run.err, StartsWith(message));
    EXPECT_EQ(LineCount(run.err), 1u) << run.err;
    EXPECT_EQ(run.out, "");
  }
}

// The default library is looked up beside the executable, so run a copy of it.
TEST_F(RecordCliTest, DefaultCollectorBesideTheExecutableOrInLib) {
  fs::create_directories(Path("prefix/bin"));
  const std::string executable = Path("prefix/bin/bubblescope");
  std::error_code error;
  fs::create_hard_link(BUBBLESCOPE_BINARY, executable, error);
  if (error) fs::copy_file(BUBBLESCOPE_BINARY, executable);
  CommandResult missing = RunCommand({executable, "record", "-o", output_, "--", "true"});
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_THAT(missing.err, StartsWith("bubblescope: record: collector library not found"));
  EXPECT_EQ(LineCount(missing.err), 1u);
  const std::string library = dir_.Write("prefix/lib/libbubblescope_collector.so", "elf");
  CommandResult found =
      RunCommand({executable, "record", "-o", output_, "--", "printenv", "CUDA_INJECTION64_PATH"});
  EXPECT_EQ(found.exit_status, 0) << found.err;
  EXPECT_EQ(found.out, library + "\n");
}

TEST_F(RecordCliTest, ListsTheFilesThisRunWroteAndMissingRanks) {
  fs::create_directories(output_);
  WriteFile(output_ + "/bubblescope-rank5-world8-old-1.json", "from an earlier run");
  // 3000 bytes = 2.9 KiB; 2 bytes; ranks 1 and 3 of 4 write nothing.
  CommandResult run = Record({"sh", "-c",
                              "cd \"$BUBBLESCOPE_OUTPUT_DIR\" && head -c 3000 /dev/zero > "
                              "bubblescope-rank0-world4-node-a-12.json && printf xy > "
                              "bubblescope-rank2-world4-node-b-13.json && echo hi > notes.txt"},
                             {"--run-id", "r1"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(AfterWindowLine(run.err),
            "bubblescope: record: 2 trace files of run r1 in " + output_ +
                ":\n"
                "  bubblescope-rank0-world4-node-a-12.json  2.9 KiB\n"
                "  bubblescope-rank2-world4-node-b-13.json  2 B\n"
                "bubblescope: record: warning: 2 of 4 ranks wrote no trace: ranks 1, 3\n"
                "bubblescope: record: analyze with: bubblescope analyze " +
                output_ + "\n");
}

TEST_F(RecordCliTest, LongListsOfMissingRanksAreCut) {
  CommandResult run =
      Record({"sh", "-c", ": > \"$BUBBLESCOPE_OUTPUT_DIR\"/bubblescope-rank0-world20-h-1.json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  // Ranks 1..19 are missing; the first 16 are named.
  EXPECT_THAT(run.err, HasSubstr("warning: 19 of 20 ranks wrote no trace: ranks 1, 2, 3, 4, 5, 6, "
                                 "7, 8, 9, 10, 11, 12, 13, 14, 15, 16, ...\n"));
}

TEST_F(RecordCliTest, WarnsWhenNothingWasRecorded) {
  fs::create_directories(output_);
  WriteFile(output_ + "/bubblescope-rank0-world1-old-1.json", "from an earlier run");
  CommandResult run = Record({"true"});
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_THAT(run.err, HasSubstr("warning: no trace file written to " + output_));
  EXPECT_THAT(run.err, HasSubstr("no CUDA activity recorded: was the job using the GPU?"));
  EXPECT_THAT(run.err, Not(HasSubstr("old-1")));
}

TEST_F(RecordCliTest, AnalyzeReadsTheRecordedDirectoryWithoutFlags) {
  fs::create_directories(Path("src"));
  WriteFile(Path("src/bubblescope-rank0-world2-node-a-100.json"), KernelTrace(10));
  WriteFile(Path("src/bubblescope-rank1-world2-node-a-101.json"), KernelTrace(30));
  CommandResult record =
      Record({"sh", "-c", "cp \"$0\"/*.json \"$BUBBLESCOPE_OUTPUT_DIR\"", Path("src")});
  ASSERT_EQ(record.exit_status, 0) << record.err;
  EXPECT_THAT(record.err, Not(HasSubstr("warning")));
  CommandResult analyze = RunCommand({BUBBLESCOPE_BINARY, "analyze", output_, "--format", "json"});
  ASSERT_EQ(analyze.exit_status, 0) << analyze.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(analyze.out).get(doc), simdjson::SUCCESS);
  simdjson::dom::array ranks = doc["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  const double compute_us[] = {10.0, 30.0};
  for (size_t i = 0; i < 2; ++i) {
    simdjson::dom::element rank = ranks.at(i);
    EXPECT_EQ(int64_t(rank["rank"]), static_cast<int64_t>(i));
    EXPECT_THAT(std::string(std::string_view(rank["source"])),
                HasSubstr("bubblescope-rank" + std::to_string(i) + "-world2-"));
    EXPECT_DOUBLE_EQ(double(rank["compute_us"]), compute_us[i]);
  }
}

// A job that writes what the collector would for two ranks: files named with the run id and
// holding it in their process metadata, each rank with one kernel of `first_us` and `second_us`.
std::vector<std::string> TwoRankJob(int first_us, int second_us) {
  std::string script;
  for (int rank = 0; rank < 2; ++rank) {
    script +=
        "printf '{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"bubblescope_process\","
        "\"pid\":0,\"tid\":0,\"args\":{\"distributedInfo\":{\"rank\":" +
        std::to_string(rank) +
        ",\"world_size\":2},\"run_id\":\"%s\"}},{\"ph\":\"X\",\"cat\":\"kernel\","
        "\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":1000,\"dur\":" +
        std::to_string(rank == 0 ? first_us : second_us) +
        ",\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}}]}' "
        "\"$BUBBLESCOPE_RUN_ID\" > \"$BUBBLESCOPE_OUTPUT_DIR/bubblescope-$BUBBLESCOPE_RUN_ID-"
        "rank" +
        std::to_string(rank) + "-world2-h-$$.json\"; ";
  }
  return {"sh", "-c", script};
}

// The run id `record` reported ("... trace files of run ID in DIR:").
std::string ReportedRunId(const std::string& err) {
  const std::string marker = "trace files of run ";
  const size_t start = err.find(marker);
  if (start == std::string::npos) return "";
  const size_t begin = start + marker.size();
  return err.substr(begin, err.find(' ', begin) - begin);
}

std::vector<double> ComputeUs(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::vector<double> compute;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) return compute;
  for (simdjson::dom::element rank : simdjson::dom::array(doc["ranks"])) {
    compute.push_back(double(rank["compute_us"]));
  }
  return compute;
}

// The defect this guards against: a second record run into the same directory used to be
// analyzed together with the first, pairing one run's rank 0 with the other's rank 1.
// What the collector writes in a process where another profiler held CUPTI and no NCCL
// transfer took place: analyze names the holder and what was lost.
TEST_F(RecordCliTest, AnalyzeSaysWhenAnotherProfilerHeldCupti) {
  const std::string file = output_ + "/bubblescope-r1-rank0-world1-h-7.json";
  fs::create_directories(output_);
  WriteFile(file,
            "[\n{\"ph\":\"M\",\"name\":\"bubblescope_process\",\"pid\":7,\"tid\":0,\"args\":{"
            "\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"host\":\"h\",\"pid\":7,"
            "\"run_id\":\"r1\"}},\n{\"ph\":\"M\",\"name\":\"bubblescope_cupti_unavailable\","
            "\"pid\":7,\"tid\":0,\"args\":{\"held_by\":\"CUPTI for Nsight Systems\","
            "\"not_recorded\":\"kernel,runtime\",\"recorded\":\"nccl\"}}\n]\n");
  CommandResult analyze = RunCommand({BUBBLESCOPE_BINARY, "analyze", output_});
  EXPECT_EQ(analyze.exit_status, 2);
  EXPECT_EQ(analyze.err, "bubblescope: " + file +
                             ": byte 0: recorded while another profiler held CUPTI (CUPTI for "
                             "Nsight Systems): kernel,runtime not recorded, and no NCCL transfer "
                             "took place; record again without torch.profiler or Nsight Systems "
                             "in the job, or analyze that profiler's own trace\n");
}

TEST_F(RecordCliTest, TwoRunsInOneDirectoryAreNeverMixedSilently) {
  CommandResult first = Record(TwoRankJob(10, 30));
  ASSERT_EQ(first.exit_status, 0) << first.err;
  const std::string first_id = ReportedRunId(first.err);
  EXPECT_THAT(first.err, HasSubstr("analyze with: bubblescope analyze " + output_ + "\n"));
  CommandResult second = Record(TwoRankJob(50, 70));
  ASSERT_EQ(second.exit_status, 0) << second.err;
  const std::string second_id = ReportedRunId(second.err);
  ASSERT_FALSE(first_id.empty());
  ASSERT_NE(first_id, second_id);
  EXPECT_THAT(second.err, HasSubstr("2 trace files of run " + second_id));
  EXPECT_THAT(second.err, HasSubstr("analyze with: bubblescope analyze " + output_ + " --run " +
                                    second_id + "   (2 trace files of other runs there too)\n"));

  CommandResult mixed = RunCommand({BUBBLESCOPE_BINARY, "analyze", output_});
  EXPECT_EQ(mixed.exit_status, 2);
  const auto [newer, older] = std::minmax(first_id, second_id, std::greater<>());
  EXPECT_EQ(mixed.err, "bubblescope: the traces come from 2 different record runs: " + newer +
                           " (2 files), " + older +
                           " (2 files); analyze one with --run ID (a unique prefix will do), or "
                           "all together with --mix-runs\n");
  CommandResult chosen =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", output_, "--run", second_id, "--format", "json"});
  ASSERT_EQ(chosen.exit_status, 0) << chosen.err;
  EXPECT_THAT(ComputeUs(chosen.out), ElementsAre(50.0, 70.0));
  EXPECT_THAT(chosen.out, HasSubstr("\"record_run\": \"" + second_id + "\""));
  EXPECT_EQ(chosen.err, "note: left out 2 files of other record runs (" + first_id + ")\n");
  chosen =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", output_, "--run", first_id, "--format", "json"});
  ASSERT_EQ(chosen.exit_status, 0) << chosen.err;
  EXPECT_THAT(ComputeUs(chosen.out), ElementsAre(10.0, 30.0));
  // Asked to mix, the ranks of both runs meet, and clash.
  CommandResult together = RunCommand({BUBBLESCOPE_BINARY, "analyze", output_, "--mix-runs"});
  EXPECT_EQ(together.exit_status, 2);
  EXPECT_THAT(together.err, HasSubstr("rank 0 claimed by both"));
}

// A job over several nodes has one record per node: given the same --run-id, their traces form
// one run that `analyze DIR` reads without flags, and each record lists all of them.
TEST_F(RecordCliTest, NodesSharingARunIdMakeOneRun) {
  std::vector<std::string> node_a = TwoRankJob(10, 30);
  std::vector<std::string> node_b = node_a;
  // Node a writes rank 0's file, node b rank 1's: cut each script down to its half.
  const std::string script = node_a[2];
  const size_t split = script.find("; printf") + 2;
  node_a[2] = script.substr(0, split);
  node_b[2] = script.substr(split);
  ASSERT_EQ(Record(node_a, {"--run-id", "job4812"}).exit_status, 0);
  CommandResult second = Record(node_b, {"--run-id", "job4812"});
  ASSERT_EQ(second.exit_status, 0) << second.err;
  EXPECT_THAT(second.err, HasSubstr("2 trace files of run job4812 in "));
  EXPECT_THAT(second.err, HasSubstr("analyze with: bubblescope analyze " + output_ + "\n"));
  CommandResult analyze = RunCommand({BUBBLESCOPE_BINARY, "analyze", output_, "--format", "json"});
  ASSERT_EQ(analyze.exit_status, 0) << analyze.err;
  EXPECT_THAT(ComputeUs(analyze.out), ElementsAre(10.0, 30.0));
}

}  // namespace
}  // namespace bubblescope::testing
