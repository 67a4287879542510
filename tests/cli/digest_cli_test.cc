// `bubblescope digest` end to end: digests of a job analyse to the same report as its traces.
// The JSON report's `pipelines` section must be byte-identical; every other member too, except
// each rank's `source` (the file read: the digest's path, not the trace's).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "re2/re2.h"
#include "support/shared_traces.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::RunCommand;

const std::string kBinary = BUBBLESCOPE_BINARY;
const std::string kSamples = std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/";

std::string AnalyzeJson(const std::vector<std::string>& paths) {
  std::vector<std::string> argv = {kBinary, "analyze", "--format", "json"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  CommandResult result = RunCommand(argv, 300);
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return result.out;
}

CommandResult Digest(const std::vector<std::string>& paths, const std::string& out,
                     std::vector<std::string> more = {}) {
  std::vector<std::string> argv = {kBinary, "digest"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  argv.insert(argv.end(), {"-o", out});
  argv.insert(argv.end(), more.begin(), more.end());
  return RunCommand(argv, 300);
}

// The report with every rank's "source" member (the file it was read from) taken out: what
// must stay byte for byte the same between traces and their digests.
std::string WithoutSources(const std::string& json) {
  static const RE2 kSource("\n *\"source\": \"(?:[^\"\\\\]|\\\\.)*\",");
  std::string out = json;
  RE2::GlobalReplace(&out, kSource, "");
  return out;
}

// The raw text of the top-level member `key` of a report (the writer puts each member on lines
// of its own, indented by two spaces, and closes it at the same indent).
std::string MemberText(const std::string& json, const std::string& key) {
  const size_t start = json.find("\n  \"" + key + "\": ");
  if (start == std::string::npos) return {};
  const size_t end = json.find("\n  \"", start + 1);
  return json.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The traces at `paths` and their digests analyse to the same report.
void ExpectSameReport(const std::vector<std::string>& paths) {
  testing::TempDir dir;
  const std::string digests = dir.path() + "/digests";
  CommandResult digested = Digest(paths, digests);
  ASSERT_EQ(digested.exit_status, 0) << digested.err;
  EXPECT_FALSE(absl::StrContains(digested.err, "kept whole")) << digested.err;
  const std::string from_traces = AnalyzeJson(paths);
  const std::string from_digests = AnalyzeJson({digests});
  const std::string pipelines = MemberText(from_traces, "pipelines");
  ASSERT_FALSE(pipelines.empty());
  EXPECT_EQ(pipelines, MemberText(from_digests, "pipelines"));
  // Of a folder of several profiler cycles, digest keeps the cycle it reads (the newest complete
  // one, or --cycle's): the digests are one cycle, so their report names none.
  std::string traces_report = WithoutSources(from_traces);
  const std::string digests_report = WithoutSources(from_digests);
  const std::string cycle = MemberText(traces_report, "profiler_cycle");
  if (!absl::StartsWith(cycle, "\n  \"profiler_cycle\": null")) {
    const std::string digests_cycle = MemberText(digests_report, "profiler_cycle");
    EXPECT_TRUE(absl::StartsWith(digests_cycle, "\n  \"profiler_cycle\": null")) << digests_cycle;
    if (!cycle.empty()) {
      traces_report.replace(traces_report.find(cycle), cycle.size(), digests_cycle);
    }
  }
  EXPECT_EQ(traces_report, digests_report);
}

// Every simulate schedule and option family.
TEST(DigestCliTest, SimulatedFamiliesGiveTheSameReport) {
  const std::vector<std::vector<std::string>> families = {
      {"--schedule", "gpipe"},
      {"--schedule", "1f1b", "--annotations", "pp-gpu"},
      {"--schedule", "interleaved", "--virtual-stages", "2", "--annotations", "pp-mirrored"},
      {"--schedule", "zb-h1", "--wgrad-us", "700", "--annotations", "pp-cpu"},
      {"--schedule", "fwd-only", "--annotations", "pp-short"},
      {"--p2p", "batched", "--launches", "torch"},
      {"--vendor", "rocm", "--launches", "torch", "--format", "array"},
      {"--no-nccl-args", "--gzip", "--jitter", "0.05", "--slow-link", "1:2:25"},
      {"--tensor-parallel", "2", "--data-parallel", "2", "--dp-sync-us", "300",
       "--sequence-parallel", "--tp-overlap"},
      {"--clock-offset-us", "0,0,-700,-700", "--ranks-per-host", "2", "--optimizer-us", "400"},
      {"--stage-to-rank", "2,0,3,1", "--format", "old", "--no-iteration-barrier"},
      // Nsight exports: each rank's rank_source, time_base and time_evidence survive the digest.
      {"--format", "nsys", "--annotations", "pp-cpu"},
  };
  for (const std::vector<std::string>& family : families) {
    SCOPED_TRACE(family.front() + " " + family[1]);
    testing::TempDir dir;
    std::vector<std::string> argv = {kBinary, "simulate", "-o", dir.path() + "/set",
                                     "-p",    "4",        "-m", "8"};
    argv.insert(argv.end(), family.begin(), family.end());
    CommandResult simulated = RunCommand(argv);
    ASSERT_EQ(simulated.exit_status, 0) << simulated.err;
    ExpectSameReport({dir.path() + "/set"});
  }
}

// The bundled folders that hold several sets, one per subfolder.
constexpr std::array<const char*, 2> kFoldersOfSets = {"torch_cpu", "gpu_h100_collector"};

TEST(DigestCliTest, BundledSetsGiveTheSameReport) {
  for (const auto& entry : fs::directory_iterator(kSamples)) {
    if (!entry.is_directory() || std::find(kFoldersOfSets.begin(), kFoldersOfSets.end(),
                                           entry.path().filename()) != kFoldersOfSets.end()) {
      continue;
    }
    SCOPED_TRACE(entry.path().string());
    ExpectSameReport({entry.path().string()});
  }
}

TEST(DigestCliTest, TorchCpuAndGpuCollectorRunsGiveTheSameReport) {
  for (const char* folder : kFoldersOfSets) {
    for (const auto& entry : fs::directory_iterator(kSamples + folder)) {
      if (!entry.is_directory()) continue;
      SCOPED_TRACE(entry.path().string());
      ExpectSameReport({entry.path().string()});
    }
  }
}

TEST(DigestCliTest, SharedTracesGiveTheSameReport) {
  for (const char* set : {"param_dlrm_8rank", "hta_trace_filter_2rank", "hta_amd_mi250_rocm"}) {
    const std::string path = testing::SharedTracePath(set);
    BUBBLESCOPE_NEED_SHARED(path);
    SCOPED_TRACE(path);
    ExpectSameReport({path});
  }
}

// Digests and traces of one job read together: ranks 0 and 1 from digests, 2 and 3 as traces.
TEST(DigestCliTest, DigestsAndTracesMix) {
  const std::string set = kSamples + "sim_1f1b_p4_m8";
  testing::TempDir dir;
  ASSERT_EQ(Digest({set + "/rank0.pt.trace.json.gz", set + "/rank1.pt.trace.json.gz"}, dir.path())
                .exit_status,
            0);
  const std::string mixed =
      AnalyzeJson({dir.path() + "/rank0.bsdigest", dir.path() + "/rank1.bsdigest",
                   set + "/rank2.pt.trace.json.gz", set + "/rank3.pt.trace.json.gz"});
  EXPECT_EQ(WithoutSources(mixed), WithoutSources(AnalyzeJson({set})));
}

// A trace cut short keeps its truncation warning and counters through its digest.
TEST(DigestCliTest, CutShortTraceKeepsItsWarning) {
  testing::TempDir dir;
  const std::string text =
      testing::Gunzip(testing::ReadFile(kSamples + "sim_1f1b_p4_m8/rank1.pt.trace.json.gz"));
  const std::string cut = dir.Write("rank1.json", text.substr(0, text.size() * 2 / 3));
  CommandResult traced = RunCommand({kBinary, "analyze", cut, "--format", "json"});
  ASSERT_EQ(Digest({cut}, dir.path() + "/d").exit_status, 0);
  CommandResult digested = RunCommand({kBinary, "analyze", dir.path() + "/d", "--format", "json"});
  ASSERT_EQ(digested.exit_status, traced.exit_status);
  EXPECT_TRUE(absl::StrContains(traced.err, "file cut short")) << traced.err;
  EXPECT_TRUE(absl::StrContains(digested.err, "file cut short")) << digested.err;
  // The same warning, with the trace's own byte offsets, the file's name aside.
  std::string renamed = digested.err;
  RE2::GlobalReplace(&renamed, RE2::QuoteMeta(dir.path() + "/d/rank1.bsdigest"), cut);
  EXPECT_EQ(traced.err, renamed);
  EXPECT_EQ(WithoutSources(traced.out), WithoutSources(digested.out));
  EXPECT_TRUE(absl::StrContains(digested.out, "\"truncated\"")) << digested.out;
  // --strict refuses the digest as it refuses the trace.
  EXPECT_EQ(RunCommand({kBinary, "analyze", dir.path() + "/d", "--strict"}).exit_status, 2);
}

TEST(DigestCliTest, NeverReplacesDigestsWithoutForce) {
  const std::string set = kSamples + "sim_1f1b_p4_m8";
  testing::TempDir dir;
  ASSERT_EQ(Digest({set}, dir.path()).exit_status, 0);
  const std::string before = testing::ReadFile(dir.path() + "/rank2.bsdigest");
  CommandResult again = Digest({set}, dir.path());
  EXPECT_EQ(again.exit_status, 2);
  EXPECT_TRUE(absl::StrContains(again.err, "rank0.bsdigest already exists")) << again.err;
  EXPECT_TRUE(absl::StrContains(again.err, "--force")) << again.err;
  // Another job's digest in the way is removed only with --force; the rest are rewritten.
  dir.Write("rank9.bsdigest", testing::ReadFile(dir.path() + "/rank3.bsdigest"));
  EXPECT_EQ(Digest({set}, dir.path()).exit_status, 2);
  CommandResult forced = Digest({set}, dir.path(), {"--force"});
  EXPECT_EQ(forced.exit_status, 0) << forced.err;
  EXPECT_FALSE(fs::exists(dir.path() + "/rank9.bsdigest"));
  EXPECT_EQ(testing::ReadFile(dir.path() + "/rank2.bsdigest"), before);  // deterministic
  EXPECT_TRUE(absl::StrContains(forced.out, "4 digests")) << forced.out;
}

// `record --digest`: the job's traces digested into DIR/digests-<run id>, analysed to the same
// report. A shell job stands in for the collector (the library is only named, never loaded),
// writing two ranks' files as the collector names them.
TEST(DigestCliTest, RecordWritesDigestsBesideItsTraces) {
  testing::TempDir dir;
  const std::string set = kSamples + "sim_1f1b_p4_m8";
  const std::string out = dir.path() + "/out";
  const std::string collector = dir.Write("fake_collector.so", "not a library");
  CommandResult record =
      RunCommand({kBinary, "record", "-o", out, "--collector", collector, "--run-id", "run7",
                  "--digest", "--", "sh", "-c",
                  "for r in 0 1 2 3; do gzip -dc \"$0\"/rank$r.pt.trace.json.gz > "
                  "\"$BUBBLESCOPE_OUTPUT_DIR\"/bubblescope-run7-rank$r-world4-h-$r.json; done",
                  set});
  ASSERT_EQ(record.exit_status, 0) << record.err;
  EXPECT_TRUE(absl::StrContains(record.err, "digests in " + out + "/digests-run7")) << record.err;
  EXPECT_TRUE(absl::StrContains(record.err, "4 digests")) << record.err;
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(fs::exists(out + "/digests-run7/rank" + std::to_string(r) + ".bsdigest"));
  }
  EXPECT_EQ(WithoutSources(AnalyzeJson({out + "/digests-run7"})),
            WithoutSources(AnalyzeJson({set})));
  // The traces alone in DIR: `analyze DIR` does not read the digests' subfolder.
  EXPECT_EQ(WithoutSources(AnalyzeJson({out})), WithoutSources(AnalyzeJson({set})));
}

// --perfetto from digests writes each rank's model as events (a digest keeps no file's own), and
// that merged trace, read back, is the same job: the same pipelines and job figures.
TEST(DigestCliTest, PerfettoFromDigestsWritesTheirModelsEvents) {
  testing::TempDir dir;
  ASSERT_EQ(Digest({kSamples + "sim_1f1b_p4_m8"}, dir.path() + "/d").exit_status, 0);
  CommandResult result = RunCommand({kBinary, "analyze", dir.path() + "/d", "--perfetto",
                                     dir.path() + "/merged.json", "-o", dir.path() + "/r.txt"});
  ASSERT_EQ(result.exit_status, 0) << result.err;
  const std::string from_digests = AnalyzeJson({dir.path() + "/d"});
  const std::string from_merged = AnalyzeJson({dir.path() + "/merged.json"});
  for (const std::string member : {"pipelines", "findings", "job"}) {
    const std::string expected = MemberText(from_digests, member);
    ASSERT_FALSE(expected.empty()) << member;
    EXPECT_EQ(MemberText(from_merged, member), expected) << member;
  }
}

TEST(DigestCliTest, HelpAndUsage) {
  CommandResult help = RunCommand({kBinary, "digest", "--help"});
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_TRUE(absl::StrContains(help.out, "rank<r>.bsdigest")) << help.out;
  EXPECT_EQ(RunCommand({kBinary, "digest", kSamples + "sim_1f1b_p4_m8"}).exit_status, 2);  // no -o
  testing::TempDir dir;
  CommandResult missing = Digest({dir.path() + "/nothing.json"}, dir.path() + "/d");
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_FALSE(fs::exists(dir.path() + "/d/rank0.bsdigest"));
}

// A digest set is written whole or not at all: a run killed after its first file (the file-size
// limit lets rank0's 2.3 KB digest through and stops rank1's 2.9 KB one with SIGXFSZ) leaves no
// digest where the set goes, where it once left rank0.bsdigest alone for analyze to read as the
// whole job; the next run clears what the killed one left and writes all four.
TEST(DigestCliTest, ASetKilledMidwayLeavesNoDigest) {
  testing::TempDir dir;
  const std::string set = kSamples + "sim_1f1b_p4_m8";
  const std::string out = dir.path() + "/digests";
  const std::string limited = "ulimit -f 5; exec \"$0\" digest \"$1\" -o \"$2\"";
  const CommandResult killed = RunCommand({"/bin/sh", "-c", limited, kBinary, set, out}, 300);
  EXPECT_NE(killed.exit_status, 0);
  auto digests = [&out] {
    size_t count = 0;
    if (!fs::exists(out)) return count;
    for (const auto& entry : fs::directory_iterator(out)) {
      if (entry.path().extension() == ".bsdigest") ++count;
    }
    return count;
  };
  EXPECT_EQ(digests(), 0u);
  const CommandResult again = Digest({set}, out);
  ASSERT_EQ(again.exit_status, 0) << again.err;
  EXPECT_EQ(digests(), 4u);
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(out)) ++entries;
  EXPECT_EQ(entries, 4u);  // nothing of the killed run left beside them
}

}  // namespace
}  // namespace bubblescope
