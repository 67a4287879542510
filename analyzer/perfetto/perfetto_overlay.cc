#include "perfetto/perfetto_overlay.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/clock_offsets.h"
#include "common/status_macros.h"
#include "crossrank/clock_alignment.h"
#include "perfetto/perfetto_rank_events.h"
#include "readers/merged_trace.h"
#include "text/json_string.h"
#include "text/micros.h"

namespace bubblescope::perfetto {
namespace {

// Each pipeline has one overlay process; its rank at stage S has the threads
// kTracksPerRank * S + 1, + 2 and + 3, so the pipeline's tracks read stage by stage, top down.
constexpr int64_t kTracksPerRank = 3;
constexpr int64_t kIdleThread = 1;
constexpr int64_t kOpThread = 2;
constexpr int64_t kOverlappedOpThread = 3;  // ops sharing their range with another (DualPipeV)

int64_t TrackOf(int32_t stage, int64_t track) { return kTracksPerRank * stage + track; }

// Names thread `tid` of `pid` and orders it by its tid (thread_sort_index).
void AddOrderedThread(int64_t pid, int64_t tid, std::string_view name, EventList* events) {
  const std::string tid_json = absl::StrCat(tid);
  AddThreadName(pid, tid_json, name, events);
  std::string text = "{\"pid\":";
  text::AppendInt(pid, &text);
  absl::StrAppend(&text, ",\"tid\":", tid_json,
                  ",\"ph\":\"M\",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":", tid,
                  "}}");
  events->Add(text);
}

// Where a pipeline rank's figures are.
struct PipelineRank {
  const job::Pipeline* pipeline = nullptr;
  size_t index = 0;    // of the pipeline
  int32_t stage = -1;  // its position in the pipeline
  RankClock clock;     // as the job driver applied it
};

absl::flat_hash_map<int32_t, PipelineRank> PipelineRanks(const job::Result& result) {
  absl::flat_hash_map<int32_t, PipelineRank> ranks;
  for (size_t p = 0; p < result.pipelines.size(); ++p) {
    const job::Pipeline& pipeline = result.pipelines[p];
    // The offsets exactly as the job driver applied them to this pipeline's figures.
    const ClockOffsets clocks = clock_alignment::AsClockOffsets(pipeline.crossrank.offsets);
    for (size_t i = 0; i < pipeline.bubble.per_rank.size(); ++i) {  // in pipeline order
      const int32_t rank = pipeline.bubble.per_rank[i].rank;
      ranks[rank] = PipelineRank{.pipeline = &pipeline,
                                 .index = p,
                                 .stage = static_cast<int32_t>(i),
                                 .clock = clocks.Of(rank)};
    }
  }
  return ranks;
}

// One overlay slice: {"pid":..,"tid":..,"ph":"X","cat":overlay,"name":..,"ts":..,"dur":..,
// "args":{...}}, `args` being the args object's members' text.
void AddSlice(int64_t pid, int64_t tid, std::string_view name, TimeNs start, TimeNs end,
              std::string_view args, EventList* events) {
  std::string text = "{\"pid\":";
  text::AppendInt(pid, &text);
  text += ",\"tid\":";
  text::AppendInt(tid, &text);
  absl::StrAppend(&text, ",\"ph\":\"X\",\"cat\":\"", std::string(kineto::kOverlayCategory),
                  "\",\"name\":");
  text::AppendJsonString(name, &text);
  text += ",\"ts\":";
  text::AppendMicrosFixed3(start, &text);
  text += ",\"dur\":";
  text::AppendMicrosFixed3(end - start, &text);
  absl::StrAppend(&text, ",\"args\":{", std::string(args), "}}");
  events->Add(text);
}

std::string_view OpLetter(const op_timeline::TimelineOp& op) {
  switch (op.type) {
    case pipeline::OpType::kForward:
      return "F";
    case pipeline::OpType::kBackward:
      return op.input_grad_only ? "I" : "B";
    case pipeline::OpType::kWeightGrad:
      return "W";
  }
  return "?";
}

// The rank's tracks in its pipeline's overlay process `pid`: its idle intervals and its labelled
// ops, on the reference clock.
void AddOverlayTracks(int32_t rank, const PipelineRank& where, int64_t pid, EventList* events,
                      OverlayCounts* counts) {
  const std::string who = absl::StrCat("stage ", where.stage, " \xC2\xB7 rank ", rank, ": ");
  const int64_t idle_track = TrackOf(where.stage, kIdleThread);
  const int64_t op_track = TrackOf(where.stage, kOpThread);
  const int64_t overlapped_track = TrackOf(where.stage, kOverlappedOpThread);
  AddOrderedThread(pid, idle_track, who + "idle: fill / drain / comm_wait / empty", events);
  AddOrderedThread(pid, op_track, who + "ops: F / B / W and microbatch", events);
  for (const bubble::IterationFigures& iteration : where.pipeline->bubble.iterations) {
    for (const bubble::RankIterationFigures& figures : iteration.ranks) {
      if (figures.rank != rank) continue;
      const std::string args =
          absl::StrCat("\"iteration\":", iteration.number,
                       ",\"complete\":", iteration.complete ? "true" : "false");
      for (const bubble::IdleSpan& span : figures.idle_spans) {
        if (span.end <= span.start) continue;
        AddSlice(pid, idle_track, bubble::IdleKindName(span.kind), span.start, span.end, args,
                 events);
        ++counts->idle_spans;
      }
    }
  }
  bool any_overlapped = false;
  for (const op_timeline::TimelineOp& op : where.pipeline->op_timeline.ops) {
    if (op.rank != rank) continue;
    const std::string name = absl::StrCat(std::string(OpLetter(op)),
                                          op.microbatch >= 0 ? absl::StrCat(op.microbatch) : "?");
    std::string args = absl::StrCat(
        "\"stage\":", op.stage, ",\"chunk\":", op.chunk, ",\"microbatch\":", op.microbatch,
        ",\"type\":\"", std::string(OpLetter(op)), "\",\"iteration\":", op.iteration,
        ",\"label\":\"", std::string(op_timeline::LabelSourceName(op.label)), "\"");
    any_overlapped = any_overlapped || op.overlapped;
    AddSlice(pid, op.overlapped ? overlapped_track : op_track, name, op.start, op.end, args,
             events);
    ++counts->ops;
  }
  if (any_overlapped) {
    AddOrderedThread(pid, overlapped_track, who + "ops sharing their time with another op", events);
  }
}

}  // namespace

absl::StatusOr<std::vector<size_t>> ChooseRanks(const Trace& trace, const job::Result& result,
                                                const OverlayChoice& choice) {
  const int64_t pipelines = static_cast<int64_t>(result.pipelines.size());
  for (const IdRange& range : choice.pipelines) {
    if (range.first < 0 || range.last >= pipelines) {
      const int64_t missing = range.first < 0 ? range.first : std::max(range.first, pipelines);
      if (pipelines == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("no pipeline ", missing, ": the job has no pipeline"));
      }
      return absl::InvalidArgumentError(
          absl::StrCat("no pipeline ", missing, ": the job has ", pipelines,
                       pipelines == 1 ? " (0)" : absl::StrCat(" (0-", pipelines - 1, ")")));
    }
  }
  // Every chosen rank id must be one of the job's: a typo must not quietly write less.
  absl::flat_hash_set<int64_t> ids;
  int64_t lowest = 0;
  int64_t highest = 0;
  for (const Rank& rank : trace.ranks) {
    if (ids.empty() || rank.rank < lowest) lowest = rank.rank;
    if (ids.empty() || rank.rank > highest) highest = rank.rank;
    ids.insert(rank.rank);
  }
  for (const IdRange& range : choice.ranks) {
    // At most one id more than the job has is looked at per range, however wide it is.
    for (int64_t id = range.first; id <= range.last; ++id) {
      if (ids.contains(id)) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("no rank ", id, " in the job (its ", trace.ranks.size(), " ranks: ",
                       ids.size() == static_cast<size_t>(highest - lowest + 1)
                           ? absl::StrCat(lowest, "-", highest)
                           : absl::StrCat("ids from ", lowest, " to ", highest, ", not all"),
                       ")"));
    }
  }
  absl::flat_hash_set<int32_t> in_chosen_pipelines;
  for (const IdRange& range : choice.pipelines) {
    for (int64_t p = range.first; p <= range.last; ++p) {
      for (const bubble::RankTotals& rank :
           result.pipelines[static_cast<size_t>(p)].bubble.per_rank) {
        in_chosen_pipelines.insert(rank.rank);
      }
    }
  }
  const auto among = [](const std::vector<IdRange>& ranges, int64_t id) {
    for (const IdRange& range : ranges) {
      if (id >= range.first && id <= range.last) return true;
    }
    return false;
  };
  std::vector<size_t> chosen;
  for (size_t i = 0; i < trace.ranks.size(); ++i) {
    const int32_t id = trace.ranks[i].rank;
    if (!choice.pipelines.empty() && !in_chosen_pipelines.contains(id)) continue;
    if (!choice.ranks.empty() && !among(choice.ranks, id)) continue;
    chosen.push_back(i);
  }
  if (chosen.empty()) {
    return absl::InvalidArgumentError(
        "none of the chosen ranks is in a chosen pipeline: the merged trace would be empty");
  }
  return chosen;
}

absl::StatusOr<MergedFrame> WriteOverlay(const Trace& trace, const job::Result& result,
                                         const std::vector<size_t>& ranks, ByteSink* sink,
                                         OverlayCounts* counts) {
  *counts = OverlayCounts();
  const absl::flat_hash_map<int32_t, PipelineRank> pipeline_ranks = PipelineRanks(result);
  EventList events(sink);
  std::string layout = absl::StrCat("{\"version\":", kineto::kMergedFormatVersion, ",\"ranks\":[");
  int64_t next_pid = 1;
  // Each pipeline's overlay process, made when its first rank is written; ordered before every
  // rank's own processes (whose sort index is their pid), pipeline by pipeline.
  absl::flat_hash_map<size_t, int64_t> overlay_pids;
  const auto overlay_pid_of = [&](const PipelineRank& where) {
    const auto [found, made] = overlay_pids.try_emplace(where.index, next_pid);
    if (made) {
      ++next_pid;
      const size_t stages = where.pipeline->bubble.per_rank.size();
      AddProcessName(
          found->second,
          absl::StrCat("pipeline ", where.index, ": bubblescope, ", stages,
                       stages == 1 ? " stage" : " stages"),
          &events,
          static_cast<int64_t>(where.index) - static_cast<int64_t>(result.pipelines.size()));
    }
    return found->second;
  };
  for (size_t i : ranks) {
    const Rank& rank = trace.ranks[i];
    const auto where = pipeline_ranks.find(rank.rank);
    const RankClock clock = where == pipeline_ranks.end() ? RankClock{} : where->second.clock;
    RankLayout rank_layout;
    RankEventCounts rank_counts;
    if (absl::Status appended =
            AppendRankEvents(rank, clock, &next_pid, &events, &rank_layout, &rank_counts);
        !appended.ok()) {
      return appended;
    }
    counts->events += rank_counts.written;
    counts->left_out += rank_counts.left_out;
    absl::StrAppend(&layout, counts->ranks > 0 ? ",\n" : "\n", "{\"rank\":", rank.rank,
                    ",\"source\":");
    ++counts->ranks;
    text::AppendJsonString(rank.source_path, &layout);
    absl::StrAppend(&layout, ",\"clock_offset_ns\":", clock.offset_ns);
    if (clock.rate != 0.0) {
      // The offset holds at the anchor and changes by the rate (the clock's drift).
      absl::StrAppend(&layout, ",\"clock_anchor_ns\":", clock.anchor_ns,
                      ",\"clock_rate\":", absl::StrFormat("%.17g", clock.rate));
    }
    if (!rank.host.empty()) {
      // Read back as the rank's host, so ranks of one machine keep sharing their clock.
      layout += ",\"host_name\":";
      text::AppendJsonString(rank.host, &layout);
    }
    // A rank whose file was cut short keeps saying so: its last iteration is incomplete.
    if (rank.stats.count(ImportCounter::kTruncated) > 0) layout += ",\"truncated\":true";
    if (where != pipeline_ranks.end()) {
      const int64_t overlay_pid = overlay_pid_of(where->second);
      absl::StrAppend(&layout, ",\"overlay_pid\":", overlay_pid);
      AddOverlayTracks(rank.rank, where->second, overlay_pid, &events, counts);
    }
    absl::StrAppend(&layout, ",\"processes\":", rank_layout.processes);
    if (!rank_layout.distributed_info.empty()) {
      absl::StrAppend(&layout, ",\"distributedInfo\":", rank_layout.distributed_info);
    }
    if (!rank_layout.device_properties.empty()) {
      absl::StrAppend(&layout, ",\"deviceProperties\":", rank_layout.device_properties);
    }
    layout += "}";
    // What is buffered goes out at each rank's end, so a failed write stops the job there.
    BUBBLESCOPE_RETURN_IF_ERROR(events.Flush());
  }
  layout += "]}";
  return MergedFrame{.head = absl::StrCat("{\"", std::string(kineto::kMergedMemberName),
                                          "\":", layout, ",\n\"traceEvents\":[\n"),
                     .tail = "\n]}\n"};
}

absl::StatusOr<std::string> RenderOverlay(const Trace& trace, const job::Result& result,
                                          OverlayCounts* counts) {
  std::vector<size_t> every_rank(trace.ranks.size());
  for (size_t i = 0; i < every_rank.size(); ++i) every_rank[i] = i;
  std::string events;
  StringSink sink(&events);
  absl::StatusOr<MergedFrame> frame = WriteOverlay(trace, result, every_rank, &sink, counts);
  BUBBLESCOPE_RETURN_IF_ERROR(frame.status());
  return absl::StrCat(frame->head, events, frame->tail);
}

}  // namespace bubblescope::perfetto
