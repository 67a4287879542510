// The Perfetto overlay (perfetto/perfetto_overlay.h) end to end on real files: simulated sets with
// known truth, a real CPU run and the shared GPU traces are loaded, analysed, merged into one
// trace and read back by bubblescope's own loader. The read-back job must give the same figures
// to the last bit, every original event must be in the merged trace with its name and args
// exactly as written and its time moved by its rank's clock offset exactly, and the file must
// keep the Chrome trace format's rules.
#include "perfetto/perfetto_overlay.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/clock_offsets.h"
#include "crossrank/clock_alignment.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "job/sim_job.h"
#include "loader/file_source.h"
#include "loader/trace_loader.h"
#include "perfetto/chrome_trace_check.h"
#include "support/shared_traces.h"
#include "support/test_files.h"
#include "synth/simulated_set.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using testing::ChromeDocument;
using testing::EventMembers;

struct AnalysedJob {
  Trace trace;
  job::Result result;
};

AnalysedJob LoadAndAnalyze(const std::vector<std::string>& paths) {
  AnalysedJob job;
  absl::StatusOr<Trace> trace = LoadTrace(paths, LoadOptions{});
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return job;
  job.trace = *std::move(trace);
  absl::StatusOr<job::Result> result = job::Analyze(job.trace, job::Options{});
  EXPECT_TRUE(result.ok()) << result.status();
  if (result.ok()) job.result = *std::move(result);
  return job;
}

struct RoundTrip {
  AnalysedJob original;
  AnalysedJob back;
  std::string merged;
  perfetto::OverlayCounts counts;
};

RoundTrip MergeAndReadBack(const std::vector<std::string>& paths, const testing::TempDir& dir) {
  RoundTrip trip;
  trip.original = LoadAndAnalyze(paths);
  absl::StatusOr<std::string> merged =
      perfetto::RenderOverlay(trip.original.trace, trip.original.result, &trip.counts);
  EXPECT_TRUE(merged.ok()) << merged.status();
  if (!merged.ok()) return trip;
  trip.merged = *std::move(merged);
  trip.back = LoadAndAnalyze({dir.Write("merged.json", trip.merged)});
  return trip;
}

std::string SampleSet(const std::string& name) {
  return std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/" + name;
}

// Every figure the issue names, compared exactly (doubles to the bit).
void ExpectSameFigures(const job::Result& a, const job::Result& b) {
  ASSERT_EQ(a.pipelines.size(), b.pipelines.size());
  EXPECT_EQ(a.job.worst_bubble_fraction, b.job.worst_bubble_fraction);
  EXPECT_EQ(a.job.ranks_without_p2p, b.job.ranks_without_p2p);
  for (size_t p = 0; p < a.pipelines.size(); ++p) {
    SCOPED_TRACE("pipeline " + std::to_string(p));
    const job::Pipeline& x = a.pipelines[p];
    const job::Pipeline& y = b.pipelines[p];
    EXPECT_EQ(x.bubble.ranks, y.bubble.ranks);
    EXPECT_EQ(x.bubble.bubble_fraction, y.bubble.bubble_fraction);
    EXPECT_EQ(x.bubble.idle, y.bubble.idle);
    EXPECT_EQ(x.bubble.capacity, y.bubble.capacity);
    EXPECT_EQ(x.bubble.complete_iterations, y.bubble.complete_iterations);
    EXPECT_EQ(x.bubble.latency.iterations, y.bubble.latency.iterations);
    EXPECT_EQ(x.bubble.latency.p50, y.bubble.latency.p50);
    EXPECT_EQ(x.bubble.latency.p90, y.bubble.latency.p90);
    EXPECT_EQ(x.bubble.latency.max, y.bubble.latency.max);
    ASSERT_EQ(x.bubble.per_rank.size(), y.bubble.per_rank.size());
    for (size_t r = 0; r < x.bubble.per_rank.size(); ++r) {
      const bubble::RankTotals& u = x.bubble.per_rank[r];
      const bubble::RankTotals& v = y.bubble.per_rank[r];
      SCOPED_TRACE("rank " + std::to_string(u.rank));
      EXPECT_EQ(u.rank, v.rank);
      EXPECT_EQ(u.window, v.window);
      EXPECT_EQ(u.split.compute, v.split.compute);
      EXPECT_EQ(u.split.fill, v.split.fill);
      EXPECT_EQ(u.split.drain, v.split.drain);
      EXPECT_EQ(u.split.stall, v.split.stall);
      EXPECT_EQ(u.split.comm_wait, v.split.comm_wait);
      EXPECT_EQ(u.split.empty, v.split.empty);
      EXPECT_EQ(u.bubble_fraction, v.bubble_fraction);
    }
    ASSERT_EQ(x.bubble.iterations.size(), y.bubble.iterations.size());
    for (size_t i = 0; i < x.bubble.iterations.size(); ++i) {
      EXPECT_EQ(x.bubble.iterations[i].window_start, y.bubble.iterations[i].window_start);
      EXPECT_EQ(x.bubble.iterations[i].window_end, y.bubble.iterations[i].window_end);
      ASSERT_EQ(x.bubble.iterations[i].ranks.size(), y.bubble.iterations[i].ranks.size());
      for (size_t r = 0; r < x.bubble.iterations[i].ranks.size(); ++r) {
        EXPECT_EQ(x.bubble.iterations[i].ranks[r].idle_spans,
                  y.bubble.iterations[i].ranks[r].idle_spans);
      }
    }
    ASSERT_EQ(x.shape.has_value(), y.shape.has_value());
    if (x.shape) {
      EXPECT_EQ(x.shape->p, y.shape->p);
      EXPECT_EQ(x.shape->m, y.shape->m);
      EXPECT_EQ(x.shape->v, y.shape->v);
      EXPECT_EQ(x.shape->family, y.shape->family);
    }
    ASSERT_EQ(x.crossrank.offsets.size(), y.crossrank.offsets.size());
    for (size_t r = 0; r < x.crossrank.offsets.size(); ++r) {
      EXPECT_EQ(x.crossrank.offsets[r].offset_ns, y.crossrank.offsets[r].offset_ns);
    }
    ASSERT_EQ(x.op_timeline.ops.size(), y.op_timeline.ops.size());
    for (size_t o = 0; o < x.op_timeline.ops.size(); ++o) {
      EXPECT_EQ(x.op_timeline.ops[o].start, y.op_timeline.ops[o].start);
      EXPECT_EQ(x.op_timeline.ops[o].microbatch, y.op_timeline.ops[o].microbatch);
    }
  }
}

// new pid -> (rank, the pid's text in the rank's file), and rank -> clock offset, from the
// merged trace's layout.
struct Layout {
  std::map<std::string, std::pair<int32_t, std::string>> pids;
  std::map<std::string, std::set<int32_t>> overlay_pids;  // a pipeline's: the ranks naming it
  std::map<int32_t, int64_t> offsets;
  std::map<int32_t, RankClock> clocks;  // the offsets with their rates, where written
  std::map<int32_t, std::string> sources;
};

Layout ReadLayout(const std::string& layout_json) {
  Layout layout;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  EXPECT_EQ(parser.parse(layout_json).get(root), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(root["version"]), 1);
  for (simdjson::dom::element entry : root["ranks"].get_array()) {
    const int32_t rank = static_cast<int32_t>(int64_t(entry["rank"]));
    layout.offsets[rank] = int64_t(entry["clock_offset_ns"]);
    RankClock& clock = layout.clocks[rank];
    clock.offset_ns = layout.offsets[rank];
    int64_t anchor = 0;
    if (entry["clock_anchor_ns"].get(anchor) == simdjson::SUCCESS) clock.anchor_ns = anchor;
    double rate = 0.0;
    if (entry["clock_rate"].get(rate) == simdjson::SUCCESS) clock.rate = rate;
    layout.sources[rank] = std::string(std::string_view(entry["source"]));
    int64_t overlay = 0;
    if (entry["overlay_pid"].get(overlay) == simdjson::SUCCESS) {
      layout.overlay_pids[std::to_string(overlay)].insert(rank);
    }
    for (simdjson::dom::element process : entry["processes"].get_array()) {
      layout.pids[std::to_string(int64_t(process["pid"]))] = {
          rank, simdjson::minify(process["original_pid"])};
    }
  }
  return layout;
}

// An event's identity: rank, phase, name, tid, pid and every member but ts, each as written,
// and ts in ns on the clock given.
std::string EventKey(int32_t rank, const EventMembers& event, const std::string& pid,
                     int64_t ts_ns) {
  std::string key = std::to_string(rank) + "|pid=" + pid + "|ts=" + std::to_string(ts_ns);
  for (const auto& [name, text] : event) {
    if (name == "pid" || name == "ts") continue;
    key += "|" + name + "=" + text;
  }
  return key;
}

// Every event of every rank's own file that is not process metadata appears in the merged trace
// once, under a pid that maps back to its rank and its own pid, with every other member exactly
// as written, and its time t (+ base time) moved onto the reference clock by the offset (and
// rate) its layout entry names, to the nanosecond.
void ExpectEventsKept(const Trace& trace, const ChromeDocument& merged, const Layout& layout,
                      int64_t* overlay_events) {
  std::vector<std::string> expected;
  for (const Rank& rank : trace.ranks) {
    absl::StatusOr<FileContents> contents = ReadFileSource(rank.source_path);
    ASSERT_TRUE(contents.ok()) << contents.status();
    const ChromeDocument source =
        testing::ParseChromeDocument(std::string(contents->text.data(), contents->text.size()));
    int64_t base = 0;
    if (!source.base_time.empty()) base = std::stoll(source.base_time);
    for (const EventMembers& event : source.events) {
      if (event.at("ph") == "\"M\"") continue;
      int64_t ts = 0;
      ASSERT_TRUE(testing::MicrosText(event.at("ts"), &ts));
      expected.push_back(EventKey(rank.rank, event, event.at("pid"),
                                  ClockOffsets::Move(ts + base, layout.clocks.at(rank.rank))));
    }
  }
  std::vector<std::string> written;
  *overlay_events = 0;
  for (const EventMembers& event : merged.events) {
    if (event.at("ph") == "\"M\"") continue;
    if (layout.overlay_pids.contains(event.at("pid"))) {
      EXPECT_EQ(event.at("cat"), "\"bubblescope_overlay\"");
      ++*overlay_events;
      continue;
    }
    ASSERT_TRUE(layout.pids.contains(event.at("pid"))) << event.at("pid");
    const auto& [rank, original_pid] = layout.pids.at(event.at("pid"));
    int64_t ts = 0;
    ASSERT_TRUE(testing::MicrosText(event.at("ts"), &ts));
    written.push_back(EventKey(rank, event, original_pid, ts));
  }
  std::sort(expected.begin(), expected.end());
  std::sort(written.begin(), written.end());
  EXPECT_EQ(expected.size(), written.size());
  EXPECT_TRUE(expected == written);
}

// Every rank read back has the timelines it had, each time within `slack` of the original's.
void ExpectSameTimes(const Trace& original, const Trace& back, TimeNs slack) {
  ASSERT_EQ(original.ranks.size(), back.ranks.size());
  for (size_t r = 0; r < original.ranks.size(); ++r) {
    const std::vector<Timeline>& a = original.ranks[r].timelines;
    const std::vector<Timeline>& b = back.ranks[r].timelines;
    ASSERT_EQ(a.size(), b.size()) << "rank " << original.ranks[r].rank;
    TimeNs worst = 0;
    for (size_t t = 0; t < a.size(); ++t) {
      ASSERT_EQ(a[t].intervals.size(), b[t].intervals.size());
      for (size_t i = 0; i < a[t].intervals.size(); ++i) {
        worst = std::max({worst, std::abs(a[t].intervals[i].start - b[t].intervals[i].start),
                          std::abs(a[t].intervals[i].end - b[t].intervals[i].end)});
      }
    }
    EXPECT_LE(worst, slack) << "rank " << original.ranks[r].rank;
  }
}

// The checks every round trip gets; returns the merged document for more. `exact`: the
// figures read back are the original's to the nanosecond (every clock moved by an offset alone,
// an integer); else (clocks with a rate) each time read back is within a nanosecond of the
// original's, and the figures within what that allows.
ChromeDocument ExpectGoodRoundTrip(const RoundTrip& trip, bool exact = true) {
  const ChromeDocument merged = testing::ParseChromeDocument(trip.merged);
  if (exact) {
    ExpectSameFigures(trip.original.result, trip.back.result);
  } else {
    ExpectSameTimes(trip.original.trace, trip.back.trace, 1);
    EXPECT_EQ(trip.original.result.pipelines.size(), trip.back.result.pipelines.size());
    for (size_t p = 0;
         p < std::min(trip.original.result.pipelines.size(), trip.back.result.pipelines.size());
         ++p) {
      EXPECT_NEAR(trip.original.result.pipelines[p].bubble.bubble_fraction,
                  trip.back.result.pipelines[p].bubble.bubble_fraction, 1e-6);
    }
  }
  EXPECT_EQ(trip.original.trace.ranks.size(), trip.back.trace.ranks.size());
  for (size_t r = 0; r < std::min(trip.original.trace.ranks.size(), trip.back.trace.ranks.size());
       ++r) {
    EXPECT_EQ(trip.original.trace.ranks[r].rank, trip.back.trace.ranks[r].rank);
  }
  testing::ExpectChromeTraceRules(merged);
  const Layout layout = ReadLayout(merged.merged_layout);
  int64_t overlay_events = 0;
  ExpectEventsKept(trip.original.trace, merged, layout, &overlay_events);
  EXPECT_EQ(overlay_events, trip.counts.idle_spans + trip.counts.ops);
  EXPECT_EQ(trip.counts.left_out, 0);
  // The overlay's events are skipped on read-back, each counted.
  uint64_t counted = 0;
  for (const Rank& rank : trip.back.trace.ranks) {
    counted += rank.stats.count(ImportCounter::kOverlayEvent);
  }
  int64_t overlay_metadata = 0;
  for (const EventMembers& event : merged.events) {
    if (event.at("ph") == "\"M\"" && layout.overlay_pids.contains(event.at("pid"))) {
      ++overlay_metadata;
    }
  }
  EXPECT_EQ(counted, static_cast<uint64_t>(overlay_events + overlay_metadata));
  return merged;
}

// An overlay thread, as its thread_name says: "stage S \u00b7 rank R: what".
struct OverlayTrack {
  int32_t stage = -1;
  int32_t rank = -1;
  std::string what;
};

// (pid, tid) -> the overlay thread, for every thread named on an overlay pid.
std::map<std::pair<std::string, std::string>, OverlayTrack> OverlayTracks(
    const ChromeDocument& merged, const Layout& layout) {
  std::map<std::pair<std::string, std::string>, OverlayTrack> tracks;
  for (const EventMembers& event : merged.events) {
    if (event.at("ph") != "\"M\"" || event.at("name") != "\"thread_name\"" ||
        !layout.overlay_pids.contains(event.at("pid"))) {
      continue;
    }
    const std::string& args = event.at("args");
    const size_t stage = args.find("stage ");
    const size_t rank = args.find(" rank ");
    const size_t colon = args.find(": ");
    EXPECT_NE(stage, std::string::npos) << args;
    EXPECT_NE(rank, std::string::npos) << args;
    EXPECT_NE(colon, std::string::npos) << args;
    if (stage == std::string::npos || rank == std::string::npos || colon == std::string::npos) {
      continue;
    }
    tracks[{event.at("pid"), event.at("tid")}] =
        OverlayTrack{.stage = std::stoi(args.substr(stage + 6)),
                     .rank = std::stoi(args.substr(rank + 6)),
                     .what = args.substr(colon + 2, args.rfind('"') - colon - 2)};
  }
  return tracks;
}

// Per rank, the overlay's idle slices of the complete iterations: their durations summed.
std::map<int32_t, int64_t> OverlayIdleByRank(const ChromeDocument& merged, const Layout& layout) {
  const auto tracks = OverlayTracks(merged, layout);
  std::map<int32_t, int64_t> idle;
  for (const EventMembers& event : merged.events) {
    const auto track = tracks.find({event.at("pid"), event.at("tid")});
    if (track == tracks.end() || track->second.what.rfind("idle", 0) != 0 ||
        event.at("ph") != "\"X\"" ||
        event.at("args").find("\"complete\":true") == std::string::npos) {
      continue;
    }
    int64_t dur = 0;
    EXPECT_TRUE(testing::MicrosText(event.at("dur"), &dur));
    idle[track->second.rank] += dur;
  }
  return idle;
}

TEST(PerfettoOverlayTest, SimulatedOneFOneBRoundTripsWithTheBubbleOnItsTracks) {
  testing::TempDir dir;
  const RoundTrip trip = MergeAndReadBack({SampleSet("sim_1f1b_p4_m8")}, dir);
  const ChromeDocument merged = ExpectGoodRoundTrip(trip);
  ASSERT_EQ(trip.original.result.pipelines.size(), 1u);
  const job::Pipeline& pipeline = trip.original.result.pipelines[0];
  // The set's truth.json: bubble fraction 0.390541 (4 stages, 8 microbatches, 1F1B, jittered).
  EXPECT_NEAR(pipeline.bubble.bubble_fraction, 0.390541364369686, 0.01);
  ASSERT_TRUE(pipeline.shape.has_value());
  EXPECT_EQ(pipeline.shape->p, 4);
  EXPECT_EQ(pipeline.shape->m, 8);
  EXPECT_EQ(trip.counts.ranks, 4);
  // The idle track of each rank adds up to the rank's idle time over the complete iterations,
  // and so to the bubble fraction over the capacity.
  const Layout layout = ReadLayout(merged.merged_layout);
  const std::map<int32_t, int64_t> idle = OverlayIdleByRank(merged, layout);
  int64_t total = 0;
  for (const bubble::RankTotals& rank : pipeline.bubble.per_rank) {
    EXPECT_EQ(idle.at(rank.rank), rank.split.fill + rank.split.drain + rank.split.stall)
        << "rank " << rank.rank;
    total += idle.at(rank.rank);
  }
  EXPECT_DOUBLE_EQ(static_cast<double>(total) / static_cast<double>(pipeline.bubble.capacity),
                   pipeline.bubble.bubble_fraction);
  // 1F1B with m = 8: every rank runs F0..F7 and B0..B7 once per iteration (the labels come from
  // the set's PP annotations).
  const auto tracks = OverlayTracks(merged, layout);
  std::map<std::pair<int32_t, std::string>, int> labels;  // (rank, "F3") -> count
  for (const EventMembers& event : merged.events) {
    const auto track = tracks.find({event.at("pid"), event.at("tid")});
    if (event.at("ph") == "\"X\"" && track != tracks.end() &&
        track->second.what.rfind("ops", 0) == 0) {
      ++labels[{track->second.rank, testing::Unquoted(event.at("name"))}];
    }
  }
  // The pipeline's overlay is one process, named for it and ordered before every rank's own
  // processes, holding two tracks per rank: stage S's idle on thread 3S+1 and its ops on 3S+2.
  ASSERT_EQ(layout.overlay_pids.size(), 1u);
  const std::string overlay_pid = layout.overlay_pids.begin()->first;
  EXPECT_EQ(layout.overlay_pids.begin()->second, (std::set<int32_t>{0, 1, 2, 3}));
  std::map<std::string, int64_t> sort_index;  // pid -> process_sort_index
  std::string overlay_name;
  for (const EventMembers& event : merged.events) {
    if (event.at("ph") != "\"M\"") continue;
    if (event.at("name") == "\"process_sort_index\"") {
      const std::string& args = event.at("args");
      sort_index[event.at("pid")] = std::stoll(args.substr(args.find(':') + 1));
    }
    if (event.at("name") == "\"process_name\"" && event.at("pid") == overlay_pid) {
      overlay_name = event.at("args");
    }
  }
  EXPECT_EQ(overlay_name, "{\"name\":\"pipeline 0: bubblescope, 4 stages\"}");
  for (const auto& [pid, index] : sort_index) {
    if (pid != overlay_pid) {
      EXPECT_LT(sort_index.at(overlay_pid), index) << "pid " << pid;
    }
  }
  ASSERT_EQ(tracks.size(), 8u);
  for (size_t stage = 0; stage < pipeline.bubble.per_rank.size(); ++stage) {
    const int32_t rank = pipeline.bubble.per_rank[stage].rank;
    for (const auto& [tid, what] : {std::pair{3 * stage + 1, std::string("idle")},
                                    std::pair{3 * stage + 2, std::string("ops")}}) {
      const auto track = tracks.find({overlay_pid, std::to_string(tid)});
      ASSERT_NE(track, tracks.end()) << "stage " << stage << " " << what;
      EXPECT_EQ(track->second.stage, static_cast<int32_t>(stage));
      EXPECT_EQ(track->second.rank, rank);
      EXPECT_EQ(track->second.what.substr(0, what.size()), what);
    }
  }
  // Every overlay slice lies on one of those tracks.
  for (const EventMembers& event : merged.events) {
    if (event.at("ph") == "\"X\"" && event.at("pid") == overlay_pid) {
      EXPECT_TRUE(tracks.contains({overlay_pid, event.at("tid")})) << event.at("tid");
    }
  }
  const int iterations = static_cast<int>(pipeline.bubble.iterations.size());
  for (int32_t rank = 0; rank < 4; ++rank) {
    for (int mb = 0; mb < 8; ++mb) {
      EXPECT_EQ((labels[{rank, "F" + std::to_string(mb)}]), iterations) << rank << " F" << mb;
      EXPECT_EQ((labels[{rank, "B" + std::to_string(mb)}]), iterations) << rank << " B" << mb;
    }
  }
}

// A 1F1B job whose ranks' clocks disagree by milliseconds, written in each of the three layouts
// (relative to baseTimeNanoseconds, absolute µs, a bare array): the merged trace moves every
// rank by the offset the analysis found, which is the simulated skew to within its
// uncertainty, and reads back to the same figures.
TEST(PerfettoOverlayTest, SkewedClocksAreMovedByTheOffsetsFoundInEveryLayout) {
  sim::Config config;
  config.schedule = sim::Schedule::k1F1B;
  config.stages = 4;
  config.microbatches = 8;
  config.iterations = 3;
  config.costs.assign(4, sim::StageCost{.forward = 4000, .backward = 8000, .weight_grad = 0});
  config.kernels_per_op = 2;
  config.link = sim::Link{.gbps = 200.0, .latency_ns = 2000};
  config.jitter = 0.05;
  config.seed = 17;
  config.clock_offsets_ns = {0, 3'000'000, -1'250'000, 7'500'123};
  config.annotations = sim::AnnotationStyle::kPpGpu;
  for (const KinetoLayout layout :
       {KinetoLayout::kRelativeWithBase, KinetoLayout::kAbsoluteMicros, KinetoLayout::kBareArray}) {
    SCOPED_TRACE(static_cast<int>(layout));
    absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
    ASSERT_TRUE(simulation.ok()) << simulation.status();
    testing::TempDir dir;
    sim::SetWriteOptions write;
    write.kineto.layout = layout;
    ASSERT_TRUE(sim::WriteSimulationSet(config, *simulation, dir.path() + "/set", write).ok());
    const RoundTrip trip = MergeAndReadBack({dir.path() + "/set"}, dir);
    const ChromeDocument merged = ExpectGoodRoundTrip(trip);
    const Layout read_layout = ReadLayout(merged.merged_layout);
    ASSERT_EQ(trip.original.result.pipelines.size(), 1u);
    for (const clock_alignment::RankOffset& offset :
         trip.original.result.pipelines[0].crossrank.offsets) {
      const int64_t truth = config.clock_offsets_ns[static_cast<size_t>(offset.rank)];
      EXPECT_NEAR(static_cast<double>(read_layout.offsets.at(offset.rank)),
                  static_cast<double>(truth), static_cast<double>(offset.uncertainty_ns) + 1)
          << "rank " << offset.rank;
      EXPECT_EQ(read_layout.offsets.at(offset.rank), offset.offset_ns);
    }
  }
}

// Two hosts whose clocks drift apart (18 ppm over a trace of seconds): the job's clock model
// gives the second host a rate, and the merged trace moves each event by the offset at its own
// time, not the anchor's: every receive then ends after its send starts, over the whole trace.
TEST(PerfettoOverlayTest, DriftingClocksAreMovedByTheirRates) {
  sim::Config config = crossrank_testing::FourStageHostJob();
  config.iterations = 4;
  config.seed = 5;
  config.iteration_gap_ns = 3'000'000'000;
  config.ranks_per_host = 2;
  config.host_clocks = {{0, 0.0}, {2'500'000, 18.0}};
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  testing::TempDir dir;
  ASSERT_TRUE(sim::WriteSimulationSet(config, *simulation, dir.path() + "/set", {}).ok());
  const RoundTrip trip = MergeAndReadBack({dir.path() + "/set"}, dir);
  const ChromeDocument merged = ExpectGoodRoundTrip(trip, /*exact=*/false);
  const Layout layout = ReadLayout(merged.merged_layout);
  // Ranks 2 and 3 run on the second host: 18 ppm ahead of the first, as the truth says.
  for (int32_t rank : {2, 3}) {
    EXPECT_NEAR(layout.clocks.at(rank).rate * 1e6, 18.0, 0.5) << "rank " << rank;
  }
  EXPECT_EQ(layout.clocks.at(0).rate, 0.0);
  // And its offset, given at its anchor, is the second host's 2.5 ms plus the drift up to there
  // (the simulator's drift counts from the job's first iteration).
  for (const clock_alignment::RankOffset& offset :
       trip.original.result.pipelines[0].crossrank.offsets) {
    if (offset.rank < 2) continue;
    const double truth =
        2'500'000.0 + 18e-6 * static_cast<double>(offset.anchor_ns - config.start_time_ns);
    EXPECT_NEAR(static_cast<double>(layout.clocks.at(offset.rank).offset_ns), truth,
                static_cast<double>(offset.uncertainty_ns) + 1000)
        << "rank " << offset.rank;
  }
}

// Ranks of no Kineto file (here the simulator's, made in memory: the same path as a digest's or an
// Nsight export's) have their model's events written: the merged trace, read back, is the same
// job, every kernel and CPU op of the model is there once, moved by its rank's offset.
TEST(PerfettoOverlayTest, RanksOfOtherFormatsWriteTheirModelsEvents) {
  sim::Config config;
  config.schedule = sim::Schedule::k1F1B;
  config.stages = 4;
  config.microbatches = 8;
  config.iterations = 3;
  config.costs.assign(4, sim::StageCost{.forward = 4000, .backward = 8000, .weight_grad = 0});
  config.link = sim::Link{.gbps = 200.0, .latency_ns = 2000};
  config.seed = 5;
  config.clock_offsets_ns = {0, 2'000'000, -750'000, 4'000'321};
  config.annotations = sim::AnnotationStyle::kPpGpu;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  RoundTrip trip;
  trip.original.trace = std::move(simulation->trace);
  absl::StatusOr<job::Result> result = job::Analyze(trip.original.trace, job::Options{});
  ASSERT_TRUE(result.ok()) << result.status();
  trip.original.result = *std::move(result);
  absl::StatusOr<std::string> merged =
      perfetto::RenderOverlay(trip.original.trace, trip.original.result, &trip.counts);
  ASSERT_TRUE(merged.ok()) << merged.status();
  testing::TempDir dir;
  trip.back = LoadAndAnalyze({dir.Write("merged.json", *merged)});
  ExpectSameFigures(trip.original.result, trip.back.result);
  EXPECT_EQ(trip.counts.left_out, 0);
  ASSERT_EQ(trip.back.trace.ranks.size(), 4u);
  ASSERT_EQ(trip.original.result.pipelines.size(), 1u);
  std::map<int32_t, int64_t> offsets;
  for (const clock_alignment::RankOffset& offset :
       trip.original.result.pipelines[0].crossrank.offsets) {
    offsets[offset.rank] = offset.offset_ns;
  }
  for (size_t r = 0; r < 4; ++r) {
    const Rank& original = trip.original.trace.ranks[r];
    const Rank& back = trip.back.trace.ranks[r];
    // Each GPU stream's kernels, as (start, end, name): the read-back rank is back on its own
    // clock, so its times are the model's to the nanosecond.
    std::vector<std::tuple<TimeNs, TimeNs, std::string>> kernels[2];
    for (const auto& [rank, out] : {std::pair{&original, &kernels[0]}, {&back, &kernels[1]}}) {
      for (const Timeline& timeline : rank->timelines) {
        if (timeline.kind != TimelineKind::kGpuStream) continue;
        for (const Interval& interval : timeline.intervals) {
          out->emplace_back(interval.start, interval.end, std::string(rank->name(interval.name)));
        }
      }
      std::sort(out->begin(), out->end());
    }
    EXPECT_FALSE(kernels[0].empty());
    EXPECT_EQ(kernels[0], kernels[1]) << "rank " << r;
  }
  EXPECT_NE(offsets.at(1), 0);  // the ranks were moved, and moved back on reading
}

// A rank whose file was cut short mid-iteration: the merged trace holds its events up to the cut
// and says it was cut, so the iteration it lost the end of stays incomplete on read-back.
TEST(PerfettoOverlayTest, ARankCutShortStaysCutShort) {
  testing::TempDir dir;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string name = "rank" + std::to_string(rank) + ".pt.trace.json.gz";
    std::string text = testing::Gunzip(testing::ReadFile(SampleSet("sim_1f1b_p4_m8/") + name));
    if (rank == 2) {  // into its last iteration, keeping its clock base
      text = testing::WithClockBaseFirst(text);
      text.resize(text.size() * 4 / 5);
    }
    dir.Write("set/" + name, testing::Gzip(text));
  }
  const RoundTrip trip = MergeAndReadBack({dir.path() + "/set"}, dir);
  ASSERT_EQ(trip.back.trace.ranks.size(), 4u);
  EXPECT_EQ(trip.original.trace.ranks[2].stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(trip.back.trace.ranks[2].stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(trip.back.trace.ranks[1].stats.count(ImportCounter::kTruncated), 0u);
  ExpectSameFigures(trip.original.result, trip.back.result);
  ASSERT_EQ(trip.original.result.pipelines.size(), 1u);
  // The set has 3 iterations; the one rank 2 lost its end of is no longer complete.
  EXPECT_EQ(trip.back.result.pipelines[0].bubble.complete_iterations, 2);
  testing::ExpectChromeTraceRules(testing::ParseChromeDocument(trip.merged));
}

// Broken JSON in the middle of a file: the reader keeps the events before it, but the overlay,
// which copies events as text, refuses to write anything from it rather than copy the damage.
TEST(PerfettoOverlayTest, AFileBrokenInTheMiddleIsNotWrittenAgain) {
  testing::TempDir dir;
  const std::string good =
      testing::Gunzip(testing::ReadFile(SampleSet("sim_1f1b_p4_m8/rank0.pt.trace.json.gz")));
  std::string broken = good;
  const size_t middle = broken.find("\"ts\"", broken.size() / 2);
  broken.replace(middle, 4, "\"ts\" 7");  // a value with no colon before it
  const std::string path = dir.Write("rank0.json", broken);
  AnalysedJob job = LoadAndAnalyze({path});
  ASSERT_EQ(job.trace.ranks.size(), 1u);
  EXPECT_EQ(job.trace.ranks[0].stats.count(ImportCounter::kTruncated), 1u);
  perfetto::OverlayCounts counts;
  const absl::StatusOr<std::string> merged =
      perfetto::RenderOverlay(job.trace, job.result, &counts);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().message(),
            path +
                ": its JSON is broken before its end (read up to there), so its events cannot "
                "be written again");
}

TEST(PerfettoOverlayTest, SimulatedInterleavedAndSlowLinkSetsRoundTrip) {
  for (const char* set : {"sim_interleaved_p4_v2_m8", "sim_1f1b_slow_link_p4_m8"}) {
    SCOPED_TRACE(set);
    testing::TempDir dir;
    const RoundTrip trip = MergeAndReadBack({SampleSet(set)}, dir);
    ExpectGoodRoundTrip(trip);
    EXPECT_GT(trip.counts.idle_spans, 0);
  }
}

TEST(PerfettoOverlayTest, RealCpuRunsRoundTrip) {
  for (const char* set :
       {"torch_cpu/1f1b_p4_m8", "torch_cpu/dp2_1f1b_p2_m4", "torch_cpu/dualpipev_p2_v2_m8"}) {
    SCOPED_TRACE(set);
    testing::TempDir dir;
    const RoundTrip trip = MergeAndReadBack({SampleSet(set)}, dir);
    ExpectGoodRoundTrip(trip);
    EXPECT_GT(trip.counts.idle_spans, 0);
  }
}

TEST(PerfettoOverlayTest, SharedGpuTracesRoundTrip) {
  for (const char* set : {"param_dlrm_8rank", "hta_trace_filter_2rank", "hta_amd_mi250_rocm"}) {
    SCOPED_TRACE(set);
    const std::string path = testing::SharedTracePath(set);
    BUBBLESCOPE_NEED_SHARED(path);
    testing::TempDir dir;
    const RoundTrip trip = MergeAndReadBack({path}, dir);
    ExpectGoodRoundTrip(trip);
  }
}

TEST(PerfettoOverlayTest, AMergedTraceIsNotMergedAgain) {
  testing::TempDir dir;
  const RoundTrip trip = MergeAndReadBack({SampleSet("sim_1f1b_p4_m8")}, dir);
  perfetto::OverlayCounts counts;
  const absl::StatusOr<std::string> again =
      perfetto::RenderOverlay(trip.back.trace, trip.back.result, &counts);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(),
            dir.path() +
                "/merged.json: a merged trace already; write the overlay from the "
                "per-rank traces");
}

}  // namespace
}  // namespace bubblescope
