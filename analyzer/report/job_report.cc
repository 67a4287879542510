#include "report/job_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/text_table.h"
#include "report/units.h"

namespace bubblescope {

std::string JobText(const job::JobSummary& job) {
  std::string out = "\njob: ";
  if (job.pipelines == 0) {
    absl::StrAppend(&out, "no pipeline found (no rank has point-to-point traffic)\n");
  } else {
    absl::StrAppend(&out, job.pipelines, job.pipelines == 1 ? " pipeline" : " pipelines");
    if (job.pipelines > 1) {
      absl::StrAppend(&out, "; worst is pipeline ", job.worst_pipeline, " with bubble ",
                      Percent(job.worst_bubble_fraction), "%, best ",
                      Percent(job.best_bubble_fraction), "%, spread ",
                      absl::StrFormat("%.1f", 100.0 * job.bubble_spread), " pp");
    }
    absl::StrAppend(&out, "\n");
  }
  if (!job.ranks_without_p2p.empty()) {
    absl::StrAppend(&out, "  ranks without point-to-point traffic (in no pipeline): ",
                    absl::StrJoin(job.ranks_without_p2p, ","), "\n");
  }
  for (const std::string& note : job.notes) absl::StrAppend(&out, "  note: ", note, "\n");
  if (!job.collectives.empty()) {
    absl::StrAppend(&out, "  collectives over all ranks:\n");
    TextTable table({{"kind", Align::kLeft}, {"count"}, {"MiB"}, {"time_ms"}});
    for (const collectives::Summary& kind : job.collectives) {
      table.AddRow({kind.kind, absl::StrCat(kind.count),
                    kind.sized == 0
                        ? std::string("-")
                        : absl::StrFormat("%.2f", static_cast<double>(kind.bytes) / (1 << 20)),
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
  json.Key("ranks_without_p2p");
  json.BeginArray();
  for (int32_t rank : job.ranks_without_p2p) json.Int(rank);
  json.EndArray();
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
  json.EndObject();
}

}  // namespace bubblescope
