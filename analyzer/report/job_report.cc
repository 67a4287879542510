#include "report/job_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/cause_report.h"
#include "report/text_table.h"
#include "report/units.h"
#include "report_view/report_view.h"

namespace bubblescope {

namespace {

// "2,3" or, past 16 ids, "2,3,...,40 (39 ranks)".
std::string RankList(const std::vector<int32_t>& ranks) {
  constexpr size_t kShown = 16;
  if (ranks.size() <= kShown) return absl::StrJoin(ranks, ",");
  return absl::StrCat(absl::StrJoin(ranks.begin(), ranks.begin() + kShown - 1, ","), ",...,",
                      ranks.back(), " (", ranks.size(), " ranks)");
}

std::string StageName(const report_view::RankPlaces& places, int32_t rank) {
  const int32_t stage = places.StageOf(rank);
  return stage < 0 ? absl::StrCat("rank ", rank)
                   : absl::StrCat("stage ", stage, " (rank ", rank, ")");
}

// Where the bubble is: the rank that idles most and the one that idles least (the view's
// IdleExtremes); that they idle alike when the two read the same. Empty with one rank.
std::string WhereLine(const job::Pipeline& pipeline, const report_view::PipelineView& view) {
  if (!view.idle.has_value()) return "";
  const report_view::IdleExtremes& idle = *view.idle;
  // Alike to the shown digit: naming one stage as both the most and the least idle says nothing.
  if (Percent(idle.most_idle_fraction) == Percent(idle.least_idle_fraction)) {
    return absl::StrCat("  where: all ", pipeline.bubble.per_rank.size(),
                        idle.every_rank_staged ? " stages" : " ranks", " idle alike, ",
                        Percent(idle.most_idle_fraction), "% of their time\n");
  }
  return absl::StrCat("  where: ", StageName(view.places, idle.most_idle_rank), " idles most, ",
                      Percent(idle.most_idle_fraction), "% of its time; ",
                      StageName(view.places, idle.least_idle_rank), " least, ",
                      Percent(idle.least_idle_fraction), "%\n");
}

}  // namespace

int32_t StagePosition(const job::Pipeline& pipeline, int32_t rank) {
  return report_view::RankPlaces(pipeline.crossrank.pipeline.order).StageOf(rank);
}

std::string DiagnosisText(const job::Result& result) {
  if (result.pipelines.empty()) return "";
  // The worst bubble; without any pipeline that has a complete iteration (so no bubble to rank),
  // the first pipeline, whose diagnosis is why it has none.
  const auto index = static_cast<size_t>(std::max(result.job.worst_pipeline, 0));
  const job::Pipeline& pipeline = result.pipelines[index];
  const report_view::PipelineView view = report_view::ViewOf(pipeline);
  const bubble::Result& bubble = pipeline.bubble;
  std::string out = absl::StrCat("diagnosis: pipeline ", index);
  if (pipeline.shape.has_value()) {
    const schedule_inference::Result& shape = *pipeline.shape;
    absl::StrAppend(&out, " (p=", shape.p, " m=", shape.m, " v=", shape.v, " ",
                    std::string(schedule_inference::ScheduleFamilyName(shape.family)), ")");
  }
  if (!pipeline.no_complete_iteration.empty()) {
    absl::StrAppend(&out, ": no complete iteration to measure: ", pipeline.no_complete_iteration,
                    "\n");
  } else {
    absl::StrAppend(&out, ": bubble ", Percent(bubble.bubble_fraction), "%");
    if (pipeline.ideal.has_value()) {
      absl::StrAppend(&out, " against ", Percent(pipeline.ideal->fraction), "%",
                      " for its schedule alone");
    }
    absl::StrAppend(&out, ", iteration ", MillisWithUnit(static_cast<double>(bubble.latency.p50)),
                    " (median)\n");
  }
  if (!pipeline.cut_short_ranks.empty()) {
    absl::StrAppend(&out, "  cut short: the trace of rank",
                    pipeline.cut_short_ranks.size() == 1 ? " " : "s ",
                    RankList(pipeline.cut_short_ranks), " ends early; it keeps its stage, and ",
                    view.partial_iterations, " of ", bubble.iterations.size(),
                    " iterations are left out of every figure as partial\n");
  }
  if (bubble.ranks.size() == 1) {
    absl::StrAppend(&out, "  one rank loaded (rank ", bubble.ranks.front(),
                    "): no pipeline evidence, its waits cannot be traced to a peer\n");
  } else if (pipeline.no_complete_iteration.empty()) {
    absl::StrAppend(&out, WhereLine(pipeline, view));
  }
  if (pipeline.causes.causes.empty()) {
    absl::StrAppend(&out, "  top cause: none found (no finding)\n");
    return out;
  }
  // Causes come ranked by predicted saving: the first is what to fix first.
  const root_causes::RootCause& top = pipeline.causes.causes.front();
  absl::StrAppend(&out, "  top cause: ", CauseSentence(top), "\n  next step: ", top.next_step,
                  "\n");
  return out;
}

std::string OneRunText(const one_run::Result& one_run) {
  std::string out;
  for (const one_run::Sign& sign : one_run.signs) {
    absl::StrAppend(&out, sign.conclusive ? "NOT ONE RUN: ranks " : "may not be one run: ranks ",
                    sign.rank_a, " and ", sign.rank_b,
                    sign.conclusive ? " are files of different runs: "
                                    : " (a sign only, legal in rare setups): ",
                    sign.detail, "\n");
  }
  if (one_run.CannotBeOneRun()) {
    absl::StrAppend(&out,
                    "  the figures below pair them as one job; analyze each run's files "
                    "apart (--strict refuses this)\n");
  }
  return out;
}

std::string IncompleteJobText(const job::Result& result) {
  if (!result.Incomplete()) return "";
  const job_completeness::JobResult& completeness = result.job.completeness;
  std::string out = "INCOMPLETE JOB: ";
  if (!completeness.missing_ranks.empty() || !completeness.ranks_outside_world.empty()) {
    absl::StrAppend(&out, "the trace holds ", completeness.ranks_in_world, " of the ",
                    completeness.world_size, " ranks the job declares (world size)");
    if (!completeness.missing_ranks.empty()) {
      absl::StrAppend(&out, "; missing ", RankList(completeness.missing_ranks));
    }
    if (!completeness.ranks_outside_world.empty()) {
      const bool one = completeness.ranks_outside_world.size() == 1;
      absl::StrAppend(&out, one ? "; rank " : "; ranks ",
                      RankList(completeness.ranks_outside_world), one ? " is" : " are",
                      " outside it (ids 0 to ", completeness.world_size - 1,
                      ": a file of another job, or a wrong rank id)");
    }
  } else {
    absl::StrAppend(&out, "ranks exchange point-to-point traffic with ranks ",
                    RankList(report_view::MissingPeersOfJob(result)),
                    ", which are not in the trace");
  }
  absl::StrAppend(&out, ". Pipelines and their figures cover the loaded ranks only.\n");
  return out;
}

std::string IncompletePipelineText(const job::Pipeline& pipeline) {
  if (pipeline.crossrank.missing_peers.empty()) return "";
  return absl::StrCat("  INCOMPLETE: its ranks send to or receive from rank",
                      pipeline.crossrank.missing_peers.size() == 1 ? " " : "s ",
                      RankList(pipeline.crossrank.missing_peers),
                      ", not in the trace: p, m, the schedule and the bubble below describe the "
                      "loaded stages only\n");
}

// One line: how many declared groups have each role, and from what; the layout's are guesses.
static std::string GroupRolesText(const std::vector<index::JobGroup>& groups) {
  std::vector<std::string> read;
  std::vector<std::string> guessed;
  std::vector<std::string> inferred;
  for (size_t i = 0; i < groups.size();) {
    size_t j = i;
    const index::GroupRoleInfo& role = groups[i].role;
    while (j < groups.size() && groups[j].role.role == role.role &&
           groups[j].role.source == role.source) {
      ++j;
    }
    const std::string entry =
        absl::StrCat(j - i, " ", std::string(index::GroupRoleName(role.role)));
    if (role.source == index::RoleSource::kDescription) read.push_back(entry);
    if (role.source == index::RoleSource::kLayout) guessed.push_back(entry);
    if (role.source == index::RoleSource::kStructure) inferred.push_back(entry);
    i = j;
  }
  if (read.empty() && guessed.empty() && inferred.empty()) return "";
  std::string out = "  process groups:";
  bool first = true;
  const auto part = [&out, &first](const std::vector<std::string>& entries, const char* what) {
    if (entries.empty()) return;
    absl::StrAppend(&out, first ? " " : "; ", absl::StrJoin(entries, ", "));
    absl::StrAppend(&out, " (", what, ")");
    first = false;
  };
  part(read, "described");
  part(inferred, "no description: data parallel inferred from the groups' ranks");
  part(guessed, "guess from the rank layout, not applied");
  return out + "\n";
}

std::string NoPipelineReason(const job::JobSummary& job) {
  std::vector<std::string> point_to_point;
  for (const collectives::Summary& kind : job.collectives) {
    for (const CommKind p2p : {CommKind::kSend, CommKind::kRecv, CommKind::kSendRecv}) {
      if (kind.kind == CommKindName(p2p)) point_to_point.push_back(kind.kind);
    }
  }
  if (point_to_point.empty()) return "no rank has point-to-point traffic";
  return absl::StrCat("the point-to-point traffic (", absl::StrJoin(point_to_point, ", "),
                      ") holds no send or receive between pipeline stages");
}

std::string JobText(const job::JobSummary& job) {
  std::string out = "\njob: ";
  if (job.pipelines == 0) {
    absl::StrAppend(&out, "no pipeline found (", NoPipelineReason(job), ")\n");
  } else {
    absl::StrAppend(&out, job.pipelines, job.pipelines == 1 ? " pipeline" : " pipelines");
    if (job.pipelines > 1) {
      absl::StrAppend(&out, "; worst is pipeline ", job.worst_pipeline, " with bubble ",
                      Percent(job.worst_bubble_fraction), "%, best ",
                      Percent(job.best_bubble_fraction), "%, spread ", Percent(job.bubble_spread),
                      " points");
    }
    absl::StrAppend(&out, "\n");
  }
  if (!job.ranks_without_p2p.empty()) {
    absl::StrAppend(&out, "  ranks in no pipeline (no send or receive between stages): ",
                    absl::StrJoin(job.ranks_without_p2p, ","), "\n");
  }
  for (const std::string& note : job.notes) absl::StrAppend(&out, "  note: ", note, "\n");
  if (job.completeness.world_sizes_disagree) {
    absl::StrAppend(&out, "  note: the ranks declare different world sizes (the largest, ",
                    job.completeness.world_size, ", is used)\n");
  }
  absl::StrAppend(&out, GroupRolesText(job.process_groups));
  if (!job.collectives.empty()) {
    absl::StrAppend(&out, "  collectives over all ranks:\n");
    TextTable table({{"kind", Align::kLeft}, {"count"}, {"MiB"}, {"time_ms"}});
    for (const collectives::Summary& kind : job.collectives) {
      table.AddRow({kind.kind, absl::StrCat(kind.count),
                    kind.sized == 0 ? std::string("-") : Mebibytes(kind.bytes),
                    Millis(static_cast<double>(kind.time_ns))});
    }
    absl::StrAppend(&out, table.Render(2));
  }
  return out;
}

void WriteJobMember(const job::JobSummary& job, JsonWriter& json) {
  json.Key("job");
  json.BeginObject();
  json.IntMember("pipelines", job.pipelines);
  json.BoolMember("pipeline_found", job.pipelines > 0);
  json.Key("worst_pipeline");
  if (job.worst_pipeline < 0) {
    json.Null();
  } else {
    json.Int(job.worst_pipeline);
  }
  auto fraction = [&](std::string_view key, double value) {
    json.Key(key);
    if (job.pipelines == 0) {
      json.Null();
    } else {
      json.Double(value);
    }
  };
  fraction("worst_bubble_fraction", job.worst_bubble_fraction);
  fraction("best_bubble_fraction", job.best_bubble_fraction);
  fraction("bubble_spread", job.bubble_spread);
  json.IntArrayMember("ranks_without_p2p", job.ranks_without_p2p);
  json.Key("world_size");
  if (job.completeness.world_size < 0) {
    json.Null();
  } else {
    json.Int(job.completeness.world_size);
  }
  json.BoolMember("world_sizes_disagree", job.completeness.world_sizes_disagree);
  json.IntArrayMember("missing_ranks", job.completeness.missing_ranks);
  json.IntArrayMember("ranks_outside_world", job.completeness.ranks_outside_world);
  json.Key("one_run");
  json.BeginObject();
  json.BoolMember("cannot_be_one_run", job.one_run.CannotBeOneRun());
  json.Key("signs");
  json.BeginArray();
  for (const one_run::Sign& sign : job.one_run.signs) {
    json.BeginObject();
    json.StringMember("kind", one_run::SignKindName(sign.kind));
    json.BoolMember("conclusive", sign.conclusive);
    json.IntArrayMember("ranks", std::vector<int32_t>{sign.rank_a, sign.rank_b});
    json.StringMember("detail", sign.detail);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  json.Key("notes");
  json.BeginArray();
  for (const std::string& note : job.notes) json.String(note);
  json.EndArray();
  json.Key("collectives");
  json.BeginArray();
  for (const collectives::Summary& kind : job.collectives) {
    json.BeginObject();
    json.StringMember("kind", kind.kind);
    json.IntMember("count", kind.count);
    json.IntMember("bytes", kind.bytes);
    json.IntMember("sized_count", kind.sized);
    json.DecimalMember("time_us", kind.time_ns, 3);
    json.EndObject();
  }
  json.EndArray();
  json.Key("process_groups");
  json.BeginArray();
  for (const index::JobGroup& group : job.process_groups) {
    json.BeginObject();
    json.StringMember("name", group.name);
    json.StringMember("description", group.description);
    json.IntArrayMember("ranks", group.ranks);
    json.StringMember("role", index::GroupRoleName(group.role.role));
    json.StringMember("role_source", index::RoleSourceName(group.role.source));
    json.StringMember("evidence", group.role.evidence);
    json.IntArrayMember("declared_by", group.declared_by);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

}  // namespace bubblescope
