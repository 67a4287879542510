// The pipeline block of the analyze report, text and JSON, from hand-built figures: keys,
// units (ns -> µs), nulls when the shape is unknown, and the summary's own keys kept.
#include "report/pipeline_report.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/job_report.h"
#include "simdjson.h"

namespace bubblescope {
namespace {

using ::testing::HasSubstr;

// Two ranks, one complete iteration of 10 ms and one incomplete.
job::Pipeline TwoRanks(bool with_shape) {
  job::Pipeline pipeline;
  bubble::Result& bubble = pipeline.bubble;
  bubble.ranks = {3, 5};
  bubble.complete_iterations = 1;
  bubble.step_source = iterations::StepSource::kRepeatingSchedule;
  bubble.capacity = 20'000'000;
  bubble.idle = 9'000'000;
  bubble.bubble_fraction = 0.45;
  bubble.latency = {1, 10'000'000, 10'000'000, 10'000'000};
  bubble::IterationFigures first;
  first.number = 4;
  first.complete = true;
  first.window_start = 1'000'000;
  first.window_end = 11'000'000;
  first.bubble_fraction = 0.45;
  bubble::IterationFigures second;
  second.number = 5;
  second.window_start = 11'000'000;
  second.window_end = 12'500'001;
  bubble.iterations = {first, second};
  for (int32_t rank : bubble.ranks) {
    bubble::RankTotals totals;
    totals.rank = rank;
    totals.window = 10'000'000;
    totals.split.compute = 5'500'123;
    totals.split.idle = 4'499'877;
    totals.split.fill = 1'000'000;
    totals.split.drain = 2'000'000;
    totals.split.stall = 1'499'877;
    totals.split.comm_wait = 1'000'000;
    totals.split.empty = 499'877;
    totals.bubble_fraction = 0.4499877;
    totals.memory = {rank == 3 ? 1024 : -1, rank == 3 ? 2048 : -1};
    bubble.per_rank.push_back(totals);
  }
  if (with_shape) {
    schedule_inference::Result shape;
    shape.p = 2;
    shape.v = 1;
    shape.m = 4;
    shape.family = schedule_inference::ScheduleFamily::k1F1B;
    shape.schedule_source = pipeline::ShapeSource::kP2p;
    shape.stage_order_source = pipeline::ShapeSource::kP2p;
    shape.stage_order = {5, 3};  // rank 5 is stage 0
    shape.stages.resize(2);
    shape.stages[0].stage = 0;
    shape.stages[0].rank = 5;
    shape.stages[0].forward = {8, 1'000'400.4, 1'100'000};
    shape.stages[0].backward = {8, 2'000'000.0, 2'100'000};
    shape.stages[0].weight_grad = {8, 500'000.25, 600'000};
    shape.stages[1].stage = 1;
    shape.stages[1].rank = 3;
    shape.slowest_stage = 0;
    shape.slowest_rank = 5;
    shape.notes = {"p = 2 and no forward ops to count: v > 1 is not visible, v = 1 assumed"};
    pipeline.shape = shape;
    pipeline.ideal = pipeline::IdealBubbleOf(shape);
    // As the job driver stores it: 45% measured against 20%.
    pipeline.excess_bubble_fraction = 0.25;
  }
  // The driver's stage order, known here only with the shape.
  pipeline.crossrank.pipeline.order.ranks = {5, 3};
  pipeline.crossrank.pipeline.order.known = with_shape;
  findings::Finding small{
      findings::Kind::kCommWait, Severity::kWarning, "rank 3 waited", {3}, 1'000'000};
  findings::Finding large{
      findings::Kind::kPipelineDepth, Severity::kInfo, "depth", {3, 5}, 4'000'000};
  pipeline.findings.findings = {large, small};
  // The depth's cause predicts a saving of 1.5 ms; the wait has no cause that explains it.
  root_causes::RootCause depth{.cause = root_causes::Cause::kScheduleDepth,
                               .severity = Severity::kInfo,
                               .ranks = {3, 5},
                               .cost_per_iteration_ns = 4'000'000,
                               .saving_per_iteration_ns = 1'500'000,
                               .iteration_before_ns = 10'000'000,
                               .before_is_measured = false,
                               .iteration_after_ns = 8'500'000,
                               .summary = "the schedule's own fill and drain",
                               .fix = "the same samples in m=8 microbatches",
                               .next_step = "try it",
                               .findings = {0}};
  root_causes::RootCause unexplained{.cause = root_causes::Cause::kUnattributed,
                                     .severity = Severity::kWarning,
                                     .ranks = {3},
                                     .cost_per_iteration_ns = 1'000'000,
                                     .saving_per_iteration_ns = std::nullopt,
                                     .iteration_before_ns = 0,
                                     .before_is_measured = false,
                                     .iteration_after_ns = 0,
                                     .summary = "ranks wait",
                                     .fix = "no cause identified",
                                     .next_step = "read the links table",
                                     .findings = {1}};
  pipeline.causes.causes = {depth, unexplained};
  return pipeline;
}

job::Result Job(std::vector<job::Pipeline> pipelines) {
  job::Result result;
  result.pipelines = std::move(pipelines);
  return result;
}

simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& text) {
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS) << text;
  return doc;
}

TEST(PipelineReportJsonTest, KnownShape) {
  job::Pipeline pipeline = TwoRanks(true);
  pipeline.findings.findings.pop_back();
  bubblescope::pipeline::FitSummary fit;
  fit.used = true;
  fit.program_ops = 16;
  fit.placed = 12;  // one of 2 steps fitted
  fit.weak = 2;
  fit.hinted_left_out = 3;
  fit.steps = 2;
  fit.steps_fitted = 1;
  fit.by_evidence[static_cast<size_t>(bubblescope::pipeline::FitEvidence::kTransfers)] = 8;
  fit.by_evidence[static_cast<size_t>(bubblescope::pipeline::FitEvidence::kOtherNames)] = 2;
  fit.by_evidence[static_cast<size_t>(bubblescope::pipeline::FitEvidence::kWeak)] = 2;
  pipeline.shape->op_fit = fit;
  job::Pipeline other = TwoRanks(true);
  other.findings.findings.erase(other.findings.findings.begin());
  absl::StatusOr<std::string> json = AnalyzeJson(Job({pipeline, other}), SummaryReportOptions{});
  ASSERT_TRUE(json.ok()) << json.status();
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, *json);
  EXPECT_EQ(std::string_view(doc["schema"]), "bubblescope.analyze/1");
  EXPECT_EQ(simdjson::dom::array(doc["ranks"]).size(), 0u);
  EXPECT_EQ(uint64_t(doc["import_issues"]["error"]), 0u);

  simdjson::dom::element p = simdjson::dom::array(doc["pipelines"]).at(0);
  EXPECT_EQ(int64_t(p["stages"]), 2);
  EXPECT_EQ(int64_t(p["microbatches"]), 4);
  EXPECT_EQ(int64_t(p["virtual_stages"]), 1);
  EXPECT_EQ(std::string_view(p["schedule"]), "1f1b");
  EXPECT_EQ(std::string_view(p["schedule_source"]), "p2p");
  simdjson::dom::array notes = p["schedule_notes"];
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(std::string_view(notes.at(0)),
            "p = 2 and no forward ops to count: v > 1 is not visible, v = 1 assumed");
  simdjson::dom::element op_fit = p["op_fit"];
  EXPECT_TRUE(bool(op_fit["used"]));
  EXPECT_EQ(int64_t(op_fit["program_ops"]), 16);
  EXPECT_EQ(int64_t(op_fit["placed"]), 12);
  EXPECT_EQ(int64_t(op_fit["unplaced"]), 4);
  EXPECT_EQ(int64_t(op_fit["weak"]), 2);
  EXPECT_EQ(int64_t(op_fit["backward_kernels_left_out"]), 3);
  EXPECT_DOUBLE_EQ(double(op_fit["score"]), 10.0 / 16.0);  // (placed - weak) / program ops
  EXPECT_EQ(int64_t(op_fit["steps"]), 2);
  EXPECT_EQ(int64_t(op_fit["steps_fitted"]), 1);
  EXPECT_EQ(int64_t(op_fit["evidence"]["transfers"]), 8);
  EXPECT_EQ(int64_t(op_fit["evidence"]["phase_hints"]), 0);
  EXPECT_EQ(int64_t(op_fit["evidence"]["own_kernel_names"]), 0);
  EXPECT_EQ(int64_t(op_fit["evidence"]["other_stages_kernel_names"]), 2);
  EXPECT_EQ(int64_t(op_fit["evidence"]["weak"]), 2);
  // The second pipeline's shape has no fit (annotated, or not modelled): null.
  EXPECT_TRUE(simdjson::dom::array(doc["pipelines"]).at(1)["op_fit"].is_null());
  EXPECT_DOUBLE_EQ(double(p["bubble_fraction"]), 0.45);
  EXPECT_DOUBLE_EQ(double(p["theoretical_bubble_fraction"]), 0.2);  // 1 / (4 + 1)
  EXPECT_NEAR(double(p["excess_bubble_fraction"]), 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(double(p["latency_us"]["p50"]), 10000.0);
  EXPECT_EQ(int64_t(p["complete_iterations"]), 1);
  EXPECT_EQ(std::string_view(p["iteration_source"]), "repeating_schedule");
  simdjson::dom::array iterations = p["iterations"];
  ASSERT_EQ(iterations.size(), 2u);
  EXPECT_EQ(int64_t(iterations.at(1)["step"]), 5);
  EXPECT_FALSE(bool(iterations.at(1)["complete"]));
  EXPECT_DOUBLE_EQ(double(iterations.at(1)["window_us"]), 1500.001);
  EXPECT_EQ(int64_t(p["slowest_stage"]), 0);
  EXPECT_TRUE(p["slowest_stage_effect"].is_null());

  simdjson::dom::element rank3 = simdjson::dom::array(p["rank_stats"]).at(0);
  EXPECT_EQ(int64_t(rank3["rank"]), 3);
  EXPECT_EQ(int64_t(rank3["stage"]), 1);
  EXPECT_DOUBLE_EQ(double(rank3["compute_us"]), 5500.123);
  EXPECT_DOUBLE_EQ(double(rank3["empty_us"]), 499.877);
  EXPECT_EQ(int64_t(rank3["peak_allocated_bytes"]), 1024);
  EXPECT_TRUE(rank3["fwd_us_per_microbatch"].is_null());  // stage 1 has no ops
  simdjson::dom::element rank5 = simdjson::dom::array(p["rank_stats"]).at(1);
  EXPECT_EQ(int64_t(rank5["stage"]), 0);
  EXPECT_TRUE(rank5["peak_reserved_bytes"].is_null());
  EXPECT_DOUBLE_EQ(double(rank5["fwd_us_per_microbatch"]), 1000.4);
  EXPECT_DOUBLE_EQ(double(rank5["bwd_us_per_microbatch"]), 2000.0);
  EXPECT_DOUBLE_EQ(double(rank5["wgt_us_per_microbatch"]), 500.0);  // to the ns, as F and B

  // Both pipelines' findings, largest cost first, although the larger came second.
  simdjson::dom::array findings = doc["findings"];
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(std::string_view(findings.at(0)["kind"]), "pipeline_depth");
  EXPECT_DOUBLE_EQ(double(findings.at(0)["cost_us"]), 4000.0);
  EXPECT_EQ(simdjson::dom::array(findings.at(1)["ranks"]).size(), 1u);
}

TEST(PipelineReportJsonTest, SlowestStageEffectInMicroseconds) {
  job::Pipeline pipeline = TwoRanks(true);
  pipeline.slowest_stage_effect = rebalance::ImbalanceEffect{.stage = 0,
                                                             .iteration_ns = 57'000'123,
                                                             .bubble_fraction = 0.5,
                                                             .iteration_at_mean_ns = 39'000'000,
                                                             .bubble_fraction_at_mean = 0.25};
  absl::StatusOr<std::string> json = AnalyzeJson(Job({pipeline}), SummaryReportOptions{});
  ASSERT_TRUE(json.ok()) << json.status();
  simdjson::dom::parser parser;
  simdjson::dom::element effect =
      simdjson::dom::array(Parse(parser, *json)["pipelines"]).at(0)["slowest_stage_effect"];
  EXPECT_EQ(int64_t(effect["stage"]), 0);
  EXPECT_DOUBLE_EQ(double(effect["iteration_us"]), 57000.123);
  EXPECT_DOUBLE_EQ(double(effect["bubble_fraction"]), 0.5);
  EXPECT_DOUBLE_EQ(double(effect["iteration_at_mean_us"]), 39000.0);
  EXPECT_DOUBLE_EQ(double(effect["bubble_fraction_at_mean"]), 0.25);
}

TEST(PipelineReportJsonTest, RootCausesCarryTheirFindingsAndSavings) {
  absl::StatusOr<std::string> json = AnalyzeJson(Job({TwoRanks(true)}), SummaryReportOptions{});
  ASSERT_TRUE(json.ok()) << json.status();
  simdjson::dom::parser parser;
  simdjson::dom::element p = simdjson::dom::array(Parse(parser, *json)["pipelines"]).at(0);
  simdjson::dom::array causes = p["root_causes"];
  ASSERT_EQ(causes.size(), 2u);
  simdjson::dom::element depth = causes.at(0);
  EXPECT_EQ(std::string_view(depth["cause"]), "schedule_depth");
  EXPECT_EQ(std::string_view(depth["severity"]), "info");
  EXPECT_DOUBLE_EQ(double(depth["cost_per_iteration_us"]), 4000.0);
  EXPECT_DOUBLE_EQ(double(depth["saving_per_iteration_us"]), 1500.0);
  EXPECT_DOUBLE_EQ(double(depth["iteration_before_us"]), 10000.0);
  EXPECT_EQ(std::string_view(depth["iteration_before_source"]), "modelled");
  EXPECT_DOUBLE_EQ(double(depth["iteration_after_fix_us"]), 8500.0);
  simdjson::dom::array depth_findings = depth["findings"];
  ASSERT_EQ(depth_findings.size(), 1u);
  EXPECT_EQ(std::string_view(depth_findings.at(0)["kind"]), "pipeline_depth");
  simdjson::dom::element unexplained = causes.at(1);
  EXPECT_EQ(std::string_view(unexplained["cause"]), "unattributed");
  EXPECT_TRUE(unexplained["saving_per_iteration_us"].is_null());
  EXPECT_EQ(unexplained["iteration_before_us"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(std::string_view(simdjson::dom::array(unexplained["findings"]).at(0)["kind"]),
            "comm_wait");
  // No what-if model on this hand-built pipeline: null, with why.
  EXPECT_TRUE(p["whatif_model"].is_null());
}

TEST(PipelineReportJsonTest, UnknownShapeIsNull) {
  for (int indent : {0, 2}) {
    SummaryReportOptions options;
    options.json_indent = indent;
    absl::StatusOr<std::string> json = AnalyzeJson(Job({TwoRanks(false)}), options);
    ASSERT_TRUE(json.ok()) << json.status();
    simdjson::dom::parser parser;
    simdjson::dom::element p = simdjson::dom::array(Parse(parser, *json)["pipelines"]).at(0);
    for (const char* key :
         {"stages", "microbatches", "virtual_stages", "schedule", "schedule_source",
          "theoretical_bubble_fraction", "excess_bubble_fraction", "slowest_stage",
          "slowest_stage_effect", "op_fit"}) {
      EXPECT_TRUE(p[key].is_null()) << key;
    }
    EXPECT_EQ(simdjson::dom::array(p["schedule_notes"]).size(), 0u);
    EXPECT_DOUBLE_EQ(double(p["bubble_fraction"]), 0.45);
    EXPECT_TRUE(simdjson::dom::array(p["rank_stats"]).at(0)["stage"].is_null());
  }
}

TEST(PipelineReportTextTest, ShowsShapeBubbleAndTables) {
  std::string text = PipelineText({TwoRanks(true)});
  EXPECT_THAT(text, HasSubstr("p=2 m=4 v=1 schedule 1f1b (from p2p; stage order from p2p)\n"
                              "  note: p = 2 and no forward ops to count: v > 1 is not visible, "
                              "v = 1 assumed\n"));
  EXPECT_THAT(text, HasSubstr("bubble 45.0% measured vs 20.0% theoretical: excess 25.0 points"));
  EXPECT_THAT(text, HasSubstr("1 complete of 2 (from repeating_schedule); latency p50 10.000 ms"));
  EXPECT_THAT(text, HasSubstr("comm_wait_ms"));
  EXPECT_THAT(text, HasSubstr("1.000 / 1.100 (8)"));  // stage 0 forward: mean / p90 (count)
  EXPECT_THAT(
      text,
      HasSubstr(
          "  causes, by the iteration time fixing each is predicted to save (docs/findings.md):\n"
          "    1. schedule_depth (info): the schedule's own fill and drain\n"
          "       costs 4.000 ms of rank time per iteration; fixing it (the same samples in m=8 "
          "microbatches) is predicted to save 1.500 ms per iteration (modelled 10.000 ms -> "
          "8.500 ms)\n"
          "       next: try it\n"
          "       - info pipeline_depth: depth\n"
          "    2. unattributed (warning): ranks wait\n"
          "       costs 1.000 ms of rank time per iteration; saving not predicted (no cause "
          "identified)\n"
          "       next: read the links table\n"
          "       - warning comm_wait: rank 3 waited\n"));
  EXPECT_THAT(PipelineText({TwoRanks(false)}), HasSubstr("shape and schedule unknown"));
}

// A job without a pipeline whose collectives table counts point-to-point kinds (an NCCL
// SendRecv kernel of unknown direction, as sample_traces/gpu_h100_collector/nccl_self) is not
// told that no rank has point-to-point traffic: the words agree with the table below them.
TEST(JobTextTest, NoPipelineAgreesWithThePointToPointKindsInTheTable) {
  job::JobSummary job;
  job.ranks_without_p2p = {0};
  EXPECT_THAT(JobText(job), HasSubstr("\njob: no pipeline found (no rank has point-to-point "
                                      "traffic)\n  ranks in no pipeline (no send or receive "
                                      "between stages): 0\n"));
  job.collectives = {collectives::Summary{.kind = "sendrecv", .count = 12},
                     collectives::Summary{.kind = "all_reduce", .count = 4}};
  const std::string text = JobText(job);
  EXPECT_THAT(text, HasSubstr("\njob: no pipeline found (the point-to-point traffic (sendrecv) "
                              "holds no send or receive between pipeline stages)\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("no rank has point-to-point traffic")));
  EXPECT_THAT(text, HasSubstr("  sendrecv"));
}

}  // namespace
}  // namespace bubblescope
