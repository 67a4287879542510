// Files that cannot be one run's, paired by rank id (docs/analyze.md, "One run"), and a rank that
// launched kernels but recorded none: said in the headline and the JSON report, refused by
// --strict, through the real executable.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::CommandResult;
using ::bubblescope::testing::RunCommand;
using ::bubblescope::testing::TempDir;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

CommandResult Analyze(std::vector<std::string> args) {
  args.insert(args.begin(), {BUBBLESCOPE_BINARY, "analyze"});
  return RunCommand(args);
}

std::string Bundled(const std::string& path) {
  return std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/" + path;
}

// Two profiler steps of one GEMM each, launched from the CPU thread, as Kineto writes them:
// `top` holds the file's members before traceEvents, `first_us` the first step's start (on the
// epoch for a 2022 file; from its baseTimeNanoseconds for a 2024 one).
std::string KinetoRank(const std::string& top, int64_t first_us, const std::string& kernel) {
  std::string events;
  for (int step = 0; step < 2; ++step) {
    const int64_t start = first_us + step * 1000;
    const std::string id = absl::StrCat(step + 1);
    absl::StrAppend(
        &events, step == 0 ? "" : ",", R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)",
        10 + step, R"(","pid":1,"tid":1,"ts":)", start, R"(,"dur":1000},)",
        R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)",
        start + 10, R"(,"dur":5,"args":{"correlation":)", id, R"(}},)",
        R"({"ph":"X","cat":"kernel","name":")", kernel, R"(","pid":0,"tid":7,"ts":)", start + 20,
        R"(,"dur":500,"args":{"device":0,"stream":7,"correlation":)", id, "}}");
  }
  return absl::StrCat("{", top, R"("traceEvents":[)", events, "]}");
}

// A 2022 V100 trace (old Kineto: times on the epoch in µs) and a 2024 A100 trace (times from
// baseTimeNanoseconds), both declaring world size 2: 2022-03-14 10:00 and 2024-06-02 08:00 UTC.
struct TwoJobs {
  TempDir dir;
  std::string v100 = dir.Write(
      "v100/rank0.pt.trace.json",
      KinetoRank(R"("schemaVersion":1,"deviceProperties":[{"id":0,"name":"Tesla V100-SXM2-16GB",)"
                 R"("totalGlobalMem":16945512448,"computeMajor":7,"computeMinor":0}],)"
                 R"("distributedInfo":{"backend":"nccl","rank":0,"world_size":2},)",
                 int64_t{1'647'252'000} * 1'000'000, "volta_sgemm_128x64_nn"));
  std::string a100 = dir.Write(
      "a100/rank1.pt.trace.json",
      KinetoRank(R"("schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA A100-SXM4-40GB",)"
                 R"("totalGlobalMem":42505273344,"computeMajor":8,"computeMinor":0}],)"
                 R"("distributedInfo":{"backend":"nccl","rank":1,"world_size":2},)"
                 R"("baseTimeNanoseconds":1717315200000000000,)",
                 0, "ampere_sgemm_128x64_nn"));
};

// The issue's pair: read as one job, it is said to be none, with what proves it (810 days apart,
// no overlap) and the weaker sign beside it (GPU models); --strict refuses it.
TEST(OneRunCliTest, AV100TraceOf2022AndAnA100TraceOf2024AreNotOneRun) {
  const TwoJobs jobs;
  const CommandResult text = Analyze({jobs.v100, jobs.a100});
  EXPECT_EQ(text.exit_status, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("\nNOT ONE RUN: ranks 0 and 1 are files of different runs: "));
  EXPECT_THAT(text.out, HasSubstr("\nmay not be one run: ranks 0 and 1 (a sign only"));
  EXPECT_THAT(text.err,
              HasSubstr("warning: ranks 0 and 1 are files of different runs: rank 0's events end "
                        "810 days before rank 1's begin (2022-03-14, 2024-06-02), without "
                        "overlap\n"));

  const CommandResult json = Analyze({jobs.v100, jobs.a100, "--format", "json"});
  EXPECT_EQ(json.exit_status, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr(R"("cannot_be_one_run": true)"));
  EXPECT_THAT(json.out, HasSubstr(R"("detail": "rank 0's events end 810 days before rank 1's )"
                                  R"(begin (2022-03-14, 2024-06-02), without overlap")"));
  EXPECT_THAT(json.out, ContainsRegex(R"("kind": "devices",[[:space:]]*"conclusive": false)"));
  EXPECT_THAT(json.out, HasSubstr(R"("detail": "rank 0 runs on Tesla V100-SXM2-16GB, rank 1 )"
                                  R"(on NVIDIA A100-SXM4-40GB")"));

  const CommandResult strict = Analyze({jobs.v100, jobs.a100, "--strict"});
  EXPECT_EQ(strict.exit_status, 2);
  EXPECT_EQ(strict.out, "");
  EXPECT_THAT(strict.err,
              HasSubstr("bubblescope: --strict: ranks 0 and 1 are files of different runs: "));

  // Each file alone is one run, and says nothing of the kind.
  const CommandResult alone = Analyze({jobs.v100, "--format", "json"});
  EXPECT_THAT(alone.out, HasSubstr(R"("cannot_be_one_run": false)"));
  EXPECT_THAT(alone.out, HasSubstr(R"("signs": [])"));
}

// Bundled runs of the same world size mixed: torch runs recorded 15 days apart (no overlap),
// and a 2x2 job's rank 0 beside a 4-stage pipeline's ranks, whose process group "1" has other
// members. Each bundled set alone is one run.
TEST(OneRunCliTest, BundledRunsMixedAreNotOneRun) {
  const CommandResult days =
      Analyze({Bundled("torch_cpu/gpipe_p2_m4/rank0.json.gz"),
               Bundled("torch_cpu/recipe_1f1b_p2_m4/rank1.json.gz"), "--format", "json"});
  EXPECT_EQ(days.exit_status, 0) << days.err;
  EXPECT_THAT(days.out, HasSubstr(R"("cannot_be_one_run": true)"));
  EXPECT_THAT(days.out, HasSubstr(R"(rank 0's events end 15 days before rank 1's begin )"
                                  R"((2026-11-22, 2026-12-07), without overlap)"));

  const CommandResult groups =
      Analyze({Bundled("torch_cpu/dp2_1f1b_p2_m4/rank0.json.gz"),
               Bundled("torch_cpu/loopedbfs_p4_v2_m4/rank1.json.gz"),
               Bundled("torch_cpu/loopedbfs_p4_v2_m4/rank2.json.gz"),
               Bundled("torch_cpu/loopedbfs_p4_v2_m4/rank3.json.gz"), "--strict"});
  EXPECT_EQ(groups.exit_status, 2);
  EXPECT_THAT(groups.err, HasSubstr("ranks 0 and 1 are files of different runs: rank 0 declares "
                                    "process group '1' as ranks 0,2, rank 1 as ranks 0,1,2,3\n"));

  for (const char* set : {"torch_cpu/dp2_1f1b_p2_m4", "torch_cpu/recipe_1f1b_p2_m4",
                          "torch_cpu/recipe_cycles_1f1b_p2_m4", "sim_1f1b_p4_m8"}) {
    const CommandResult whole = Analyze({Bundled(set), "--format", "json"});
    EXPECT_EQ(whole.exit_status, 0) << set << ": " << whole.err;
    EXPECT_THAT(whole.out, HasSubstr(R"("signs": [])")) << set;
  }
}

// A trace profiled without ProfilerActivity.CUDA: three cudaLaunchKernel calls and the CUDA
// profiler's range, no kernel. Its rank is a CPU rank, said so in the headline with the launches
// counted, counted in the JSON report, and refused by --strict.
TEST(OneRunCliTest, LaunchesWithoutDeviceActivityAreSaid) {
  std::string events =
      R"({"ph":"X","cat":"cuda_profiler_range","name":"cuda_profiler_range","pid":0,"tid":0,)"
      R"("ts":0,"dur":900},)"
      R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,)"
      R"("dur":900})";
  for (int i = 0; i < 3; ++i) {
    absl::StrAppend(&events, R"(,{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,)",
                    R"("ts":)", 100 + 200 * i, R"(,"dur":150},)",
                    R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,)",
                    R"("tid":1,"ts":)", 110 + 200 * i, R"(,"dur":20,"args":{"correlation":)", i + 1,
                    "}}");
  }
  TempDir dir;
  const std::string path =
      dir.Write("rank0.pt.trace.json",
                absl::StrCat(R"({"schemaVersion":1,"baseTimeNanoseconds":1717315200000000000,)",
                             R"("traceEvents":[)", events, "]}"));
  const CommandResult text = Analyze({path});
  EXPECT_EQ(text.exit_status, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("analyze: 1 rank (0 gpu, 1 cpu)"));
  EXPECT_THAT(text.out, HasSubstr("\nNO DEVICE ACTIVITY: rank 0 launched 3 kernels but its file "));
  EXPECT_THAT(text.err, HasSubstr("warning: " + path +
                                  ": 3 kernel launch (cudaLaunchKernel, ...) "
                                  "on a rank whose file records no device activity"));

  const CommandResult json = Analyze({path, "--format", "json"});
  EXPECT_THAT(json.out, ContainsRegex(R"("launch_without_device_activity": \{[[:space:]]*)"
                                      R"("count": 3,)"));
  EXPECT_EQ(Analyze({path, "--strict"}).exit_status, 2);

  // The bundled CPU runs launch nothing: no such line.
  const CommandResult cpu = Analyze({Bundled("torch_cpu/gpipe_p2_m4")});
  EXPECT_THAT(cpu.out, Not(HasSubstr("NO DEVICE ACTIVITY")));
}

}  // namespace
}  // namespace bubblescope
