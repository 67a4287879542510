// diff and gate read a side that is traces from the job result directly (AnalyzeFigures); a side
// that is a report through the reader. The two must be the same figures, every member and every
// bit of every double, or a diff of a trace against its own report would show changes. Each
// case fills RunFigures both ways and compares a dump of every member, doubles as hex floats.
#include <cctype>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compare/report_reader.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "report/pipeline_report.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

// Every bit of a double: %a is exact.
std::string Hex(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%a", value);
  return buffer;
}
std::string Hex(const std::optional<double>& value) {
  return value.has_value() ? Hex(*value) : "null";
}
template <typename T>
std::string Opt(const std::optional<T>& value) {
  return value.has_value() ? absl::StrCat(*value) : "null";
}

// Each member of RunFigures on a line of its own, written out here by hand (not through the
// schema's rows), so a member a row forgets shows as a line that differs.
std::string Dump(const compare::RunFigures& run) {
  std::vector<std::string> lines;
  auto line = [&](auto&&... parts) { lines.push_back(absl::StrCat(parts...)); };
  line("source ", run.source, " schema ", run.schema_major, ".", run.schema_minor, " tool ",
       run.tool_version);
  for (size_t p = 0; p < run.pipelines.size(); ++p) {
    const compare::PipelineFigures& f = run.pipelines[p];
    line("pipeline ", p, " ranks ", absl::StrJoin(f.ranks, ","), " p ", Opt(f.stages), " m ",
         Opt(f.microbatches), " v ", Opt(f.virtual_stages), " schedule ",
         f.schedule.value_or("null"));
    line("  bubble ", Hex(f.bubble_fraction), " theoretical ", Hex(f.theoretical_bubble_fraction),
         " excess ", Hex(f.excess_bubble_fraction));
    line("  latency ", Hex(f.latency_p50_us), " ", Hex(f.latency_p90_us), " ",
         Hex(f.latency_max_us), " complete ", f.complete_iterations, " why [",
         f.no_complete_iteration, "]");
    for (const compare::IterationFigures& i : f.iterations) {
      line("  iteration ", i.step, " ", i.complete, " ", Hex(i.window_us), " ",
           Hex(i.bubble_fraction));
    }
    for (const compare::StageFigures& s : f.stage_figures) {
      line("  rank ", s.rank, " stage ", Opt(s.stage), " ", Hex(s.bubble_fraction), " ",
           Hex(s.peak_allocated_bytes), " ", Hex(s.peak_reserved_bytes), " ", Hex(s.forward_us),
           " ", Hex(s.backward_us), " ", Hex(s.weight_grad_us));
    }
    for (const compare::LinkFigures& l : f.links) {
      line("  link ", l.src, "->", l.dst, " ", Hex(l.transfer_us_median), " ", Hex(l.gbps_median),
           " ", Hex(l.wait_us), " ", l.slow);
    }
    for (const compare::FindingFigures& x : f.findings) {
      line("  finding ", x.kind, " ", x.severity, " [", x.message, "] ",
           absl::StrJoin(x.ranks, ","), " ", Hex(x.cost_us));
    }
    line("  rebalance ", absl::StrJoin(f.rebalance_layers_after, ","), " problem [",
         f.whatif_model_problem, "]");
    if (f.whatif_model.has_value()) {
      const whatif::Model& m = *f.whatif_model;
      line("  model ", static_cast<int>(m.schedule), " ", m.p, " ", m.m, " ", m.v, " ",
           m.separate_weight_grad, m.multi_chunk_zero_bubble, m.batched_p2p, " ",
           m.measured_iteration_ns, " ", Hex(m.measured_bubble_fraction));
      for (const whatif::StageModel& s : m.stages) {
        line("  model stage ", s.rank, " ", Hex(s.forward_ns), " ", Hex(s.backward_ns), " ",
             Hex(s.weight_grad_ns), " ", Hex(s.recompute_ns), " ", s.memory_floor_bytes, " ",
             s.memory_peak_bytes, " ", s.memory_headroom_bytes, " ", s.layers);
      }
      for (const whatif::LinkCost& l : m.links) {
        line("  model link ", l.src_stage, "->", l.dst_stage, " ", l.transfer_ns);
      }
    } else {
      line("  model null");
    }
  }
  return absl::StrJoin(lines, "\n");
}

// Fills RunFigures from `job` both ways and compares every member; the direct figures.
compare::RunFigures ExpectTheSameFigures(const job::Result& job, const std::string& path) {
  SummaryReportOptions report;
  report.tool_version = "9.8.7";
  report.json_indent = 0;
  absl::StatusOr<std::string> json = AnalyzeJson(job, report);
  EXPECT_TRUE(json.ok()) << json.status();
  absl::StatusOr<compare::RunFigures> read =
      compare::ReadAnalyzeReport(path, json.ok() ? *json : "");
  EXPECT_TRUE(read.ok()) << read.status();
  absl::StatusOr<compare::RunFigures> direct = AnalyzeFigures(job, path, "9.8.7");
  EXPECT_TRUE(direct.ok()) << direct.status();
  if (!read.ok() || !direct.ok()) return {};
  EXPECT_EQ(Dump(*direct), Dump(*read));
  return *std::move(direct);
}

job::Result Analyze(const std::vector<std::string>& paths, const job::Options& options) {
  LoadOptions load;
  load.jobs = 2;
  absl::StatusOr<Trace> trace = LoadTrace(paths, load);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return {};
  absl::StatusOr<job::Result> job = job::Analyze(*trace, options);
  EXPECT_TRUE(job.ok()) << job.status();
  return job.ok() ? *std::move(job) : job::Result{};
}

struct Case {
  std::string set;                        // under sample_traces/
  std::vector<int32_t> layers_per_stage;  // a rebalance suggestion, where given
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.set; }

class FiguresFromResultTest : public ::testing::TestWithParam<Case> {};

TEST_P(FiguresFromResultTest, TheResultAndItsReportGiveTheSameFigures) {
  const std::string path = absl::StrCat(BUBBLESCOPE_SOURCE_DIR, "/sample_traces/", GetParam().set);
  job::Options options;
  options.layers_per_stage = GetParam().layers_per_stage;
  const compare::RunFigures figures = ExpectTheSameFigures(Analyze({path}, options), path);
  // The figures are real ones, not two empty reads agreeing.
  ASSERT_FALSE(figures.pipelines.empty());
  const compare::PipelineFigures& first = figures.pipelines.front();
  EXPECT_FALSE(first.iterations.empty());
  EXPECT_EQ(first.stage_figures.size(), first.ranks.size());
  EXPECT_GT(first.latency_p50_us, 0.0);
  EXPECT_FALSE(first.links.empty());
  EXPECT_TRUE(first.whatif_model.has_value()) << first.whatif_model_problem;
  if (!GetParam().layers_per_stage.empty()) {
    EXPECT_FALSE(first.rebalance_layers_after.empty()) << "no suggestion to compare";
  }
}

// A pipeline without a complete iteration (the 1F1B job of sim_1f1b_p4_m8 with rank 2's file
// cut at half its bytes, as tests/job/cut_short_rank_test.cc): its bubble and latency are null
// in the report and stay 0 in both readings, with the same reason.
TEST(FiguresFromResultTest, APipelineWithoutACompleteIterationReadsTheSame) {
  const std::string run = std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/sim_1f1b_p4_m8";
  testing::TempDir dir;
  for (int rank : {0, 1, 3}) {
    const std::string name = "rank" + std::to_string(rank) + ".pt.trace.json.gz";
    dir.Write(name, testing::ReadFile(run + "/" + name));
  }
  const std::string whole = testing::WithClockBaseFirst(
      testing::Gunzip(testing::ReadFile(run + "/rank2.pt.trace.json.gz")));
  dir.Write("rank2.pt.trace.json", whole.substr(0, whole.size() / 2));
  const compare::RunFigures figures = ExpectTheSameFigures(Analyze({dir.path()}, {}), dir.path());
  ASSERT_EQ(figures.pipelines.size(), 1u);
  const compare::PipelineFigures& pipeline = figures.pipelines.front();
  EXPECT_EQ(pipeline.complete_iterations, 0);
  EXPECT_FALSE(pipeline.no_complete_iteration.empty());
  EXPECT_EQ(pipeline.bubble_fraction, 0.0);
  EXPECT_EQ(pipeline.latency_p50_us, 0.0);
  EXPECT_EQ(pipeline.excess_bubble_fraction, std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(
    SampleSets, FiguresFromResultTest,
    ::testing::Values(Case{"sim_1f1b_p4_m8", {}}, Case{"sim_interleaved_p4_v2_m8", {}},
                      Case{"sim_1f1b_slow_link_p4_m8", {}}, Case{"sim_fwd_only_p4_m8", {}},
                      Case{"sim_1f1b_imbalanced_p4_m8", {8, 8, 8, 8}},
                      Case{"torch_cpu/1f1b_p4_m8", {}}, Case{"torch_cpu/dualpipev_p2_v2_m8", {}},
                      Case{"torch_cpu/interleaved_p3_v2_m3_memory", {}},
                      Case{"torch_cpu/1f1b_p2_m4_recompute", {}}),
    [](const ::testing::TestParamInfo<Case>& param) {
      std::string name = param.param.set;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

}  // namespace
}  // namespace bubblescope
