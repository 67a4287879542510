// `bubblescope record`'s flags, in process: flag checks, where the collector library is found
// and the variables the flags give (the process handling behind them: tests/record_process/).
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/record_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;
using ::bubblescope::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using ::testing::StartsWith;

std::string Message(const absl::Status& status) { return std::string(status.message()); }

constexpr char kAllKinds[] = "kernel,memcpy,memset,memory,nvtx,runtime,driver,nccl";
constexpr char kRunId[] = "20261125-132801-a1b2";

TEST(ParseKindsTest, CanonicalOrderWithoutRepeats) {
  EXPECT_EQ(*ParseKinds(""), kAllKinds);
  EXPECT_EQ(*ParseKinds("nccl,kernel,nvtx,kernel"), "kernel,nvtx,nccl");
  EXPECT_EQ(*ParseKinds("driver,runtime,nvtx,memory,memset,memcpy,kernel,nccl"), kAllKinds);
  EXPECT_EQ(*ParseKinds("queries,runtime"), "runtime,queries");  // opt-in only
}

TEST(ParseKindsTest, UnknownOrEmptyNameIsAnError) {
  for (const char* bad : {"gpu", "kernel,,nvtx", "kernel,", "Kernel", "kernel nvtx"}) {
    absl::StatusOr<std::string> kinds = ParseKinds(bad);
    ASSERT_FALSE(kinds.ok()) << bad;
    EXPECT_THAT(Message(kinds.status()), StartsWith("--kinds: '")) << bad;
  }
  EXPECT_THAT(Message(ParseKinds("kernel,gpu").status()), HasSubstr("'gpu' is not one of"));
}

class FindCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(Bin()); }
  fs::path Prefix() const { return fs::path(dir_.path()) / "prefix"; }
  fs::path Bin() const { return Prefix() / "bin"; }
  std::string Executable() const { return (Bin() / "bubblescope").string(); }
  std::string BesideExecutable() const { return (Bin() / kCollectorLibraryName).string(); }
  // Where `cmake --install` puts it (collector/CMakeLists.txt).
  std::string Installed() const {
    return (Prefix() / "lib" / "bubblescope" / kCollectorLibraryName).string();
  }
  std::string InLib() const { return (Prefix() / "lib" / kCollectorLibraryName).string(); }
  TempDir dir_;
};

const CollectorBuild kBuiltIn{"/src/build", ""};
const CollectorBuild kLeftOut{"", "CMake found no CUDA toolkit"};

TEST_F(FindCollectorTest, MissingLibraryNamesEveryPlaceAndTheCommandsThatBuildIt) {
  absl::StatusOr<std::string> found = FindCollectorLibrary("", Executable(), kBuiltIn);
  ASSERT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Message(found.status()),
            "collector library not found (looked for " + BesideExecutable() + ", " + Installed() +
                " and " + InLib() +
                "): build it beside bubblescope with `cmake --build /src/build --target "
                "bubblescope_collector`, or install both with `cmake --install /src/build "
                "--prefix DIR`; or give --collector PATH");
}

// A build that left the collector out says why rather than naming a target it does not have.
TEST_F(FindCollectorTest, BuildWithoutTheCollectorSaysWhy) {
  absl::StatusOr<std::string> found = FindCollectorLibrary("", Executable(), kLeftOut);
  ASSERT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Message(found.status()),
            "collector library not found: this bubblescope was built without it (CMake found "
            "no CUDA toolkit; looked for " +
                BesideExecutable() + ", " + Installed() + " and " + InLib() +
                "); give --collector PATH to use one built elsewhere");
}

TEST_F(FindCollectorTest, BuildTreeThenInstalledLayoutThenLib) {
  dir_.Write("prefix/lib/" + std::string(kCollectorLibraryName), "elf");
  EXPECT_EQ(*FindCollectorLibrary("", Executable(), kBuiltIn), InLib());
  dir_.Write("prefix/lib/bubblescope/" + std::string(kCollectorLibraryName), "elf");
  EXPECT_EQ(*FindCollectorLibrary("", Executable(), kBuiltIn), Installed());
  dir_.Write("prefix/bin/" + std::string(kCollectorLibraryName), "elf");
  EXPECT_EQ(*FindCollectorLibrary("", Executable(), kLeftOut), BesideExecutable());
}

TEST_F(FindCollectorTest, ExplicitPathMustBeAFile) {
  const std::string library = dir_.Write("mine.so", "elf");
  EXPECT_EQ(*FindCollectorLibrary(library, Executable(), kLeftOut), library);
  for (const std::string& bad : {dir_.path() + "/missing.so", dir_.path()}) {
    absl::StatusOr<std::string> found = FindCollectorLibrary(bad, Executable(), kBuiltIn);
    ASSERT_FALSE(found.ok()) << bad;
    EXPECT_THAT(Message(found.status()), StartsWith("--collector: '" + bad + "'"));
  }
}

TEST(ParseRecordFlagsTest, DefaultsAndTheVariablesTheyGive) {
  TempDir dir;
  RecordFlags flags;
  flags.collector = dir.Write("lib.so", "elf");
  flags.command = {"python", "train.py"};
  absl::StatusOr<RecordSettings> settings = ParseRecordFlags(flags, "/nowhere/bubblescope", kRunId);
  ASSERT_TRUE(settings.ok()) << settings.status();
  const std::string default_dir = (fs::current_path() / "bubblescope_traces").string();
  EXPECT_EQ(settings->output_dir, default_dir);
  EXPECT_THAT(settings->command, ElementsAre("python", "train.py"));
  EXPECT_THAT(
      CollectorEnvironment(*settings),
      ElementsAre(Pair("CUDA_INJECTION64_PATH", flags.collector),
                  Pair("NCCL_PROFILER_PLUGIN", flags.collector),
                  Pair("BUBBLESCOPE_OUTPUT_DIR", default_dir), Pair("BUBBLESCOPE_KINDS", kAllKinds),
                  Pair("BUBBLESCOPE_FLUSH_MS", "1000"), Pair("BUBBLESCOPE_RUN_ID", kRunId),
                  Pair("BUBBLESCOPE_START", "steps:+2:+6"), Pair("BUBBLESCOPE_LIMIT", "256:0")));
  flags.run_id = "baseline";
  EXPECT_EQ(ParseRecordFlags(flags, "", kRunId)->run_id, "baseline");
  EXPECT_FALSE(settings->flush_on_step);
  flags.live = true;
  EXPECT_TRUE(ParseRecordFlags(flags, "", kRunId)->flush_on_step);
}

// The hand-over library beside the collector goes first in LD_PRELOAD, before what the job had.
TEST(ParseRecordFlagsTest, TheHandoffLibraryBesideTheCollectorIsPreloaded) {
  TempDir dir;
  RecordFlags flags;
  flags.collector = dir.Write("libbubblescope_collector.so", "elf");
  flags.command = {"true"};
  absl::StatusOr<RecordSettings> settings = ParseRecordFlags(flags, "", kRunId);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->handoff_path, "");
  for (const auto& [name, value] : CollectorEnvironment(*settings, "/opt/libjemalloc.so")) {
    EXPECT_NE(name, "LD_PRELOAD");  // no hand-over library: the job's own LD_PRELOAD is untouched
  }
  const std::string handoff = dir.Write("libbubblescope_cupti_handoff.so", "elf");
  settings = ParseRecordFlags(flags, "", kRunId);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->handoff_path, handoff);
  EXPECT_EQ(CollectorEnvironment(*settings).back(),
            std::make_pair(std::string("LD_PRELOAD"), handoff));
  EXPECT_EQ(CollectorEnvironment(*settings, "/opt/libjemalloc.so").back(),
            std::make_pair(std::string("LD_PRELOAD"), handoff + ":/opt/libjemalloc.so"));
}

TEST(ParseRecordFlagsTest, StepsBecomeTheCollectorsStartMode) {
  TempDir dir;
  RecordFlags flags;
  flags.collector = dir.Write("lib.so", "elf");
  flags.command = {"true"};
  flags.steps = "0:3";
  absl::StatusOr<RecordSettings> settings = ParseRecordFlags(flags, "", kRunId);
  ASSERT_TRUE(settings.ok()) << settings.status();
  const auto variables = CollectorEnvironment(*settings);
  ASSERT_EQ(variables.size(), 7u);  // the job's own steps bound it: no cap unless asked
  EXPECT_EQ(variables.back(),
            std::make_pair(std::string("BUBBLESCOPE_START"), std::string("steps:0:3")));
  for (const char* bad : {"3", "4:2", ":2", "1:", "a:b", "-1:2", "1:2:3", "1.5:2"}) {
    flags.steps = bad;
    settings = ParseRecordFlags(flags, "", kRunId);
    ASSERT_FALSE(settings.ok()) << bad;
    EXPECT_EQ(Message(settings.status()),
              absl::StrCat("--steps: '", bad, "' is not A:B, two step numbers with A <= B"));
  }
}

// Start values and caps the window flags give (the collector's variables, last two).
std::vector<std::string> WindowVariables(const RecordFlags& flags) {
  absl::StatusOr<RecordSettings> settings = ParseRecordFlags(flags, "", kRunId);
  if (!settings.ok()) return {std::string(settings.status().message())};
  std::vector<std::string> out;
  for (const auto& [name, value] : CollectorEnvironment(*settings)) {
    if (name == "BUBBLESCOPE_START" || name == "BUBBLESCOPE_LIMIT")
      out.push_back(name + "=" + value);
  }
  return out;
}

TEST(ParseRecordFlagsTest, OneWindowAndItsCaps) {
  TempDir dir;
  RecordFlags flags;
  flags.collector = dir.Write("lib.so", "elf");
  flags.command = {"true"};
  EXPECT_THAT(WindowVariables(flags),
              ElementsAre("BUBBLESCOPE_START=steps:+2:+6", "BUBBLESCOPE_LIMIT=256:0"));
  flags.max_mb = "64";
  EXPECT_THAT(WindowVariables(flags),
              ElementsAre("BUBBLESCOPE_START=steps:+2:+6", "BUBBLESCOPE_LIMIT=64:0"));
  flags.start_after = "45";  // a time window: 600 s unless told otherwise
  EXPECT_THAT(WindowVariables(flags),
              ElementsAre("BUBBLESCOPE_START=after:45", "BUBBLESCOPE_LIMIT=64:600"));
  flags.max_seconds = "30";
  EXPECT_THAT(WindowVariables(flags),
              ElementsAre("BUBBLESCOPE_START=after:45", "BUBBLESCOPE_LIMIT=64:30"));
  flags.max_seconds.clear();
  flags.start_after.clear();
  flags.profiler_api = true;
  EXPECT_THAT(WindowVariables(flags),
              ElementsAre("BUBBLESCOPE_START=profiler-api", "BUBBLESCOPE_LIMIT=64:0"));
  flags.max_mb.clear();
  EXPECT_THAT(WindowVariables(flags), ElementsAre("BUBBLESCOPE_START=profiler-api"));
  flags.profiler_api = false;
  flags.whole_job = true;
  EXPECT_THAT(WindowVariables(flags), ElementsAre());
  flags.max_seconds = "60";
  EXPECT_THAT(WindowVariables(flags),
              ElementsAre("--whole-job: records everything: give no --max-mb or --max-seconds"));
  flags.max_seconds.clear();
  flags.steps = "1:2";
  EXPECT_THAT(WindowVariables(flags),
              ElementsAre("--steps, --start-after, --profiler-api and --whole-job each choose "
                          "the window: give one"));
  flags.whole_job = false;
  flags.steps.clear();
  for (const char* bad : {"0", "-1", "1.5", "604801", "soon"}) {
    flags.start_after = bad;
    EXPECT_THAT(WindowVariables(flags),
                ElementsAre(absl::StrCat("--start-after: '", bad,
                                         "' is not a whole number of seconds from 1 to 604800")));
  }
  flags.start_after.clear();
  flags.max_mb = "0";
  EXPECT_THAT(WindowVariables(flags),
              ElementsAre("--max-mb: '0' is not a whole number of MiB from 1 to 1048576"));
  flags.max_mb.clear();
  flags.max_seconds = "604801";
  EXPECT_THAT(WindowVariables(flags),
              ElementsAre("--max-seconds: '604801' is not a whole number of seconds from 1 to "
                          "604800"));
}

TEST(ParseRecordFlagsTest, RelativeOutputBecomesAbsolute) {
  TempDir dir;
  RecordFlags flags;
  flags.collector = dir.Write("lib.so", "elf");
  flags.command = {"true"};
  flags.output_dir = "runs/../traces/";
  flags.flush_ms = "86400000";
  absl::StatusOr<RecordSettings> settings = ParseRecordFlags(flags, "", kRunId);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->output_dir, (fs::current_path() / "traces").string());
  EXPECT_EQ(settings->flush_ms, 86'400'000);
  EXPECT_EQ(settings->kill_after_ms, 0);  // unset: only a second signal kills the job
  flags.kill_after = "86400";
  EXPECT_EQ(ParseRecordFlags(flags, "", kRunId)->kill_after_ms, 86'400'000);
}

TEST(ParseRecordFlagsTest, BadValuesNameTheirFlag) {
  TempDir dir;
  RecordFlags good;
  good.collector = dir.Write("lib.so", "elf");
  good.command = {"true"};
  for (const char* bad : {"0", "-5", "", "1.5", "abc", "10ms", "86400001"}) {
    RecordFlags flags = good;
    flags.flush_ms = bad;
    absl::StatusOr<RecordSettings> settings = ParseRecordFlags(flags, "", kRunId);
    ASSERT_FALSE(settings.ok()) << bad;
    EXPECT_THAT(Message(settings.status()), StartsWith("--flush-ms: '")) << bad;
  }
  for (const char* bad : {"0", "-1", "2.5", "1s", "86401"}) {
    RecordFlags flags = good;
    flags.kill_after = bad;
    absl::StatusOr<RecordSettings> settings = ParseRecordFlags(flags, "", kRunId);
    ASSERT_FALSE(settings.ok()) << bad;
    EXPECT_EQ(Message(settings.status()), absl::StrCat("--kill-after: '", bad,
                                                       "' is not a whole number of seconds from 1 "
                                                       "to 86400"));
  }
  for (const char* bad : {"-x", "my-rank", "a b", "\x1b[1m"}) {
    RecordFlags flags = good;
    flags.run_id = bad;
    absl::StatusOr<RecordSettings> settings = ParseRecordFlags(flags, "", kRunId);
    ASSERT_FALSE(settings.ok()) << bad;
    EXPECT_THAT(Message(settings.status()), StartsWith("--run-id: '")) << bad;
    EXPECT_THAT(Message(settings.status()), Not(HasSubstr("\x1b"))) << bad;
  }
  RecordFlags no_command = good;
  no_command.command.clear();
  EXPECT_THAT(Message(ParseRecordFlags(no_command, "", kRunId).status()), HasSubstr("no COMMAND"));
}

}  // namespace
}  // namespace bubblescope
