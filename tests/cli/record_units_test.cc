// `bubblescope record`, in process: flag checks, where the collector library is found, the
// injected variables, the collector's file names, which files a run wrote and which ranks wrote
// none, and the child-process helper's exit statuses.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/child_process.h"
#include "cli/record_command.h"
#include "cli/record_outputs.h"
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
  fs::path Bin() const { return fs::path(dir_.path()) / "prefix" / "bin"; }
  std::string Executable() const { return (Bin() / "bubblescope").string(); }
  std::string BesideExecutable() const { return (Bin() / kCollectorLibraryName).string(); }
  std::string InLib() const {
    return (fs::path(dir_.path()) / "prefix" / "lib" / kCollectorLibraryName).string();
  }
  TempDir dir_;
};

TEST_F(FindCollectorTest, MissingLibraryNamesBothPlaces) {
  absl::StatusOr<std::string> found = FindCollectorLibrary("", Executable());
  ASSERT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(found.status()), HasSubstr(BesideExecutable()));
  EXPECT_THAT(Message(found.status()), HasSubstr(InLib()));
  EXPECT_THAT(Message(found.status()), HasSubstr("--collector"));
}

TEST_F(FindCollectorTest, InstalledLayoutThenBuildTreeWins) {
  dir_.Write("prefix/lib/" + std::string(kCollectorLibraryName), "elf");
  EXPECT_EQ(*FindCollectorLibrary("", Executable()), InLib());
  dir_.Write("prefix/bin/" + std::string(kCollectorLibraryName), "elf");
  EXPECT_EQ(*FindCollectorLibrary("", Executable()), BesideExecutable());
}

TEST_F(FindCollectorTest, ExplicitPathMustBeAFile) {
  const std::string library = dir_.Write("mine.so", "elf");
  EXPECT_EQ(*FindCollectorLibrary(library, Executable()), library);
  for (const std::string& bad : {dir_.path() + "/missing.so", dir_.path()}) {
    absl::StatusOr<std::string> found = FindCollectorLibrary(bad, Executable());
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
  EXPECT_THAT(CollectorEnvironment(*settings),
              ElementsAre(Pair("CUDA_INJECTION64_PATH", flags.collector),
                          Pair("NCCL_PROFILER_PLUGIN", flags.collector),
                          Pair("BUBBLESCOPE_OUTPUT_DIR", default_dir),
                          Pair("BUBBLESCOPE_KINDS", kAllKinds),
                          Pair("BUBBLESCOPE_FLUSH_MS", "1000"),
                          Pair("BUBBLESCOPE_RUN_ID", kRunId)));
  flags.run_id = "baseline";
  EXPECT_EQ(ParseRecordFlags(flags, "", kRunId)->run_id, "baseline");
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
  EXPECT_EQ(CollectorEnvironment(*settings, "/opt/libjemalloc.so").size(), 6u);
  const std::string handoff = dir.Write("libbubblescope_cupti_handoff.so", "elf");
  settings = ParseRecordFlags(flags, "", kRunId);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->handoff_path, handoff);
  EXPECT_EQ(CollectorEnvironment(*settings).back(), std::make_pair(std::string("LD_PRELOAD"), handoff));
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
  ASSERT_EQ(variables.size(), 7u);
  EXPECT_EQ(variables.back(), std::make_pair(std::string("BUBBLESCOPE_START"),
                                             std::string("steps:0:3")));
  for (const char* bad : {"3", "4:2", ":2", "1:", "a:b", "-1:2", "1:2:3", "1.5:2"}) {
    flags.steps = bad;
    settings = ParseRecordFlags(flags, "", kRunId);
    ASSERT_FALSE(settings.ok()) << bad;
    EXPECT_EQ(Message(settings.status()),
              absl::StrCat("--steps: '", bad, "' is not A:B, two step numbers with A <= B"));
  }
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
    EXPECT_EQ(Message(settings.status()),
              absl::StrCat("--kill-after: '", bad, "' is not a whole number of seconds from 1 "
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

TEST(CollectorFileNameTest, RankAndWorldFromTheName) {
  auto id = ParseCollectorFileName("bubblescope-rank3-world8-node-a-1234.json");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->rank, 3);
  EXPECT_EQ(id->world_size, 8);
  id = ParseCollectorFileName("bubblescope-rank12-gpu7-99.json.gz");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->rank, 12);
  EXPECT_EQ(id->world_size, -1);
  id = ParseCollectorFileName("bubblescope-norank-h-5.json");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->rank, -1);
  EXPECT_EQ(id->world_size, -1);
  EXPECT_EQ(id->run_id, "");
}

TEST(CollectorFileNameTest, RunIdBeforeTheRank) {
  auto id = ParseCollectorFileName("bubblescope-20261125-132801-a1b2-rank3-world8-rankhost-1.json");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->run_id, "20261125-132801-a1b2");
  EXPECT_EQ(id->rank, 3);
  EXPECT_EQ(id->world_size, 8);
  id = ParseCollectorFileName("bubblescope-x-no-norank-h-5.json");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->run_id, "x-no");
  EXPECT_EQ(id->rank, -1);
  id = ParseCollectorFileName("bubblescope-no-rank2-h-5.json.gz");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->run_id, "no");
  EXPECT_EQ(id->rank, 2);
}

TEST(CollectorFileNameTest, OtherNamesAreNotCollectorFiles) {
  for (const char* name :
       {"rank3.json", "bubblescope-rank3-world8-host.json", "bubblescope-rank-3-h-1.json",
        "bubblescope-rank3-world0-h-1.json", "bubblescope-rank3-h-12x.json",
        "bubblescope-rank3-h-1.txt", "bubblescope-rank3--1.json", "bubblescope-.json",
        "bubblescope-rankX-h-1.json", "bubblescope-rank3-world99999999999-h-1.json",
        "bubblescope--rank3-h-1.json", "bubblescope-a b-rank3-h-1.json",
        "bubblescope-run_rank3-h-1.json", "bubblescope-_x-rank3-h-1.json"}) {
    EXPECT_FALSE(ParseCollectorFileName(name).has_value()) << name;
  }
}

TEST(WrittenBetweenTest, ThisRunsFilesAndNewOrChangedFilesWithoutARunId) {
  const std::string mine = absl::StrCat("bubblescope-", kRunId, "-rank0-world2-h-5.json");
  TraceFileStamps before = {{"bubblescope-rank0-world2-h-1.json", FileStamp{10, 100, 7}},
                            {"bubblescope-rank1-world2-h-2.json", FileStamp{10, 100, 8}},
                            {"bubblescope-rank0-world2-h-3.json", FileStamp{10, 100, 9}},
                            {"bubblescope-older-rank1-world2-h-6.json", FileStamp{4, 90, 12}}};
  TraceFileStamps after = before;
  after["bubblescope-rank1-world2-h-2.json"].modified_ns = 101;  // rewritten, same size
  after["bubblescope-rank0-world2-h-3.json"].inode = 10;         // replaced by another file
  after["bubblescope-norank-h-4.json"] = FileStamp{3, 50, 11};   // new
  after[mine] = FileStamp{6, 120, 13};                           // new, named with this run
  after["bubblescope-other-rank0-world2-h-7.json"] = FileStamp{5, 130, 14};  // another run's
  std::vector<RecordedFile> written = WrittenBetween(before, after, kRunId);
  ASSERT_EQ(written.size(), 4u);
  EXPECT_EQ(written[0].name, mine);
  EXPECT_EQ(written[0].size, 6u);
  EXPECT_EQ(written[0].id.run_id, kRunId);
  EXPECT_EQ(written[1].name, "bubblescope-norank-h-4.json");
  EXPECT_EQ(written[1].size, 3u);
  EXPECT_EQ(written[1].id.rank, -1);
  EXPECT_EQ(written[2].name, "bubblescope-rank0-world2-h-3.json");
  EXPECT_EQ(written[3].name, "bubblescope-rank1-world2-h-2.json");
  EXPECT_EQ(written[3].id.rank, 1);
  EXPECT_EQ(written[3].id.world_size, 2);
}

TEST(MissingRanksTest, FromTheLargestWorldSize) {
  auto file = [](int32_t rank, int32_t world) {
    return RecordedFile{"f", 1, CollectorFileName{rank, world, ""}};
  };
  MissingRanks missing = FindMissingRanks({file(0, 4), file(2, 4), file(-1, -1)});
  EXPECT_EQ(missing.world_size, 4);
  EXPECT_THAT(missing.ranks, ElementsAre(1, 3));
  missing = FindMissingRanks({file(0, 2), file(1, 2), file(1, 2)});
  EXPECT_EQ(missing.world_size, 2);
  EXPECT_THAT(missing.ranks, ElementsAre());
  missing = FindMissingRanks({file(0, -1), file(5, -1)});  // world size unknown
  EXPECT_EQ(missing.world_size, 0);
  EXPECT_THAT(missing.ranks, ElementsAre());
  missing = FindMissingRanks({file(0, 2), file(3, 4)});
  EXPECT_EQ(missing.world_size, 4);
  EXPECT_THAT(missing.ranks, ElementsAre(1, 2));
  EXPECT_THAT(FindMissingRanks({}).ranks, ElementsAre());
}

TEST(HumanBytesTest, BinaryUnitsOneDecimal) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(1024), "1.0 KiB");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(5u << 20), "5.0 MiB");
  EXPECT_EQ(HumanBytes(uint64_t{3} << 30), "3.0 GiB");
}

TEST(StampCollectorFilesTest, OnlyCollectorFilesAndAMissingDirectory) {
  TempDir dir;
  dir.Write("bubblescope-rank0-world1-h-1.json", "12345");
  dir.Write("rank0.json", "x");
  dir.Write("notes.txt", "x");
  fs::create_directories(fs::path(dir.path()) / "bubblescope-rank1-world1-h-2.json");
  absl::StatusOr<TraceFileStamps> stamps = StampCollectorFiles(dir.path());
  ASSERT_TRUE(stamps.ok()) << stamps.status();
  ASSERT_EQ(stamps->size(), 1u);
  EXPECT_EQ(stamps->begin()->first, "bubblescope-rank0-world1-h-1.json");
  EXPECT_EQ(stamps->begin()->second.size, 5u);
  EXPECT_FALSE(StampCollectorFiles(dir.path() + "/missing").ok());
}

TEST(RunChildProcessTest, ShellExitStatuses) {
  ChildProcessOptions options;
  options.argv = {"sh", "-c", "exit 7"};
  EXPECT_EQ(RunChildProcess(options)->exit_status, 7);
  options.argv = {"sh", "-c", "kill -USR1 $$"};
  absl::StatusOr<ChildExit> killed = RunChildProcess(options);
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(killed->signal, SIGUSR1);
  EXPECT_EQ(killed->exit_status, 128 + SIGUSR1);
  options.argv = {"bubblescope-no-such-command"};
  absl::StatusOr<ChildExit> missing = RunChildProcess(options);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "bubblescope-no-such-command: command not found");
  EXPECT_EQ(ExitStatusForStartError(missing.status()), 127);
  TempDir dir;
  options.argv = {dir.Write("not-executable", "#!/bin/sh\n")};
  absl::StatusOr<ChildExit> refused = RunChildProcess(options);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ExitStatusForStartError(refused.status()), 126);
}

TEST(RunChildProcessTest, SecondEndingSignalKillsTheGroupAndSaysSo) {
  // The job sends its parent (this process) SIGTERM twice while ignoring it itself; each is
  // passed back to the job, and the second kills the job's group.
  ChildProcessOptions options;
  options.argv = {"sh", "-c", "trap '' TERM; kill -TERM $PPID; sleep 1.2; kill -TERM $PPID; "
                              "sleep 60"};
  options.forwarded_signals = {SIGTERM, SIGUSR1};
  options.ending_signals = {SIGTERM};
  std::vector<std::string> notices;
  options.notice = [&notices](const std::string& line) { notices.push_back(line); };
  absl::StatusOr<ChildExit> exit = RunChildProcess(options);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ(exit->exit_status, 128 + SIGKILL);
  EXPECT_TRUE(exit->killed_here);
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_THAT(notices[0], StartsWith("passed SIGTERM on to the job (pid "));
  EXPECT_THAT(notices[0], HasSubstr("); a second signal kills it"));
  EXPECT_THAT(notices[1], StartsWith("second request to end the job (SIGTERM): killing the "
                                     "job's process group ("));
}

TEST(RunChildProcessTest, TheSameSignalTwiceAtOnceIsOneRequest) {
  // As `timeout` delivers it: to this process, then to its process group, back to back.
  ChildProcessOptions options;
  options.argv = {"sh", "-c",
                  "trap '' TERM; kill -TERM $PPID; kill -TERM $PPID; sleep 0.3; exit 3"};
  options.forwarded_signals = {SIGTERM};
  options.ending_signals = {SIGTERM};
  std::vector<std::string> notices;
  options.notice = [&notices](const std::string& line) { notices.push_back(line); };
  absl::StatusOr<ChildExit> exit = RunChildProcess(options);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_status, 3);
  EXPECT_FALSE(exit->killed_here);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_THAT(notices[0], StartsWith("passed SIGTERM on to the job"));
}

TEST(RunChildProcessTest, JobRunsInAProcessGroupOfItsOwn) {
  ChildProcessOptions options;
  // Field 5 of /proc/PID/stat is the process group (the command name "(sh)" has no spaces).
  options.argv = {"sh", "-c", "set -- $(cat /proc/$$/stat); [ \"$5\" = \"$$\" ]"};
  absl::StatusOr<ChildExit> exit = RunChildProcess(options);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_status, 0);
  EXPECT_FALSE(exit->killed_here);
}

}  // namespace
}  // namespace bubblescope
