// distributed_analysis.h: process 0's analysis a part at a time fetches each pipeline's ranks
// once, one part per fetch, and gives the reports of the whole job analysed from the same digests
// (with one thread, or with parts analysed side by side);
// a job whose peers are not recorded is fetched whole, once.
#include "distributed/distributed_analysis.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "index/digest_reduction.h"
#include "job/sim_job.h"
#include "readers/digest_reader.h"
#include "report/pipeline_report.h"
#include "synth/synthetic_job.h"
#include "writers/digest_writer.h"

namespace bubblescope::distributed {
namespace {

// `replicas` pipelines of p = 4 (job/sim_job.h), their peers recorded or not.
Trace DataParallelJob(int32_t replicas, bool peers_recorded) {
  Trace trace = crossrank_testing::DataParallelJob(replicas, sim::Schedule::k1F1B);
  if (!peers_recorded) {
    for (Rank& rank : trace.ranks) {
      for (CommInfo& comm : rank.comms) comm.peer = -1;
    }
  }
  return trace;
}

// The job as AssembleShares leaves it on process 0, each rank "read" from a file of its own, and
// what the processes hold: rank r's digest in file r, held by process r % 2.
struct Spread {
  Trace headers;
  std::vector<RankOrigin> origins;
  std::vector<job::RankFacts> facts;
  std::vector<HeldDigests> held{2};
  Trace decoded;  // the ranks as process 0 decodes them: what one process would analyse
};

Spread SpreadOver2(const Trace& trace) {
  Spread spread;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank reduced = index::ReduceForDigest(trace.ranks[r]).rank;
    spread.headers.ranks.push_back(RankHeader(reduced));
    spread.origins.push_back({r, 0});
    spread.facts.push_back(job::FactsOf(reduced, {}));
    spread.held[r % 2][r] = {digest::Encode(reduced)};
    absl::StatusOr<Rank> decoded =
        digest::Decode(spread.held[r % 2][r][0], trace.ranks[r].source_path);
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    if (decoded.ok()) spread.decoded.ranks.push_back(*std::move(decoded));
  }
  return spread;
}

// `parts`: 1 when the job is fetched whole; otherwise every part is fetched twice, once for the
// job's clock evidence and once for its analysis on the job's clock model.
void ExpectWholeJobsReports(bool peers_recorded, size_t parts, int jobs = 1) {
  const size_t fetches = parts == 1 ? 1 : 2 * parts;
  const Spread spread = SpreadOver2(DataParallelJob(3, peers_recorded));
  size_t fetched = 0;
  size_t most_ranks = 0;
  const FetchDigests fetch = [&](const std::vector<RankOrigin>& ranks) {
    ++fetched;
    most_ranks = std::max(most_ranks, ranks.size());
    std::vector<std::string> answers;
    for (const HeldDigests& held : spread.held) {
      answers.push_back(AnswerRequest(held, PackRequest(ranks)).value_or(""));
    }
    return CollectAnswers(std::move(answers), ranks);
  };
  job::Options options;
  options.tradeoff = true;
  options.jobs = jobs;
  std::vector<std::string> told;  // "stage done/total"
  options.progress = [&told](const job::Progress& progress) {
    told.push_back(
        absl::StrCat(std::string(progress.stage), " ", progress.done, "/", progress.total));
  };
  absl::StatusOr<job::Result> in_parts =
      AnalyzeInParts(spread.headers, spread.origins, spread.facts, fetch, options);
  ASSERT_TRUE(in_parts.ok()) << in_parts.status();
  // In parts: one call per part; whole: the driver's own, per rank and per pipeline.
  if (parts == 1) {
    ASSERT_EQ(told.size(), 12u + 3u);
    EXPECT_EQ(told.back(), "analysing pipelines 3/3");
  } else {
    EXPECT_EQ(told, (std::vector<std::string>{"reading the job's clocks a pipeline at a time 1/3",
                                              "reading the job's clocks a pipeline at a time 2/3",
                                              "reading the job's clocks a pipeline at a time 3/3",
                                              "analysing the job a pipeline at a time 1/3",
                                              "analysing the job a pipeline at a time 2/3",
                                              "analysing the job a pipeline at a time 3/3"}));
  }
  options.progress = nullptr;
  absl::StatusOr<job::Result> whole = job::Analyze(spread.decoded, options);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(fetched, fetches);
  EXPECT_EQ(most_ranks, parts == 1 ? 12u : 4u);  // the job, or one pipeline per fetch
  ASSERT_EQ(in_parts->pipelines.size(), 3u);
  const SummaryReportOptions report;
  EXPECT_TRUE(AnalyzeText(*in_parts, report) == AnalyzeText(*whole, report));
  EXPECT_TRUE(AnalyzeJson(*in_parts, report).value_or("a") ==
              AnalyzeJson(*whole, report).value_or("b"));
}

TEST(DistributedAnalysisTest, EachPipelineIsFetchedTwiceAndTheReportsAreTheWholeJobs) {
  ExpectWholeJobsReports(/*peers_recorded=*/true, /*parts=*/3);
}

// Two parts at a time on two threads (the third alone after them): the same fetches, progress
// told per part in plan order, and the same reports.
TEST(DistributedAnalysisTest, PartsAnalysedSideBySideGiveTheSameReports) {
  ExpectWholeJobsReports(/*peers_recorded=*/true, /*parts=*/3, /*jobs=*/2);
}

TEST(DistributedAnalysisTest, WithoutRecordedPeersTheJobIsFetchedWhole) {
  ExpectWholeJobsReports(/*peers_recorded=*/false, /*parts=*/1);
}

TEST(DistributedAnalysisTest, AFailedFetchIsTheError) {
  const Spread spread = SpreadOver2(DataParallelJob(2, true));
  const absl::Status status =
      AnalyzeInParts(
          spread.headers, spread.origins, spread.facts,
          [](const std::vector<RankOrigin>&) -> absl::StatusOr<std::vector<std::string>> {
            return absl::InternalError("no process sent rank 0 of file 4");
          },
          job::Options{})
          .status();
  EXPECT_EQ(status, absl::InternalError("no process sent rank 0 of file 4"));
}

}  // namespace
}  // namespace bubblescope::distributed
