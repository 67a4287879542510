// The accuracy grid of multi-node diagnoses (docs/cross-rank.md, "Clocks" and "Links"): a job of
// two 1F1B pipelines of 4 stages (data parallel 2, Megatron's rank order) on hosts whose clocks
// are offset by up to 10 ms and drift by up to 50 ppm, over a trace a minute and a half long
// (iterations 30 s apart), with transfers of varying length, an all-reduce whose members end at
// different times, a truly slow link (stage 2 -> 3 at a quarter of the others' speed) and a truly
// busy stage 1 (twice the others' compute: both its neighbours wait for it). For every cell:
//  - each pipeline's bubble is within 0.5 points of the simulator's truth;
//  - no slow_link or late_sender is reported that the same job on true clocks (every host's
//    clock exact) does not have, and that one has the configured slow link and busy sender;
//  - every finding of the true-clock job is found, unless its link says it cannot be judged;
//  - every estimated offset holds the true one (RecordedTime) within its stated uncertainty, at
//    the start, middle and end of the trace;
//  - on the clocks as applied no receive ends before its send started.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "support/job_helpers.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

enum class Layout {
  kTwoPerHost,
  kFourPerHost,
  kUnnamedHosts,
  // Megatron's interleaved schedule, whose batches each hold transfers with both neighbours:
  // most host pairs have no rendezvous sample, only the all-reduce ends (300 us of tail apart).
  kInterleavedBatches,
};

std::string LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kTwoPerHost:
      return "2/host";
    case Layout::kFourPerHost:
      return "4/host";
    case Layout::kUnnamedHosts:
      return "2/host unnamed";
    case Layout::kInterleavedBatches:
      return "2/host il-batch";
  }
  return "";
}

constexpr int32_t kStages = 4;
constexpr int32_t kReplicas = 2;
constexpr TimeNs kMs = 1'000'000;

sim::Config GridConfig(Layout layout, double drift_ppm, TimeNs offset_ns) {
  sim::Config config;
  config.stages = kStages;
  config.microbatches = 8;
  config.iterations = 4;
  config.iteration_gap_ns = 30'000 * kMs;
  config.costs.assign(kStages,
                      sim::StageCost{.forward = 2 * kMs, .backward = 4 * kMs, .weight_grad = 0});
  config.costs[1] = sim::StageCost{.forward = 4 * kMs, .backward = 8 * kMs, .weight_grad = 0};
  config.activation_bytes = int64_t{16} << 20;
  config.link = sim::Link{.gbps = 100.0, .latency_ns = 10'000};
  config.link_overrides = {sim::LinkOverride{2, 3, sim::Link{.gbps = 25.0, .latency_ns = 10'000}}};
  config.launch_gap_ns = 5'000;
  config.jitter = 0.05;
  config.transfer_spread = 0.3;
  config.collective_tail_ns = 300'000;
  config.parallel.data = kReplicas;
  config.parallel.dp_sync_ns = 2 * kMs;
  if (layout == Layout::kInterleavedBatches) {
    config.schedule = sim::Schedule::kInterleaved1F1B;
    config.virtual_stages = 2;
    config.p2p = sim::P2pStyle::kBatched;
  }
  config.ranks_per_host = layout == Layout::kFourPerHost ? 4 : 2;
  config.write_host_names = layout != Layout::kUnnamedHosts;
  const int32_t hosts = sim::HostCount(config);
  // Host 0 keeps the true clock; the others are spread over +-offset and +-drift.
  const std::vector<double> offset_share = {0.0, 1.0, -0.6, 0.3};
  const std::vector<double> drift_share = {0.0, -1.0, 0.5, 1.0};
  if (offset_ns != 0 || drift_ppm != 0.0) {
    for (int32_t h = 0; h < hosts; ++h) {
      config.host_clocks.push_back(
          sim::Config::HostClock{static_cast<TimeNs>(offset_share[static_cast<size_t>(h)] *
                                                     static_cast<double>(offset_ns)),
                                 drift_share[static_cast<size_t>(h)] * drift_ppm});
    }
  }
  return config;
}

// A link finding: its kind and (sender, receiver).
using LinkFinding = std::tuple<findings::Kind, int32_t, int32_t>;

std::set<LinkFinding> LinkFindings(const job::Result& result) {
  std::set<LinkFinding> found;
  for (const job::Pipeline& pipeline : result.pipelines) {
    for (const findings::Finding& finding : pipeline.findings.findings) {
      if (finding.kind != findings::Kind::kSlowLink &&
          finding.kind != findings::Kind::kLateSender) {
        continue;
      }
      found.insert({finding.kind, finding.ranks[0], finding.ranks[1]});
    }
  }
  return found;
}

// Whether the link src -> dst says its clocks are too uncertain to judge it.
bool ClockLimited(const job::Result& result, int32_t src, int32_t dst) {
  for (const job::Pipeline& pipeline : result.pipelines) {
    for (const link_stats::Link& link : pipeline.crossrank.links) {
      if (link.src == src && link.dst == dst) return link.clock_limited;
    }
  }
  return false;
}

// Receives that end before their send started on the pipeline's clocks as applied: the k-th GPU
// send src -> dst against the k-th receive dst <- src.
int64_t CausalityViolations(const Trace& trace, const job::Pipeline& pipeline) {
  const ClockOffsets clocks = clock_alignment::AsClockOffsets(pipeline.crossrank.offsets);
  std::map<std::pair<int32_t, int32_t>, std::vector<TimeNs>> send_starts;
  std::map<std::pair<int32_t, int32_t>, std::vector<TimeNs>> recv_ends;
  for (int32_t rank_id : pipeline.crossrank.pipeline.stage_order()) {
    for (const Rank& rank : trace.ranks) {
      if (rank.rank != rank_id) continue;
      for (const Timeline& timeline : rank.timelines) {
        if (timeline.kind != TimelineKind::kGpuStream) continue;
        for (const Interval& interval : timeline.intervals) {
          const CommInfo* info = rank.comm(interval);
          if (info == nullptr || info->peer < 0) continue;
          if (info->kind == CommKind::kSend) {
            send_starts[{rank_id, info->peer}].push_back(
                clocks.ToReference(rank_id, interval.start));
          } else if (info->kind == CommKind::kRecv) {
            recv_ends[{info->peer, rank_id}].push_back(clocks.ToReference(rank_id, interval.end));
          }
        }
      }
    }
  }
  int64_t violations = 0;
  for (auto& [pair, starts] : send_starts) {
    std::vector<TimeNs>& ends = recv_ends[pair];
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    for (size_t k = 0; k < std::min(starts.size(), ends.size()); ++k) {
      if (ends[k] < starts[k]) ++violations;
    }
  }
  return violations;
}

struct CellFigures {
  double worst_bubble_error = 0.0;  // points
  int64_t false_findings = 0;
  int64_t missed_findings = 0;
  int64_t unjudged_links = 0;
  int64_t offsets_outside = 0;
  int64_t violations = 0;
};

// The true-clock job's link findings per layout, computed once.
const std::set<LinkFinding>& TrueFindings(Layout layout) {
  static std::map<Layout, std::set<LinkFinding>> cache;
  auto found = cache.find(layout);
  if (found != cache.end()) return found->second;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(GridConfig(layout, 0.0, 0));
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  std::set<LinkFinding> findings = simulation.ok()
                                       ? LinkFindings(testing::AnalyzeJob(simulation->trace))
                                       : std::set<LinkFinding>();
  return cache.emplace(layout, std::move(findings)).first->second;
}

CellFigures RunCell(Layout layout, double drift_ppm, TimeNs offset_ns) {
  CellFigures figures;
  const sim::Config config = GridConfig(layout, drift_ppm, offset_ns);
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  if (!simulation.ok()) return figures;
  const job::Result result = testing::AnalyzeJob(simulation->trace);
  EXPECT_EQ(result.pipelines.size(), static_cast<size_t>(kReplicas));

  TimeNs last = config.start_time_ns;
  for (const sim::StepRecord& step : simulation->records.ranks[0].steps) {
    last = std::max(last, step.end);
  }
  const std::vector<TimeNs> true_times = {
      config.start_time_ns, config.start_time_ns + (last - config.start_time_ns) / 2, last};
  for (const job::Pipeline& pipeline : result.pipelines) {
    figures.worst_bubble_error = std::max(
        figures.worst_bubble_error,
        100.0 * std::abs(pipeline.bubble.bubble_fraction - simulation->truth.bubble_fraction));
    figures.violations += CausalityViolations(simulation->trace, pipeline);
    const int32_t reference = pipeline.crossrank.pipeline.stage_order().front();
    for (const clock_alignment::RankOffset& offset : pipeline.crossrank.offsets) {
      if (offset.source == clock_alignment::Source::kNone ||
          offset.uncertainty_ns == clock_alignment::kUnbounded ||
          offset.verdict == clock_alignment::Verdict::kDisagree ||
          offset.verdict == clock_alignment::Verdict::kBreaksCausality) {
        continue;
      }
      const RankClock estimate{offset.estimate_ns, offset.rate, offset.anchor_ns};
      for (TimeNs at : true_times) {
        const TimeNs on_rank = sim::RecordedTime(config, 0, offset.rank, at);
        const TimeNs truth = on_rank - sim::RecordedTime(config, 0, reference, at);
        const TimeNs error = std::abs(estimate.At(on_rank) - truth);
        // A nanosecond of rounding on each of the two clocks the simulator wrote.
        if (error > offset.uncertainty_ns + 2) {
          ++figures.offsets_outside;
          ADD_FAILURE() << "rank " << offset.rank << " against " << reference << ": estimate "
                        << estimate.At(on_rank) << " ns, truth " << truth << " ns, uncertainty "
                        << offset.uncertainty_ns << " ns ("
                        << clock_alignment::VerdictName(offset.verdict) << ")";
        }
      }
    }
    for (const link_stats::Link& link : pipeline.crossrank.links) {
      figures.unjudged_links += link.clock_limited ? 1 : 0;
    }
  }
  const std::set<LinkFinding>& truth = TrueFindings(layout);
  const std::set<LinkFinding> found = LinkFindings(result);
  for (const LinkFinding& finding : found) {
    if (truth.count(finding) == 0) ++figures.false_findings;
  }
  for (const LinkFinding& finding : truth) {
    if (found.count(finding) > 0) continue;
    if (ClockLimited(result, std::get<1>(finding), std::get<2>(finding))) continue;
    ++figures.missed_findings;
  }
  return figures;
}

// The true-clock job finds what was built into it, in both pipelines (global rank = replica +
// 2 * stage): the slow link 2 -> 3, and stage 1 as the late sender of stages 0 and 2.
TEST(ClockGridTest, TheTrueClockJobFindsWhatWasBuiltIn) {
  for (Layout layout : {Layout::kTwoPerHost, Layout::kFourPerHost, Layout::kUnnamedHosts}) {
    SCOPED_TRACE(LayoutName(layout));
    const std::set<LinkFinding>& truth = TrueFindings(layout);
    for (int32_t replica = 0; replica < kReplicas; ++replica) {
      EXPECT_EQ(truth.count({findings::Kind::kSlowLink, replica + 2 * 2, replica + 2 * 3}), 1u);
      EXPECT_EQ(truth.count({findings::Kind::kLateSender, replica + 2, replica}), 1u);
      EXPECT_EQ(truth.count({findings::Kind::kLateSender, replica + 2, replica + 4}), 1u);
      EXPECT_EQ(truth.size(), 6u);
    }
  }
}

void CheckCell(Layout layout, double drift_ppm, TimeNs offset_ns) {
  SCOPED_TRACE(absl::StrCat(LayoutName(layout), ", drift ", drift_ppm, " ppm, offsets ",
                            offset_ns / kMs, " ms"));
  const CellFigures figures = RunCell(layout, drift_ppm, offset_ns);
  std::printf(
      "grid | %5.0f ppm | %3lld ms | %-14s | bubble error %.3f pts | false %lld | "
      "missed %lld | unjudged links %lld | offsets outside %lld | violations %lld\n",
      drift_ppm, static_cast<long long>(offset_ns / kMs), LayoutName(layout).c_str(),
      figures.worst_bubble_error, static_cast<long long>(figures.false_findings),
      static_cast<long long>(figures.missed_findings),
      static_cast<long long>(figures.unjudged_links),
      static_cast<long long>(figures.offsets_outside), static_cast<long long>(figures.violations));
  EXPECT_LE(figures.worst_bubble_error, 0.5);
  EXPECT_EQ(figures.false_findings, 0);
  EXPECT_EQ(figures.missed_findings, 0);
  EXPECT_EQ(figures.offsets_outside, 0);
  EXPECT_EQ(figures.violations, 0);
}

// The corner a multi-node job lives in: hosts 10 ms apart drifting by 50 ppm.
TEST(ClockGridTest, FarApartAndDriftingHosts) {
  CheckCell(Layout::kTwoPerHost, 50.0, 10 * kMs);
  CheckCell(Layout::kUnnamedHosts, 50.0, 10 * kMs);
}

// Every cell: drift 0, 20, 50 ppm x offsets 0, 3, 10 ms x three host layouts.
TEST(ClockGridTest, WholeGrid) {
  for (Layout layout : {Layout::kTwoPerHost, Layout::kFourPerHost, Layout::kUnnamedHosts,
                        Layout::kInterleavedBatches}) {
    for (double drift : {0.0, 20.0, 50.0}) {
      for (TimeNs offset : {TimeNs{0}, 3 * kMs, 10 * kMs}) CheckCell(layout, drift, offset);
    }
  }
}

}  // namespace
}  // namespace bubblescope
