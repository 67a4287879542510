#include "report/openmetrics.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "text/shortest_double.h"

namespace bubblescope {
namespace {

using watch::IterationReport;
using watch::StageIteration;

// One metric family. The name ends with the unit when there is one, as OpenMetrics asks of a
// family with a # UNIT line. Help texts hold no backslash, quote or line break: the two formats
// escape those differently in # HELP, and text without them reads the same in both.
template <typename Source>
struct Family {
  std::string_view name;
  std::string_view unit;  // empty: no # UNIT line
  std::string_view help;
  std::optional<double> (*value)(const Source&);  // nullopt: no sample
};

double Seconds(TimeNs ns) { return static_cast<double>(ns) / 1e9; }

constexpr Family<IterationReport> kPipelineFamilies[] = {
    {.name = "bubblescope_pipeline_bubble_ratio",
     .unit = "ratio",
     .help = "Bubble of the newest analysed iteration: idle time over ranks times window",
     .value = [](const IterationReport& r) -> std::optional<double> { return r.bubble_fraction; }},
    {.name = "bubblescope_pipeline_excess_bubble_ratio",
     .unit = "ratio",
     .help = "Bubble of the newest iteration above what the inferred schedule leaves by itself",
     .value = [](const IterationReport& r) { return r.excess_bubble_fraction; }},
    {.name = "bubblescope_pipeline_ideal_bubble_ratio",
     .unit = "ratio",
     .help = "Bubble the inferred schedule leaves by itself",
     .value = [](const IterationReport& r) { return r.ideal_bubble_fraction; }},
    {.name = "bubblescope_pipeline_iteration_seconds",
     .unit = "seconds",
     .help = "Latency of the newest iteration: its first to its last device activity",
     .value = [](const IterationReport& r) -> std::optional<double> {
       return Seconds(r.window_ns);
     }},
    {.name = "bubblescope_pipeline_step",
     .unit = "",
     .help = "Step number of the newest analysed iteration",
     .value = [](const IterationReport& r) -> std::optional<double> {
       return static_cast<double>(r.step);
     }},
    {.name = "bubblescope_pipeline_analysed_timestamp_seconds",
     .unit = "seconds",
     .help = "Unix time at which watch analysed the newest iteration",
     .value = [](const IterationReport& r) -> std::optional<double> {
       return static_cast<double>(r.analysed_unix_ns) / 1e9;
     }},
};

constexpr Family<StageIteration> kStageFamilies[] = {
    {.name = "bubblescope_stage_compute_seconds",
     .unit = "seconds",
     .help = "Compute time of the stage in the newest iteration of its pipeline",
     .value = [](const StageIteration& s) -> std::optional<double> {
       return Seconds(s.split.compute);
     }},
    {.name = "bubblescope_stage_idle_seconds",
     .unit = "seconds",
     .help = "Idle time of the stage in the newest iteration of its pipeline",
     .value = [](const StageIteration& s) -> std::optional<double> {
       return Seconds(s.split.idle);
     }},
};

// A sample's value: the shortest decimal that reads back as the double, or the spellings both
// formats share for the values that have no decimal.
void AppendNumber(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
  } else if (!text::AppendShortestDouble(value, out)) {
    out->append("NaN");
  }
}

template <typename Source>
void AppendHeader(const Family<Source>& family, std::string* out) {
  const std::string name(family.name);
  absl::StrAppend(out, "# HELP ", name, " ", std::string(family.help), "\n");
  absl::StrAppend(out, "# TYPE ", name, " gauge\n");
  if (!family.unit.empty())
    absl::StrAppend(out, "# UNIT ", name, " ", std::string(family.unit), "\n");
}

// Label values are decimal integers: nothing in them needs the formats' escapes.
void AppendSample(std::string_view name, std::string_view labels, double value, std::string* out) {
  out->append(name).append("{").append(labels).append("} ");
  AppendNumber(value, out);
  out->push_back('\n');
}

// The sources of a family's samples, each with its labels, in the file's order.
template <typename Source>
using Labelled = std::vector<std::pair<std::string, const Source*>>;

// Each family's header and samples; a family without a sample is left out whole.
template <typename Source, size_t kCount>
void AppendFamilies(const Family<Source> (&families)[kCount], const Labelled<Source>& sources,
                    std::string* out) {
  for (const Family<Source>& family : families) {
    bool header_written = false;
    for (const auto& [labels, source] : sources) {
      const std::optional<double> value = family.value(*source);
      if (!value.has_value()) continue;
      if (!header_written) AppendHeader(family, out);
      header_written = true;
      AppendSample(family.name, labels, *value, out);
    }
  }
}

// The newest report of each pipeline, ascending by pipeline, each with its stages ascending.
std::vector<IterationReport> Ordered(const std::vector<IterationReport>& latest) {
  std::vector<IterationReport> ordered = latest;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const IterationReport& a, const IterationReport& b) {
                     return a.pipeline != b.pipeline ? a.pipeline < b.pipeline : a.step > b.step;
                   });
  ordered.erase(std::unique(ordered.begin(), ordered.end(),
                            [](const IterationReport& a, const IterationReport& b) {
                              return a.pipeline == b.pipeline;
                            }),
                ordered.end());
  for (IterationReport& report : ordered) {
    std::stable_sort(
        report.stages.begin(), report.stages.end(),
        [](const StageIteration& a, const StageIteration& b) { return a.stage < b.stage; });
  }
  return ordered;
}

}  // namespace

std::string OpenMetricsText(const std::vector<IterationReport>& latest) {
  const std::vector<IterationReport> reports = Ordered(latest);
  Labelled<IterationReport> pipelines;
  Labelled<StageIteration> stages;
  for (const IterationReport& report : reports) {
    const std::string pipeline = absl::StrCat("pipeline=\"", report.pipeline, "\"");
    pipelines.emplace_back(pipeline, &report);
    for (const StageIteration& stage : report.stages) {
      stages.emplace_back(
          absl::StrCat(pipeline, ",stage=\"", stage.stage, "\",rank=\"", stage.rank, "\""), &stage);
    }
  }
  std::string out;
  AppendFamilies(kPipelineFamilies, pipelines, &out);
  AppendFamilies(kStageFamilies, stages, &out);
  out.append("# EOF\n");
  return out;
}

}  // namespace bubblescope
