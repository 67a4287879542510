// The cross-rank parts of the analyze report from hand-built figures: the link members of a
// pipeline and the job member in JSON (keys, ns -> µs, nulls), and their text lines.
#include "report/link_report.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/job_report.h"
#include "simdjson.h"
#include "text/json_writer.h"

namespace bubblescope {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

job::CrossRankFigures TwoStages() {
  job::CrossRankFigures figures;
  figures.pipeline.order.ranks = {5, 4};
  figures.pipeline.order.known = true;
  figures.offsets = {{.rank = 5,
                      .source = clock_alignment::Source::kReference,
                      .verdict = clock_alignment::Verdict::kSameClock,
                      .aligned = true},
                     {.rank = 4,
                      .host = "node-b",
                      .source = clock_alignment::Source::kRendezvous,
                      .verdict = clock_alignment::Verdict::kApplied,
                      .aligned = true,
                      .offset_ns = -2'500'000,
                      .estimate_ns = -2'500'000,
                      .uncertainty_ns = 1500,
                      .samples = 8}};
  figures.clock_tolerance_ns = 100'000;
  link_stats::Link link;
  link.src = 5;
  link.dst = 4;
  link.transfers = 8;
  link.timed_transfers = 8;
  link.bytes = 8 << 20;
  link.median_message_bytes = 1 << 20;
  link.transfer_median_ns = 83887;
  link.bandwidth_samples = 8;
  link.gbps_median = 100.0;
  link.gbps_p10 = 90.0;
  link.sender_wait_ns = 1000;
  link.receiver_wait_ns = 2'000'000;
  link.slow = true;
  link.reference_gbps = 400.0;
  figures.links.push_back(link);
  figures.stalls.complete_iterations = 2;
  figures.stalls.stalls.push_back(stall_attribution::PeerStall{
      .rank = 4, .peer = 5, .waiting_for_post_ns = 28'000'000, .in_transfer_ns = 2'000'000});
  return figures;
}

// `figures`' link members as one JSON object, parsed into `doc` (which `parser` owns).
void ParseLinkMembers(const job::CrossRankFigures& figures, simdjson::dom::parser& parser,
                      simdjson::dom::element& doc) {
  JsonWriter json;
  json.BeginObject();
  WriteLinkMembers(figures, json);
  json.EndObject();
  absl::StatusOr<std::string> text = json.Finish();
  ASSERT_TRUE(text.ok()) << text.status();
  ASSERT_EQ(parser.parse(*text).get(doc), simdjson::SUCCESS);
}

TEST(LinkReportTest, JsonMembers) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_NO_FATAL_FAILURE(ParseLinkMembers(TwoStages(), parser, doc));
  EXPECT_FALSE(bool(doc["interleaved"]));
  EXPECT_TRUE(bool(doc["peers_recorded"]));
  EXPECT_EQ(int64_t(doc["clock_reference_rank"]), 5);
  EXPECT_DOUBLE_EQ(double(doc["clock_offsets_us"]["4"]), -2500.0);
  EXPECT_DOUBLE_EQ(double(doc["clock_uncertainty_us"]["4"]), 1.5);
  EXPECT_DOUBLE_EQ(double(doc["clock_tolerance_us"]), 100.0);
  simdjson::dom::element evidence = doc["clock_evidence"].at(1);
  EXPECT_EQ(int64_t(evidence["rank"]), 4);
  EXPECT_EQ(std::string_view(evidence["host"]), "node-b");
  EXPECT_EQ(std::string_view(evidence["source"]), "rendezvous");
  EXPECT_EQ(int64_t(evidence["samples"]), 8);
  EXPECT_DOUBLE_EQ(double(evidence["estimate_us"]), -2500.0);
  EXPECT_DOUBLE_EQ(double(evidence["uncertainty_us"]), 1.5);
  EXPECT_TRUE(bool(evidence["applied"]));
  EXPECT_TRUE(bool(evidence["aligned"]));
  EXPECT_EQ(std::string_view(evidence["verdict"]), "applied");
  simdjson::dom::element reference = doc["clock_evidence"].at(0);
  EXPECT_TRUE(reference["host"].is_null());
  EXPECT_EQ(std::string_view(reference["source"]), "reference");
  simdjson::dom::element link = doc["links"].at(0);
  EXPECT_EQ(int64_t(link["src"]), 5);
  EXPECT_EQ(int64_t(link["dst"]), 4);
  EXPECT_EQ(int64_t(link["bytes"]), 8 << 20);
  EXPECT_EQ(int64_t(link["timed_transfers"]), 8);
  EXPECT_DOUBLE_EQ(double(link["transfer_us_median"]), 83.887);
  EXPECT_DOUBLE_EQ(double(link["gbps_median"]), 100.0);
  EXPECT_DOUBLE_EQ(double(link["wait_us"]), 2001.0);  // 1000 + 2 000 000 ns
  EXPECT_TRUE(bool(link["slow"]));
  simdjson::dom::element stall = doc["stall_by_peer"].at(0);
  EXPECT_DOUBLE_EQ(double(stall["per_iteration_us"]), 15000.0);  // 30 ms over 2 iterations
}

TEST(LinkReportTest, TextSaysWhoWaitedForWhom) {
  std::string text = LinkText(TwoStages());
  EXPECT_THAT(text, HasSubstr("clocks aligned to rank 5: rank 5 reference, "
                              "rank 4 -2.500 ms (+/- 1.500 us, rendezvous, 8 samples)\n"));
  EXPECT_THAT(text, Not(HasSubstr("not aligned")));
  EXPECT_THAT(text, HasSubstr("SLOW"));
  // A link that is not slow says so: no blank trailing column, no line ending in spaces.
  job::CrossRankFigures healthy = TwoStages();
  for (link_stats::Link& link : healthy.links) link.slow = false;
  const std::string healthy_text = LinkText(healthy);
  EXPECT_THAT(healthy_text, ContainsRegex("5->4 +0->1 .* +no\n"));
  EXPECT_THAT(healthy_text, Not(HasSubstr(" \n")));
  EXPECT_THAT(text, HasSubstr("stage 1 (rank 4) stalled 15.000 ms per iteration on stage 0 "
                              "(rank 5): 14.000 waiting for it to post, 1.000 in transfer"));
}

// A rank left on its own clock says so, with the estimate it was not given and why, and the
// word "guess"; a rank on the reference's host says so.
TEST(LinkReportTest, UnalignedClocksAreAGuess) {
  job::CrossRankFigures figures = TwoStages();
  figures.pipeline.order.ranks = {5, 4, 6, 7};
  clock_alignment::RankOffset& rank4 = figures.offsets[1];
  rank4.verdict = clock_alignment::Verdict::kHeldBack;
  rank4.aligned = false;
  rank4.offset_ns = 0;
  figures.offsets.push_back({.rank = 6,
                             .source = clock_alignment::Source::kCausalityBounds,
                             .verdict = clock_alignment::Verdict::kLoose,
                             .estimate_ns = 0,
                             .uncertainty_ns = clock_alignment::kUnbounded});
  figures.offsets.push_back({.rank = 7,
                             .host = "node-a",
                             .source = clock_alignment::Source::kSameHost,
                             .verdict = clock_alignment::Verdict::kSameClock,
                             .aligned = true});
  const std::string text = LinkText(figures);
  EXPECT_THAT(text, HasSubstr("clocks aligned to rank 5: rank 5 reference, rank 7 +0.000 ms "
                              "(same host)\n"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "not aligned, each clock a guess (docs/cross-rank.md): "
          "rank 4 kept as recorded (estimate -2.500 ms +/- 1.500 us from rendezvous, 8 samples: "
          "its "
          "estimate holds, but other ranks cannot be aligned, and moving only some clocks could "
          "make the figures between them worse); rank 6 kept as recorded (estimate +0.000 ms +/- "
          "unbounded from causality_bounds, 0 samples: uncertain beyond the 100.000 us an applied "
          "offset may have)\n"));
  // A trace that starts at its own zero is moved by its estimate even so, and says why.
  figures.offsets[2].verdict = clock_alignment::Verdict::kGuessApplied;
  figures.offsets[2].estimate_ns = 1'250'000;
  figures.offsets[2].offset_ns = 1'250'000;
  figures.offsets[2].own_zero = true;
  EXPECT_THAT(LinkText(figures),
              HasSubstr("rank 6 moved by its estimate (estimate +1.250 ms +/- unbounded from "
                        "causality_bounds, 0 samples: loose, but its trace starts at its own "
                        "zero, so its recorded clock says nothing)\n"));
  // A loose estimate far from the recorded clock is moved too, drifting, and says why.
  figures.offsets[2].own_zero = false;
  figures.offsets[2].uncertainty_ns = 300'000;
  figures.offsets[2].source = clock_alignment::Source::kCollectives;
  figures.offsets[2].samples = 8;
  figures.offsets[2].rate = 20e-6;
  figures.offsets[2].anchor_ns = 45'000'000'000;
  EXPECT_THAT(LinkText(figures),
              HasSubstr("rank 6 moved by its estimate (estimate +1.250 ms +/- 300.000 us from "
                        "collectives, 8 samples, +20.00 ppm from 45.000 s: uncertain beyond the "
                        "100.000 us an aligned offset may have, but at least twice its "
                        "uncertainty from the recorded clock, which is surely farther from the "
                        "truth)\n"));
}

// A link whose clocks are too uncertain against its transfers says so, with the uncertainty.
TEST(LinkReportTest, ALinkTheClocksCannotJudge) {
  job::CrossRankFigures figures = TwoStages();
  link_stats::Link& link = figures.links.front();
  link.slow = false;
  link.clock_limited = true;
  link.clock_uncertainty_ns = 304'589;
  link.transfer_median_all_ns = 1'490'429;
  const std::string text = LinkText(figures);
  EXPECT_THAT(text, ContainsRegex("5->4 +0->1 .* +unjudged\n"));
  EXPECT_THAT(text, HasSubstr("link 5->4 cannot be judged: its two clocks are uncertain by "
                              "304.589 us against each other, not well below its transfers "
                              "(median 1490.429 us); no bandwidth, slow link or late sender "
                              "from it\n"));
}

TEST(LinkReportTest, UnknownSizesShowADashNotZero) {
  job::CrossRankFigures figures = TwoStages();
  EXPECT_THAT(LinkText(figures), ContainsRegex("5->4 +0->1 +8 +8\\.00 +0\\.084"));  // 8 MiB
  link_stats::Link& link = figures.links.front();
  link.bytes = 0;
  link.median_message_bytes = -1;
  link.bandwidth_samples = 0;
  EXPECT_THAT(LinkText(figures),
              ContainsRegex("5->4 +0->1 +8 +- +0\\.084 +- +- +0\\.001 +2\\.000 +SLOW"));
}

TEST(LinkReportTest, ALinkWithoutTimedTransfersHasNoTransferTime) {
  job::CrossRankFigures figures = TwoStages();
  link_stats::Link& link = figures.links.front();
  link.timed_transfers = 0;
  link.transfer_median_ns = 0;
  link.bandwidth_samples = 0;
  link.slow = false;
  EXPECT_THAT(LinkText(figures), ContainsRegex("5->4 +0->1 +8 +8\\.00 +- +- +- +0\\.001 +2\\.000"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_NO_FATAL_FAILURE(ParseLinkMembers(figures, parser, doc));
  simdjson::dom::element json_link = doc["links"].at(0);
  EXPECT_EQ(int64_t(json_link["timed_transfers"]), 0);
  EXPECT_TRUE(json_link["transfer_us_median"].is_null());
  EXPECT_TRUE(json_link["gbps_median"].is_null());
}

TEST(LinkReportTest, InferredPeersAreSaid) {
  job::CrossRankFigures figures = TwoStages();
  EXPECT_THAT(LinkText(figures), Not(HasSubstr("no peer ranks")));
  figures.pipeline.peers_recorded = false;
  figures.pipeline.peers_by_source = {0, 0, 6, 0};  // six ops' peers inferred
  EXPECT_THAT(LinkText(figures), HasSubstr("no peer ranks in the traces: stage order and peers "
                                           "inferred from the schedule"));
  // Every peer from the runtime's transfer names: not a guess, and not said to be one.
  figures.pipeline.peers_by_source = {0, 6, 0, 0};
  EXPECT_THAT(LinkText(figures), HasSubstr("no peer ranks in the traces: peers from the pipeline "
                                           "runtime's transfer names"));
  EXPECT_THAT(LinkText(figures), Not(HasSubstr("inferred from the schedule")));
  figures.pipeline.peers_by_source = {0, 6, 2, 0};  // some named, some guessed: a guess
  EXPECT_THAT(LinkText(figures), HasSubstr("inferred from the schedule"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_NO_FATAL_FAILURE(ParseLinkMembers(figures, parser, doc));
  EXPECT_FALSE(bool(doc["peers_recorded"]));
}

TEST(JobReportTest, NoPipelineSummarisesCollectives) {
  job::JobSummary job;
  job.ranks_without_p2p = {0, 1};
  job.collectives.push_back(
      {.kind = "all_reduce", .count = 6, .bytes = 3 << 20, .sized = 6, .time_ns = 1'234'567});
  job.collectives.push_back({.kind = "sendrecv", .count = 4, .time_ns = 1000});
  std::string text = JobText(job);
  EXPECT_THAT(text, HasSubstr("job: no pipeline found"));
  EXPECT_THAT(text, HasSubstr("in no pipeline (no send or receive between stages): 0,1"));
  EXPECT_THAT(text, HasSubstr("all_reduce"));
  EXPECT_THAT(text, HasSubstr("1.235"));  // ms
  EXPECT_THAT(text, ContainsRegex("all_reduce +6 +3\\.00 +1\\.235"));
  EXPECT_THAT(text, ContainsRegex("sendrecv +4 +- +0\\.001"));  // no known size: "-"

  JsonWriter json;
  json.BeginObject();
  WriteJobMember(job, json);
  json.EndObject();
  absl::StatusOr<std::string> document = json.Finish();
  ASSERT_TRUE(document.ok()) << document.status();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(*document).get(doc), simdjson::SUCCESS);
  EXPECT_FALSE(bool(doc["job"]["pipeline_found"]));
  EXPECT_TRUE(doc["job"]["worst_pipeline"].is_null());
  EXPECT_TRUE(doc["job"]["bubble_spread"].is_null());
  EXPECT_EQ(int64_t(doc["job"]["collectives"].at(0)["bytes"]), 3 << 20);
  EXPECT_EQ(int64_t(doc["job"]["collectives"].at(0)["sized_count"]), 6);
  EXPECT_EQ(int64_t(doc["job"]["collectives"].at(1)["sized_count"]), 0);
  EXPECT_DOUBLE_EQ(double(doc["job"]["collectives"].at(0)["time_us"]), 1234.567);
}

TEST(JobReportTest, SeveralPipelinesNameTheWorst) {
  job::JobSummary job;
  job.pipelines = 2;
  job.worst_pipeline = 1;
  job.worst_bubble_fraction = 0.40;
  job.best_bubble_fraction = 0.25;
  job.bubble_spread = 0.15;
  EXPECT_THAT(JobText(job), HasSubstr("job: 2 pipelines; worst is pipeline 1 with bubble 40.0%, "
                                      "best 25.0%, spread 15.0 points"));
}

}  // namespace
}  // namespace bubblescope
