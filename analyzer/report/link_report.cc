#include "report/link_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compare/report_schema.h"
#include "report/text_table.h"
#include "report/units.h"
#include "report_view/report_view.h"

namespace bubblescope {
namespace {

// A rank's stage (RankPlace::stage); "-" where the order does not place it.
std::string Stage(const report_view::RankPlaces& places, int32_t rank) {
  const int32_t stage = places.StageOf(rank);
  return stage < 0 ? "-" : absl::StrCat(stage);
}

// A link's bandwidth figure; "-" for a link whose transfers gave no bandwidth sample.
std::string LinkGbps(const link_stats::Link& link, double gbps) {
  return link.bandwidth_samples == 0 ? "-" : Gbps(gbps);
}

// A link whose transfers carry no sizes (gloo, NCCL kernels without args) shows "-", not 0.
std::string LinkMebibytes(const link_stats::Link& link) {
  return link.median_message_bytes < 0 ? "-" : Mebibytes(link.bytes);
}

void MicrosMember(JsonWriter& json, std::string_view key, int64_t ns) {
  json.DecimalMember(key, ns, 3);
}

// Why an unaligned rank's estimate was not applied.
std::string NotAppliedBecause(const clock_alignment::RankOffset& offset, TimeNs tolerance_ns) {
  switch (offset.verdict) {
    case clock_alignment::Verdict::kNoEvidence:
      return "no transfer or collective connects it to the reference";
    case clock_alignment::Verdict::kLoose:
      return absl::StrCat("uncertain beyond the ", Micros(static_cast<double>(tolerance_ns)),
                          " us an applied offset may have");
    case clock_alignment::Verdict::kDisagree:
      return "its samples disagree on which clock runs ahead";
    case clock_alignment::Verdict::kGuessedPeers:
      return "only causality bounds, from transfers paired through guessed peers";
    case clock_alignment::Verdict::kGuessApplied:
      return offset.own_zero
                 ? "loose, but its trace starts at its own zero, so its recorded clock says nothing"
                 : absl::StrCat("uncertain beyond the ", Micros(static_cast<double>(tolerance_ns)),
                                " us an aligned offset may have, but at least twice its "
                                "uncertainty from the recorded clock, which is surely farther "
                                "from the truth");
    case clock_alignment::Verdict::kBreaksCausality:
      return absl::StrCat("its estimate breaks causality at ", offset.rejected_by);
    case clock_alignment::Verdict::kHeldBack:
      return "its estimate holds, but other ranks cannot be aligned, and moving only some "
             "clocks could make the figures between them worse";
    default:
      return "";
  }
}

std::string Uncertainty(const clock_alignment::RankOffset& offset) {
  return offset.uncertainty_ns == clock_alignment::kUnbounded
             ? std::string("unbounded")
             : absl::StrCat(Micros(static_cast<double>(offset.uncertainty_ns)), " us");
}

// One rank's clock as the text report gives it: the offset applied and its evidence, or for an
// unaligned rank the estimate it was left without and why.
std::string ClockText(const clock_alignment::RankOffset& offset, TimeNs tolerance_ns) {
  const std::string source(clock_alignment::SourceName(offset.source));
  if (offset.verdict == clock_alignment::Verdict::kSameClock) {
    return absl::StrCat("rank ", offset.rank,
                        offset.source == clock_alignment::Source::kReference
                            ? " reference"
                            : " +0.000 ms (same host)");
  }
  std::string samples = absl::StrCat(source, ", ", offset.samples, " samples");
  if (offset.rate != 0.0) {
    // A drifting clock: its offset at the job's anchor and how fast it moves.
    samples = absl::StrFormat("%s, %+.2f ppm from %.3f s", samples, offset.rate * 1e6,
                              static_cast<double>(offset.anchor_ns) / 1e9);
  }
  if (!offset.rejected_by.empty() && offset.verdict != clock_alignment::Verdict::kBreaksCausality) {
    absl::StrAppend(&samples, "; a samples' estimate was rejected, it broke ", offset.rejected_by);
  }
  if (offset.aligned) {
    return absl::StrFormat("rank %d %+.3f ms (+/- %s, %s%s)", offset.rank,
                           static_cast<double>(offset.offset_ns) / 1e6, Uncertainty(offset),
                           samples,
                           offset.applied() ? "" : ", consistent with the recorded clocks");
  }
  if (offset.source == clock_alignment::Source::kNone) {
    return absl::StrCat("rank ", offset.rank, " (", NotAppliedBecause(offset, tolerance_ns), ")");
  }
  return absl::StrFormat("rank %d %s (estimate %+.3f ms +/- %s from %s: %s)", offset.rank,
                         offset.applied() ? "moved by its estimate" : "kept as recorded",
                         static_cast<double>(offset.estimate_ns) / 1e6, Uncertainty(offset),
                         samples, NotAppliedBecause(offset, tolerance_ns));
}

}  // namespace

std::string LinkText(const job::CrossRankFigures& figures) {
  const std::vector<int32_t>& order = figures.pipeline.stage_order();
  const report_view::RankPlaces places(figures.pipeline.order);
  std::string out;
  if (figures.pipeline.interleaved) {
    absl::StrAppend(&out, "  the last stage sends back to the first: an interleaved cycle\n");
  }
  if (!figures.pipeline.peers_recorded) {
    const auto& by_source = figures.pipeline.peers_by_source;
    const bool any_inferred = by_source[static_cast<size_t>(p2p_graph::PeerSource::kInferred)] > 0;
    const bool any_named = by_source[static_cast<size_t>(p2p_graph::PeerSource::kPpAction)] > 0;
    absl::StrAppend(&out,
                    any_named && !any_inferred
                        ? "  no peer ranks in the traces: peers from the pipeline runtime's "
                          "transfer names (PP:<stage>SEND_F<mb>, ...) and its stage placement "
                          "(docs/cross-rank.md)\n"
                        : "  no peer ranks in the traces: stage order and peers inferred from the "
                          "schedule (docs/cross-rank.md)\n");
  }
  std::vector<std::string> aligned;
  std::vector<std::string> unaligned;
  for (const clock_alignment::RankOffset& offset : figures.offsets) {
    (offset.aligned ? aligned : unaligned).push_back(ClockText(offset, figures.clock_tolerance_ns));
  }
  if (!order.empty()) {
    absl::StrAppend(&out, "  clocks aligned to rank ", order.front(), ": ",
                    absl::StrJoin(aligned, ", "), "\n");
  }
  if (!unaligned.empty()) {
    absl::StrAppend(&out, "  not aligned, each clock a guess (docs/cross-rank.md): ",
                    absl::StrJoin(unaligned, "; "), "\n");
  }
  if (figures.links.empty()) {
    absl::StrAppend(&out, "  links: none measured\n");
  } else {
    absl::StrAppend(&out,
                    "  links (stage src -> dst) in ms: transfer_med per message, waits "
                    "summed over the link's transfers:\n");
    TextTable table({{"link", Align::kLeft},
                     {"stages", Align::kLeft},
                     {"transfers"},
                     {"MiB"},
                     {"transfer_med"},
                     {"Gbit/s_med"},
                     {"Gbit/s_p10"},
                     {"sender_wait"},
                     {"receiver_wait"},
                     {"slow", Align::kLeft}});
    for (const link_stats::Link& link : figures.links) {
      table.AddRow({absl::StrCat(link.src, "->", link.dst),
                    absl::StrCat(Stage(places, link.src), "->", Stage(places, link.dst)),
                    absl::StrCat(link.transfers), LinkMebibytes(link),
                    link.timed_transfers == 0 || link.clock_limited
                        ? std::string("-")
                        : Millis(static_cast<double>(link.transfer_median_ns)),
                    LinkGbps(link, link.gbps_median), LinkGbps(link, link.gbps_p10),
                    Millis(static_cast<double>(link.sender_wait_ns)),
                    Millis(static_cast<double>(link.receiver_wait_ns)),
                    link.slow            ? "SLOW"
                    : link.clock_limited ? "unjudged"
                                         : "no"});
    }
    absl::StrAppend(&out, table.Render(2));
    for (const link_stats::Link& link : figures.links) {
      if (!link.clock_limited) continue;
      absl::StrAppend(
          &out, "  link ", link.src, "->", link.dst,
          " cannot be judged: its two clocks are uncertain by ",
          link.clock_uncertainty_ns == clock_alignment::kUnbounded
              ? std::string("an unknown amount")
              : absl::StrCat(Micros(static_cast<double>(link.clock_uncertainty_ns)), " us"),
          " against each other, not well below its transfers (median ",
          Micros(static_cast<double>(link.transfer_median_all_ns)),
          " us); no bandwidth, slow link or late sender from it\n");
    }
  }
  for (const report_view::StallPerIteration& stall :
       report_view::StallsPerIteration(figures.stalls)) {
    absl::StrAppend(&out, "  stage ", Stage(places, stall.rank), " (rank ", stall.rank,
                    ") stalled ", Millis(stall.total_ns), " ms per iteration on stage ",
                    Stage(places, stall.peer), " (rank ", stall.peer,
                    "): ", Millis(stall.waiting_for_post_ns), " waiting for it to post, ",
                    Millis(stall.in_transfer_ns), " in transfer\n");
  }
  if (figures.ops_without_peer > 0) {
    absl::StrAppend(&out, "  ", figures.ops_without_peer,
                    " p2p ops without a known peer are left out of the links\n");
  }
  return out;
}

void WriteLinkMembers(const job::CrossRankFigures& figures, JsonWriter& json) {
  const std::vector<int32_t>& order = figures.pipeline.stage_order();
  json.BoolMember("interleaved", figures.pipeline.interleaved);
  json.BoolMember("peers_recorded", figures.pipeline.peers_recorded);
  json.Key("clock_reference_rank");
  if (order.empty()) {
    json.Null();
  } else {
    json.Int(order.front());
  }
  json.Key("clock_offsets_us");
  json.BeginObject();
  for (const clock_alignment::RankOffset& offset : figures.offsets) {
    if (offset.aligned) MicrosMember(json, absl::StrCat(offset.rank), offset.offset_ns);
  }
  json.EndObject();
  json.Key("clock_uncertainty_us");
  json.BeginObject();
  for (const clock_alignment::RankOffset& offset : figures.offsets) {
    if (offset.aligned) MicrosMember(json, absl::StrCat(offset.rank), offset.uncertainty_ns);
  }
  json.EndObject();
  json.Key("unaligned_ranks");
  json.BeginArray();
  for (const clock_alignment::RankOffset& offset : figures.offsets) {
    if (!offset.aligned) json.Int(offset.rank);
  }
  json.EndArray();
  json.Key("clock_as_recorded_ranks");
  json.BeginArray();
  for (const clock_alignment::RankOffset& offset : figures.offsets) {
    if (offset.as_recorded) json.Int(offset.rank);
  }
  json.EndArray();
  MicrosMember(json, "clock_tolerance_us", figures.clock_tolerance_ns);
  json.Key("clock_evidence");
  json.BeginArray();
  for (const clock_alignment::RankOffset& offset : figures.offsets) {
    json.BeginObject();
    json.IntMember("rank", offset.rank);
    json.Key("host");
    if (offset.host.empty()) {
      json.Null();
    } else {
      json.String(offset.host);
    }
    json.StringMember("source", clock_alignment::SourceName(offset.source));
    json.IntMember("samples", offset.samples);
    json.Key("estimate_us");
    if (offset.source == clock_alignment::Source::kNone) {
      json.Null();
    } else {
      json.Decimal(offset.estimate_ns, 3);
    }
    json.Key("uncertainty_us");
    if (offset.uncertainty_ns == clock_alignment::kUnbounded) {
      json.Null();
    } else {
      json.Decimal(offset.uncertainty_ns, 3);
    }
    json.BoolMember("applied", offset.applied());
    json.BoolMember("aligned", offset.aligned);
    json.StringMember("verdict", clock_alignment::VerdictName(offset.verdict));
    json.DoubleMember("rate_ppm", offset.rate * 1e6);
    MicrosMember(json, "anchor_us", offset.anchor_ns);
    MicrosMember(json, "residual_us", offset.residual_ns);
    json.Key("rejected_by");
    if (offset.rejected_by.empty()) {
      json.Null();
    } else {
      json.String(offset.rejected_by);
    }
    json.EndObject();
  }
  json.EndArray();
  json.Key(compare::schema::Member(compare::schema::PipelineMember::kLinks).key);
  json.BeginArray();
  for (const link_stats::Link& link : figures.links) {
    json.BeginObject();
    compare::schema::WriteFields(compare::schema::kLinkFields, link, json);
    json.EndObject();
  }
  json.EndArray();
  json.Key("stall_by_peer");
  json.BeginArray();
  const std::vector<report_view::StallPerIteration> per_iteration =
      report_view::StallsPerIteration(figures.stalls);
  for (size_t i = 0; i < figures.stalls.stalls.size(); ++i) {
    const stall_attribution::PeerStall& stall = figures.stalls.stalls[i];
    json.BeginObject();
    json.IntMember("rank", stall.rank);
    json.IntMember("peer", stall.peer);
    MicrosMember(json, "waiting_for_post_us", stall.waiting_for_post_ns);
    MicrosMember(json, "in_transfer_us", stall.in_transfer_ns);
    // Whole nanoseconds: the view's exact quotient, truncated.
    MicrosMember(json, "per_iteration_us", static_cast<TimeNs>(per_iteration[i].total_ns));
    json.EndObject();
  }
  json.EndArray();
}

}  // namespace bubblescope
