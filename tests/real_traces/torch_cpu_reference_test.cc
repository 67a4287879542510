// Every real PyTorch CPU run in sample_traces/torch_cpu through the job driver, against the
// reference sample_traces/torch_cpu/reference.py worked out from the run's trace files alone
// (plain Python over the JSON, docs/bubble.md's formulas, exact nanoseconds; truth.json
// "reference"): the pipelines, p, m, v, schedule family, stage order, the complete iterations
// (ProfilerStep ranges, or the repeating schedule of the run recorded without them), each rank's
// compute, the bubble, each rank's comm_wait (its stall under communication, the gloo:* ranges of
// its model thread included as issue 24 asks), each rank's fill (idle until its first op of the
// schedule: the first aten::linear of these Linear+ReLU stages, the batch split and buffer
// allocation before it being work), no clock offset (every run was recorded on one
// machine: one clock) and no unmatched point-to-point transfer (every send has its receive).
//
// The bubble tolerance is 0.5 percentage points, the project's accuracy bar for independently
// generated jobs. With the recorded clocks the two computations follow one published
// definition on the same integer nanoseconds and agree to rounding; what the tolerance leaves
// room for is an alignment the analyzer may apply within the ranks' scheduling jitter (tens of
// microseconds on windows of tens to hundreds of milliseconds, far below 0.5 points), while a
// clock shifted by milliseconds, a wrong model thread or a misassigned step moves the bubble by
// whole points. Compute must agree to the nanosecond: it does not depend on clocks. comm_wait,
// also independent of clocks (it lies between a rank's own first and last compute), gets the
// same 0.5 points of the window per rank, for definitions that differ at the edges (a gloo
// range's share in the iteration it starts in).
//
// Checks today's analyzer fails are listed in kKnownGaps with what it measured and the item of
// issue 24 that fixes them; each is expected to fail, so one that starts passing fails here too
// and its entry is removed (the expectation then holds as for every other run).
#include <cmath>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "simdjson.h"
#include "support/job_helpers.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

const std::string kRunsDir = std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/";
constexpr double kBubbleTolerance = 0.005;

// One pipeline of truth.json's "reference", stage order in global ranks.
struct ReferencePipeline {
  std::vector<int32_t> ranks;  // global ranks, stage position order
  int64_t p = 0, m = 0, v = 0;
  std::string schedule;
  std::vector<int32_t> virtual_stage_ranks;  // global rank of virtual stage 0 .. p·v-1
  std::vector<int64_t> compute_ns;           // parallel to `ranks`
  std::vector<int64_t> comm_wait_ns;         // parallel to `ranks`
  std::vector<int64_t> fill_ns;              // parallel to `ranks`
  int64_t window_ns = 0;                     // summed over the complete iterations
  int64_t iterations = 0;                    // complete iterations
  double bubble_fraction = 0.0;
};

std::vector<int32_t> IntList(simdjson::dom::array array) {
  std::vector<int32_t> values;
  for (simdjson::dom::element value : array) values.push_back(static_cast<int32_t>(int64_t(value)));
  return values;
}

std::vector<ReferencePipeline> ReadReference(const std::string& run) {
  const std::string text = testing::ReadFile(kRunsDir + run + "/truth.json");
  simdjson::dom::parser parser;
  simdjson::dom::element truth;
  if (parser.parse(text).get(truth) != simdjson::SUCCESS) {
    ADD_FAILURE() << run << ": truth.json does not parse";
    return {};
  }
  simdjson::dom::element reference;
  if (truth["reference"].get(reference) != simdjson::SUCCESS) {
    ADD_FAILURE() << run << ": truth.json has no reference (run reference.py)";
    return {};
  }
  std::vector<ReferencePipeline> pipelines;
  for (simdjson::dom::element item : simdjson::dom::array(reference["pipelines"])) {
    ReferencePipeline pipeline;
    pipeline.ranks = IntList(item["ranks"]);
    pipeline.p = int64_t(item["p"]);
    pipeline.m = int64_t(item["m"]);
    pipeline.v = int64_t(item["v"]);
    pipeline.schedule = std::string(std::string_view(item["schedule"]));
    for (int32_t position : IntList(item["stage_order"])) {
      pipeline.virtual_stage_ranks.push_back(pipeline.ranks.at(static_cast<size_t>(position)));
    }
    for (simdjson::dom::element ns : simdjson::dom::array(item["compute_ns_per_rank"])) {
      pipeline.compute_ns.push_back(int64_t(ns));
    }
    for (simdjson::dom::element ns : simdjson::dom::array(item["comm_wait_ns_per_rank"])) {
      pipeline.comm_wait_ns.push_back(int64_t(ns));
    }
    for (simdjson::dom::element ns : simdjson::dom::array(item["fill_ns_per_rank"])) {
      pipeline.fill_ns.push_back(int64_t(ns));
    }
    for (simdjson::dom::element iteration : simdjson::dom::array(item["iterations"])) {
      pipeline.window_ns += int64_t(iteration["window_ns"]);
      ++pipeline.iterations;
    }
    pipeline.bubble_fraction = double(item["bubble_fraction"]);
    pipelines.push_back(std::move(pipeline));
  }
  return pipelines;
}

template <typename T>
std::string Join(const std::vector<T>& values) {
  std::ostringstream out;
  for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  return out.str();
}

// One expectation on one run: what the analyzer gave, what the reference says, and whether they
// agree.
struct Check {
  std::string name;
  bool holds = false;
  std::string measured;
  std::string wanted;
};

// The checks of one pipeline, named "<what>" (one pipeline) or "<what>[i]" (several).
void CheckPipeline(const job::Pipeline& got, const ReferencePipeline& want, const std::string& tag,
                   std::vector<Check>* checks) {
  auto add = [&](const std::string& what, bool holds, const std::string& measured,
                 const std::string& wanted) {
    checks->push_back({what + tag, holds, measured, wanted});
  };
  if (!got.shape.has_value()) {
    add("shape", false, "none: " + got.shape_problem, "inferred");
  } else {
    const schedule_inference::Result& shape = *got.shape;
    add("p", shape.p == want.p, std::to_string(shape.p), std::to_string(want.p));
    add("m", shape.m == want.m, std::to_string(shape.m), std::to_string(want.m));
    add("v", shape.v == want.v, std::to_string(shape.v), std::to_string(want.v));
    const std::string family(schedule_inference::ScheduleFamilyName(shape.family));
    add("schedule", family == want.schedule, family, want.schedule);
    add("stage_order", shape.virtual_stage_ranks == want.virtual_stage_ranks,
        Join(shape.virtual_stage_ranks), Join(want.virtual_stage_ranks));
  }
  add("iterations", got.bubble.complete_iterations == want.iterations,
      std::to_string(got.bubble.complete_iterations), std::to_string(want.iterations));
  const double bubble = got.bubble.bubble_fraction;
  add("bubble", std::fabs(bubble - want.bubble_fraction) <= kBubbleTolerance,
      std::to_string(bubble), std::to_string(want.bubble_fraction));
  std::vector<int64_t> compute;
  std::vector<int64_t> comm_wait;
  std::vector<int64_t> fill;
  bool comm_wait_holds = true;
  bool fill_holds = true;
  const double window = static_cast<double>(want.window_ns);
  for (size_t i = 0; i < want.ranks.size(); ++i) {
    const bubble::RankTotals* totals = nullptr;
    for (const bubble::RankTotals& candidate : got.bubble.per_rank) {
      if (candidate.rank == want.ranks[i]) totals = &candidate;
    }
    compute.push_back(totals != nullptr ? totals->split.compute : -1);
    comm_wait.push_back(totals != nullptr ? totals->split.comm_wait : -1);
    fill.push_back(totals != nullptr ? totals->split.fill : -1);
    comm_wait_holds =
        comm_wait_holds && totals != nullptr &&
        std::fabs(static_cast<double>(totals->split.comm_wait - want.comm_wait_ns[i])) <=
            kBubbleTolerance * window;
    fill_holds = fill_holds && totals != nullptr &&
                 std::fabs(static_cast<double>(totals->split.fill - want.fill_ns[i])) <=
                     kBubbleTolerance * window;
  }
  add("compute", compute == want.compute_ns, Join(compute), Join(want.compute_ns));
  add("comm_wait", comm_wait_holds, Join(comm_wait), Join(want.comm_wait_ns));
  add("fill", fill_holds, Join(fill), Join(want.fill_ns));
  std::vector<int64_t> offsets;
  bool recorded_clocks = true;
  for (const clock_alignment::RankOffset& offset : got.crossrank.offsets) {
    offsets.push_back(offset.offset_ns);
    recorded_clocks = recorded_clocks && offset.offset_ns == 0;
  }
  add("clock_offsets", recorded_clocks, Join(offsets) + " ns", "all 0 (one host)");
  size_t unmatched_findings = 0;
  for (const findings::Finding& finding : got.findings.findings) {
    if (finding.kind == findings::Kind::kUnmatchedP2p) ++unmatched_findings;
  }
  add("unmatched_p2p", got.crossrank.unmatched.empty() && unmatched_findings == 0,
      std::to_string(got.crossrank.unmatched.size()) + " pairs, " +
          std::to_string(unmatched_findings) + " findings",
      "none");
}

std::vector<Check> CheckRun(const std::string& run) {
  const std::vector<ReferencePipeline> want = ReadReference(run);
  LoadOptions load;
  load.jobs = 2;
  absl::StatusOr<Trace> trace = LoadTrace({kRunsDir + run}, load);
  if (!trace.ok()) {
    ADD_FAILURE() << run << ": " << trace.status();
    return {};
  }
  const job::Result job = testing::AnalyzeJob(*trace);
  std::vector<Check> checks;
  checks.push_back({"pipelines", job.pipelines.size() == want.size(),
                    std::to_string(job.pipelines.size()), std::to_string(want.size())});
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string tag = want.size() > 1 ? "[" + std::to_string(i) + "]" : "";
    const std::set<int32_t> ranks(want[i].ranks.begin(), want[i].ranks.end());
    const job::Pipeline* found = nullptr;
    for (const job::Pipeline& pipeline : job.pipelines) {
      const std::vector<int32_t>& order = pipeline.crossrank.pipeline.stage_order();
      if (std::set<int32_t>(order.begin(), order.end()) == ranks) found = &pipeline;
    }
    if (found == nullptr) {
      checks.push_back(
          {"pipeline" + tag, false, "no pipeline of these ranks", Join(want[i].ranks)});
      continue;
    }
    CheckPipeline(*found, want[i], tag, &checks);
  }
  return checks;
}

// A check today's analyzer fails: what it measured when this list was written, and the item of
// issue 24 that fixes it.
struct KnownGap {
  std::string run;
  std::string check;
  std::string measured;
  std::string fixed_by;
};

// None today: the last ones, looped BFS read as interleaved (loopedbfs_p4_v2_m4 and
// csv_bfs_p3_v2_m3_order012120), were closed by the family rule for GPipe over several chunks
// per rank (docs/schedule-inference.md). A gap found later is listed here.
const std::vector<KnownGap> kKnownGaps = {};

const KnownGap* FindGap(const std::string& run, const std::string& check) {
  for (const KnownGap& gap : kKnownGaps) {
    if (gap.run == run && gap.check == check) return &gap;
  }
  return nullptr;
}

class TorchCpuReferenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchCpuReferenceTest, JobDriverMatchesTheReference) {
  const std::string& run = GetParam();
  for (const Check& check : CheckRun(run)) {
    SCOPED_TRACE(check.name);
    const KnownGap* gap = FindGap(run, check.name);
    if (gap == nullptr) {
      EXPECT_TRUE(check.holds) << run << " " << check.name << ": analyzer " << check.measured
                               << ", reference " << check.wanted;
    } else {
      EXPECT_FALSE(check.holds) << run << " " << check.name << " now agrees with the reference ("
                                << check.measured << "): " << gap->fixed_by
                                << " fixed it; remove its entry from kKnownGaps";
    }
  }
}

// Every known gap names a run and a check that exist, so none outlives its run.
TEST(TorchCpuReferenceKnownGapsTest, EveryGapNamesABundledCheck) {
  std::set<std::string> runs;
  for (const KnownGap& gap : kKnownGaps) runs.insert(gap.run);
  std::set<std::pair<std::string, std::string>> checks;
  for (const std::string& run : runs) {
    for (const Check& check : CheckRun(run)) checks.insert({run, check.name});
  }
  for (const KnownGap& gap : kKnownGaps) {
    SCOPED_TRACE(gap.run + " " + gap.check);
    EXPECT_TRUE(checks.count({gap.run, gap.check}));
    EXPECT_FALSE(gap.measured.empty());
    EXPECT_FALSE(gap.fixed_by.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    TorchCpu, TorchCpuReferenceTest,
    ::testing::Values(
        // Recorded first (two ranks, one pipeline each but dp2).
        "gpipe_p2_m4", "1f1b_p4_m8", "1f1b_p4_m8_heavy2", "interleaved_p2_v2_m4", "zb_p2_v2_m4",
        "zbv_p2_v2_m4", "dualpipev_p2_v2_m8", "dp2_1f1b_p2_m4", "1f1b_p2_m4_recompute",
        "1f1b_p2_m4_recompute_nr", "gpipe_eval_p2_m4",
        // Every schedule class with p >= 3, custom placements, other profiler set-ups.
        "gpipe_p3_m3_manual", "1f1b_p3_m3_shapes", "loopedbfs_p4_v2_m4",
        "interleaved_p3_v2_m3_memory", "zb_p4_v2_m4_skipfirst", "zbv_p3_v2_m3",
        "dualpipev_p3_v2_m6_tensorboard", "csv_1f1b_p3_m3_order201", "csv_bfs_p3_v2_m3_order012120",
        "gpipe_p2_m2_stack",
        // docs/getting-traces.md's own blocks run as written (recipe.py): one cycle of exactly
        // wait + warmup + active steps, a loop that ends inside the window (an empty last
        // step), and repeat=0 over 11 steps (three cycles, the third ending in an empty step).
        "recipe_gpipe_p4_m8", "recipe_1f1b_p2_m4", "recipe_1f1b_p4_m8_short_loop",
        "recipe_cycles_1f1b_p2_m4"),
    [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

}  // namespace
}  // namespace bubblescope
