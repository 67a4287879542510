// End-to-end tests of `bubblescope analyze`: the real binary on small trace files written here.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// Absolute µs timestamps (older torch layout). By hand: compute [1000,1100), comm [1200,1250),
// memcpy [1050,1150) => span 250 µs, busy [1000,1150) ∪ [1200,1250) = 200 µs, idle 50 µs.
std::string GpuTrace(int rank) {
  return R"({"schemaVersion":1,"distributedInfo":{"backend":"nccl","rank":)" +
         std::to_string(rank) + R"json(,"world_size":2},"traceEvents":[
{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":1000,"dur":100,
 "args":{"device":0,"stream":7,"correlation":11}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
 "pid":0,"tid":7,"ts":1200,"dur":50,"args":{"device":0,"stream":7,"correlation":12}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":8,
 "ts":1050,"dur":100,"args":{"device":0,"stream":8,"correlation":13,"bytes":4096}}
]})json";
}

// One good kernel and one with a negative duration.
constexpr char kNegativeDurationTrace[] = R"({"schemaVersion":1,
"distributedInfo":{"backend":"nccl","rank":0,"world_size":1},"traceEvents":[
{"ph":"X","cat":"kernel","name":"good","pid":0,"tid":7,"ts":1000,"dur":10,
 "args":{"device":0,"stream":7,"correlation":1}},
{"ph":"X","cat":"kernel","name":"bad","pid":0,"tid":7,"ts":2000,"dur":-5,
 "args":{"device":0,"stream":7,"correlation":2}}
]})";

// Bare array form cut off in the middle of its second event.
constexpr char kTruncatedTrace[] = R"([
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1000,"dur":10,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":20)";

// CPU only (no GPU activity). Thread 1: aten::mm [100,110) with aten::add [105,108) nested;
// thread 2: [0,5). The model thread is thread 1: one top-level op, span 10 µs.
constexpr char kCpuOnlyTrace[] = R"([
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":100,"dur":10},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":105,"dur":3},
{"ph":"X","cat":"cpu_op","name":"aten::zeros","pid":1,"tid":2,"ts":0,"dur":5}
])";

class AnalyzeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    traces_ = fs::path(dir_.path()) / "traces";
    fs::create_directories(traces_);
    WriteFile(traces_ / "rank0.json", GpuTrace(0));
    WriteFile(traces_ / "rank1.json", GpuTrace(1));
    WriteFile(fs::path(dir_.path()) / "negative.json", kNegativeDurationTrace);
    WriteFile(fs::path(dir_.path()) / "cut.json", kTruncatedTrace);
    WriteFile(fs::path(dir_.path()) / "cpu.json", kCpuOnlyTrace);
    WriteFile(fs::path(dir_.path()) / "not_a_trace.json", "hello, I am not JSON");
  }

  CommandResult Run(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {BUBBLESCOPE_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }
  std::string Path(const std::string& name) const {
    return (fs::path(dir_.path()) / name).string();
  }
  std::string Traces() const { return traces_.string(); }

  TempDir dir_;
  fs::path traces_;
};

size_t LineCount(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST_F(AnalyzeCliTest, JsonReportOfADirectoryOfRanks) {
  CommandResult run = Run({"analyze", Traces(), "--format", "json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(run.out).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["schema"]), "bubblescope.analyze/1");
  simdjson::dom::array ranks = doc["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  for (int64_t i = 0; i < 2; ++i) {
    simdjson::dom::element rank = ranks.at(static_cast<size_t>(i));
    EXPECT_EQ(int64_t(rank["rank"]), i);
    EXPECT_THAT(std::string(std::string_view(rank["source"])),
                HasSubstr("rank" + std::to_string(i) + ".json"));
    EXPECT_EQ(std::string_view(rank["timeline"]), "gpu");
    EXPECT_DOUBLE_EQ(double(rank["span_us"]), 250.0);
    EXPECT_DOUBLE_EQ(double(rank["compute_us"]), 100.0);
    EXPECT_DOUBLE_EQ(double(rank["comm_us"]), 50.0);
    EXPECT_DOUBLE_EQ(double(rank["memcpy_us"]), 100.0);
    EXPECT_DOUBLE_EQ(double(rank["idle_us"]), 50.0);
    EXPECT_EQ(int64_t(rank["kernels"]), 2);
    EXPECT_EQ(int64_t(rank["comm_ops"]), 1);
    EXPECT_EQ(int64_t(rank["memcpy_ops"]), 1);
    EXPECT_TRUE(rank["peak_allocated_bytes"].is_null());
  }
  EXPECT_EQ(uint64_t(doc["import_issues"]["error"]), 0u);
  EXPECT_EQ(uint64_t(doc["import_issues"]["warning"]), 0u);
}

TEST_F(AnalyzeCliTest, TextReportHasAHeaderAndOneRowPerRank) {
  CommandResult run = Run({"analyze", Traces()});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, StartsWith("bubblescope "));
  EXPECT_THAT(run.out, HasSubstr("analyze: 2 ranks (2 gpu, 0 cpu)"));
  // span 0.250 ms, compute 0.100, comm 0.050, memcpy 0.100, idle 0.050 = 20.0 %.
  EXPECT_THAT(run.out, HasSubstr("0.250  "));
  EXPECT_THAT(run.out, HasSubstr("20.0"));
  EXPECT_THAT(run.out, HasSubstr("rank0.json\n"));
  EXPECT_THAT(run.out, HasSubstr("rank1.json\n"));
  EXPECT_THAT(run.out, HasSubstr("import issues: none"));
}

TEST_F(AnalyzeCliTest, CpuOnlyTraceUsesTheModelThreadAndRankOverride) {
  CommandResult run = Run({"analyze", Path("cpu.json"), "--rank", Path("cpu.json") + "=5",
                           "--format", "json", "--jobs", "1"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(run.out).get(doc), simdjson::SUCCESS);
  simdjson::dom::element rank = simdjson::dom::array(doc["ranks"]).at(0);
  EXPECT_EQ(int64_t(rank["rank"]), 5);
  EXPECT_EQ(std::string_view(rank["timeline"]), "cpu");
  EXPECT_DOUBLE_EQ(double(rank["span_us"]), 10.0);
  EXPECT_DOUBLE_EQ(double(rank["compute_us"]), 10.0);
  EXPECT_EQ(int64_t(rank["kernels"]), 1);
}

TEST_F(AnalyzeCliTest, MissingFileIsOneLineAndExitTwo) {
  CommandResult run = Run({"analyze", Path("does_not_exist.json")});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err, StartsWith("bubblescope: "));
  EXPECT_THAT(run.err, HasSubstr("does_not_exist.json"));
  EXPECT_EQ(LineCount(run.err), 1u);
}

TEST_F(AnalyzeCliTest, UnreadableTraceIsOneLineAndExitTwo) {
  CommandResult run = Run({"analyze", Path("not_a_trace.json")});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err, StartsWith("bubblescope: "));
  EXPECT_THAT(run.err, HasSubstr("not_a_trace.json"));
  EXPECT_EQ(LineCount(run.err), 1u);
}

TEST_F(AnalyzeCliTest, StrictRejectsANegativeDurationAndPrintsNoReport) {
  CommandResult run = Run({"analyze", Path("negative.json"), "--strict"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err, StartsWith(Path("negative.json") + ": byte "));
  EXPECT_THAT(run.err, HasSubstr(": 1 event with a negative duration"));
  EXPECT_EQ(LineCount(run.err), 1u);
}

TEST_F(AnalyzeCliTest, WithoutStrictTheDamagedEventIsAWarningAndTheReportPrints) {
  CommandResult run = Run({"analyze", Path("negative.json"), "--format", "json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.err, StartsWith("warning: " + Path("negative.json") + ": byte "));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(run.out).get(doc), simdjson::SUCCESS);
  simdjson::dom::element rank = simdjson::dom::array(doc["ranks"]).at(0);
  EXPECT_EQ(uint64_t(rank["import"]["negative_duration"]["count"]), 1u);
  EXPECT_EQ(std::string_view(rank["import"]["negative_duration"]["severity"]), "error");
  EXPECT_EQ(int64_t(rank["kernels"]), 1);
  EXPECT_DOUBLE_EQ(double(rank["compute_us"]), 10.0);
}

TEST_F(AnalyzeCliTest, TruncatedFileWarnsButStillReports) {
  CommandResult run = Run({"analyze", Path("cut.json"), "--rank", Path("cut.json") + "=0"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.err, StartsWith("warning: " + Path("cut.json") + ": "));
  EXPECT_THAT(run.err, HasSubstr("cut short"));
  EXPECT_THAT(run.out, HasSubstr("truncated"));

  CommandResult strict =
      Run({"analyze", Path("cut.json"), "--rank", Path("cut.json") + "=0", "--strict"});
  EXPECT_EQ(strict.exit_status, 2);
  EXPECT_EQ(strict.out, "");
  EXPECT_THAT(strict.err, StartsWith(Path("cut.json") + ": byte "));
}

TEST_F(AnalyzeCliTest, OutputFileIsWrittenInsteadOfStdout) {
  CommandResult to_stdout = Run({"analyze", Traces(), "--format", "json"});
  ASSERT_EQ(to_stdout.exit_status, 0) << to_stdout.err;
  fs::path report = fs::path(dir_.path()) / "report.json";
  WriteFile(report, "old contents");
  CommandResult to_file = Run({"analyze", Traces(), "--format", "json", "-o", report.string()});
  ASSERT_EQ(to_file.exit_status, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(ReadFile(report), to_stdout.out);
  // No temporary file is left beside the report.
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_.path())) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr(".tmp.")));
  }
}

// Each file a run writes is named on stderr, in the order written, so a user finds what it
// left; --quiet leaves the lines out, and a device (-o /dev/null) is no file to name.
TEST_F(AnalyzeCliTest, EachFileWrittenIsNamedOnStderrUnlessQuiet) {
  const std::string report = Path("report.json");
  const std::string page = Path("report.html");
  const std::string merged = Path("merged.json");
  const std::vector<std::string> args = {"analyze", Traces(), "--format", "json",       "-o",
                                         report,    "--html", page,       "--perfetto", merged};
  const CommandResult told = Run(args);
  ASSERT_EQ(told.exit_status, 0) << told.err;
  EXPECT_EQ(told.err, "wrote " + page + " (the HTML report)\nwrote " + report +
                          " (the report)\nwrote " + merged + " (the Perfetto trace)\n");
  std::vector<std::string> quiet = args;
  quiet.push_back("--quiet");
  const CommandResult silent = Run(quiet);
  ASSERT_EQ(silent.exit_status, 0) << silent.err;
  EXPECT_EQ(silent.err, "");
  const CommandResult to_device = Run({"analyze", Traces(), "-o", "/dev/null"});
  ASSERT_EQ(to_device.exit_status, 0) << to_device.err;
  EXPECT_EQ(to_device.err, "");
}

TEST_F(AnalyzeCliTest, FailedRunLeavesAnExistingOutputFileUntouched) {
  fs::path report = fs::path(dir_.path()) / "report.txt";
  WriteFile(report, "old contents");
  EXPECT_EQ(Run({"analyze", Path("does_not_exist.json"), "-o", report.string()}).exit_status, 2);
  EXPECT_EQ(Run({"analyze", Path("negative.json"), "--strict", "-o", report.string()}).exit_status,
            2);
  EXPECT_EQ(ReadFile(report), "old contents");
}

TEST_F(AnalyzeCliTest, UnwritableOutputExitsOne) {
  std::string report = (fs::path(dir_.path()) / "no_such_dir" / "report.txt").string();
  CommandResult run = Run({"analyze", Traces(), "-o", report});
  EXPECT_EQ(run.exit_status, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err, StartsWith("bubblescope: cannot write " + report));
  EXPECT_FALSE(fs::exists(fs::path(dir_.path()) / "no_such_dir"));
}

// -o never replaces a trace the run reads, under any of its names; the trace stays as it was.
TEST_F(AnalyzeCliTest, TheReportIsNeverWrittenOverAnInput) {
  const std::string input = (traces_ / "rank0.json").string();
  const std::string before = ReadFile(input);
  const std::string link = Path("link_to_rank0.json");
  fs::create_symlink(input, link);
  for (const std::string& output : {input, link}) {
    SCOPED_TRACE(output);
    CommandResult run = Run({"analyze", input, (traces_ / "rank1.json").string(), "-o", output});
    EXPECT_EQ(run.exit_status, 1);
    EXPECT_THAT(run.err, HasSubstr("never overwritten"));
    EXPECT_EQ(ReadFile(input), before);
  }
  // A file passed over in a directory (truth.json beside the ranks) is protected too.
  WriteFile(traces_ / "truth.json", "{\"schema\": \"truth\"}");
  CommandResult run = Run({"analyze", Traces(), "-o", (traces_ / "truth.json").string()});
  EXPECT_EQ(run.exit_status, 1);
  EXPECT_EQ(ReadFile(traces_ / "truth.json"), "{\"schema\": \"truth\"}");
}

// -o into a FIFO writes the report into it; the FIFO is not replaced by a regular file. The
// read end is opened first (without blocking), so the report waits in the pipe until it is read.
TEST_F(AnalyzeCliTest, TheReportGoesThroughAFifo) {
  const fs::path fifo = fs::path(dir_.path()) / "report.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int read_end = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(read_end, 0);
  CommandResult run = Run({"analyze", Traces(), "--format", "json", "-o", fifo.string()});
  std::string received(1 << 16, '\0');
  const ssize_t got = ::read(read_end, received.data(), received.size());
  ::close(read_end);
  received.resize(got > 0 ? static_cast<size_t>(got) : 0);
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(received, HasSubstr("\"schema\": \"bubblescope.analyze/1\""));
  EXPECT_TRUE(fs::is_fifo(fifo));
}

// A reader that stops early (`analyze | head`) ends the run with a message and status 1, not a
// death by SIGPIPE. Here the pipe's read end is closed before bubblescope starts, so its first
// write fails for certain.
TEST_F(AnalyzeCliTest, AClosedStdoutIsAnErrorNotADeathBySignal) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ::close(pipe_fds[0]);
  const std::string err_path = Path("stderr.txt");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const std::string binary = BUBBLESCOPE_BINARY;
  const std::string verb = "analyze";
  const std::string traces = Traces();
  char* argv[] = {const_cast<char*>(binary.c_str()), const_cast<char*>(verb.c_str()),
                  const_cast<char*>(traces.c_str()), nullptr};
  pid_t child = 0;
  ASSERT_EQ(::posix_spawn(&child, binary.c_str(), &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_THAT(ReadFile(err_path), HasSubstr("cannot write the report to standard output"));
}

TEST_F(AnalyzeCliTest, UsageErrorsExitTwoWithAHelpHint) {
  const std::vector<std::vector<std::string>> bad_command_lines = {
      {},
      {"analyze"},
      {"frobnicate"},
      {"analyze", Traces(), "--format", "xml"},
      {"analyze", Traces(), "--jobs", "-1"},
      {"analyze", Traces(), "--jobs", "many"},
      {"analyze", Traces(), "--rank", "no_equals_sign"},
      {"analyze", Traces(), "--rank", "rank0.json=-3"},
      {"analyze", Traces(), "--rank", "rank0.json=1x"},
      {"analyze", Traces(), "--bogus"},
  };
  for (const std::vector<std::string>& args : bad_command_lines) {
    SCOPED_TRACE(args.empty() ? std::string("(no arguments)") : args.back());
    CommandResult run = Run(args);
    EXPECT_EQ(run.exit_status, 2);
    EXPECT_EQ(run.out, "");
    EXPECT_THAT(run.err, StartsWith("bubblescope: "));
    EXPECT_THAT(run.err, HasSubstr("--help"));
  }
}

// A typo of a command is answered with the command it is nearest to, not "a subcommand is
// required"; a word near none lists them all.
TEST_F(AnalyzeCliTest, AMistypedCommandIsAnsweredWithTheNearestOne) {
  const CommandResult typo = Run({"anlyze", Traces()});
  EXPECT_EQ(typo.exit_status, 2);
  EXPECT_EQ(typo.out, "");
  EXPECT_EQ(typo.err,
            "bubblescope: unknown command 'anlyze'; did you mean 'analyze'?\n"
            "Run 'bubblescope --help' for more information.\n");
  const CommandResult swapped = Run({"whatfi", Traces()});
  EXPECT_EQ(swapped.exit_status, 2);
  EXPECT_THAT(swapped.err, HasSubstr("did you mean 'whatif'?"));
  const CommandResult unknown = Run({"frobnicate"});
  EXPECT_EQ(unknown.exit_status, 2);
  EXPECT_THAT(unknown.err,
              StartsWith("bubblescope: unknown command 'frobnicate' (the commands: "
                         "analyze, whatif, diff, gate, simulate, record, digest, watch)\n"));
}

TEST_F(AnalyzeCliTest, VersionAndHelpExitZero) {
  CommandResult version = Run({"--version"});
  EXPECT_EQ(version.exit_status, 0);
  EXPECT_THAT(version.out, StartsWith("bubblescope "));

  CommandResult help = Run({"--help"});
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_THAT(help.out, HasSubstr("analyze"));

  CommandResult analyze_help = Run({"analyze", "--help"});
  EXPECT_EQ(analyze_help.exit_status, 0);
  EXPECT_THAT(analyze_help.out, HasSubstr("--strict"));
  EXPECT_THAT(analyze_help.out, HasSubstr("--rank"));
  EXPECT_THAT(analyze_help.out, HasSubstr("Examples:"));
  EXPECT_THAT(analyze_help.out, HasSubstr("Exit status:"));
  // Every input format is named, in the top-level help and in analyze's.
  for (const CommandResult* page : {&help, &analyze_help}) {
    for (const char* format : {".json.gz", ".sqlite", ".bsdigest", "bubblescope record"}) {
      EXPECT_THAT(page->out, HasSubstr(format));
    }
  }
  EXPECT_THAT(analyze_help.out, HasSubstr("Nsight Systems"));
}

}  // namespace
}  // namespace bubblescope::testing
