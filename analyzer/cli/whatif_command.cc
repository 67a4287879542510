#include "cli/whatif_command.h"

#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "pipeline/sim_schedule.h"
#include "report/whatif_report.h"

namespace bubblescope {
namespace {

constexpr char kWhatIfFooter[] = R"(
PATH is read as by `bubblescope analyze` (trace files or directories, one file per rank).
Without --microbatches, --schedule, --virtual-stages or --same-global-batch, each pipeline is
predicted at 2x and 4x its microbatches, in the other 1F1B flavour (interleaved v=2 from 1f1b
when m is a multiple of p, 1f1b from interleaved) and as ZB-H1; with any of them, at that one
configuration, the rest as measured.

Examples:
  bubblescope whatif traces/
  bubblescope whatif traces/ --microbatches 32
  bubblescope whatif traces/ --microbatches 32 --same-global-batch
  bubblescope whatif traces/ --schedule interleaved --virtual-stages 2 --format json

The model (docs/whatif.md): the measured per-stage forward, backward and weight-gradient times,
each link's median transfer time and each rank's memory floor and peak, run through the
schedule simulator. "as measured, modelled" is the measured configuration through the same
model: its distance from the measured iteration is what the model leaves out (host time,
optimizer, jitter).

Exit status: 0 success (a pipeline that cannot be modelled says why in the report); 1 the
report could not be written; 2 usage error, unreadable input, or a --strict rejection.
)";

// The one candidate the flags describe for `shape`.
absl::StatusOr<whatif::Candidate> FlagCandidate(const schedule_inference::Result& shape,
                                                const std::string& schedule_name,
                                                int32_t microbatches, int32_t virtual_stages,
                                                bool same_global_batch) {
  whatif::Candidate candidate{pipeline::SimScheduleOf(shape.family), shape.m, shape.v,
                              same_global_batch};
  if (!schedule_name.empty()) {
    bool known = false;
    for (sim::Schedule schedule : sim::kSchedules) {
      if (sim::ScheduleName(schedule) == schedule_name) {
        candidate.schedule = schedule;
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--schedule: '", schedule_name, "' is not one of gpipe, 1f1b, interleaved, zb-h1, fwd-only"));
    }
    const bool interleaved = candidate.schedule == sim::Schedule::kInterleaved1F1B;
    candidate.virtual_stages = interleaved ? (shape.v > 1 ? shape.v : 2) : 1;
  }
  if (microbatches > 0) candidate.microbatches = microbatches;
  if (virtual_stages > 0) candidate.virtual_stages = virtual_stages;
  return candidate;
}

}  // namespace

WhatIfCommand::WhatIfCommand(std::string tool_version) : tool_version_(std::move(tool_version)) {}

CLI::App* WhatIfCommand::Define(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "whatif", "Predict each pipeline's iteration time, bubble and peak memory per stage under "
                "other microbatch counts, schedules or virtual stages, from the measured job");
  command->footer(kWhatIfFooter);
  DefineInputs(command);
  DefineOutput(command);
  command->add_option("-m,--microbatches", microbatches_, "Microbatches per iteration")
      ->type_name("N")
      ->check(WholeNumberAtLeast(1));
  command
      ->add_option("--schedule", schedule_,
                   "gpipe, 1f1b, interleaved, zb-h1 or fwd-only (default: as measured)")
      ->type_name("S");
  command
      ->add_option("--virtual-stages", virtual_stages_,
                   "Chunks per rank, interleaved only (default: as measured, 2 when "
                   "--schedule interleaved changes a one-chunk job)")
      ->type_name("V")
      ->check(WholeNumberAtLeast(1));
  command->add_flag("--same-global-batch", same_global_batch_,
                    "Keep the samples per iteration: a microbatch's compute and activations "
                    "scale with measured m / new m");
  return command;
}

int WhatIfCommand::Run(std::ostream& out, std::ostream& err) {
  int status = kExitOk;
  std::optional<LoadedJob> loaded = LoadJob(job::Options{}, err, &status);
  if (!loaded.has_value()) return status;
  const bool chosen =
      microbatches_ > 0 || !schedule_.empty() || virtual_stages_ > 0 || same_global_batch_;
  std::vector<PipelineWhatIf> pipelines;
  for (size_t i = 0; i < loaded->job.pipelines.size(); ++i) {
    const job::Pipeline& pipeline = loaded->job.pipelines[i];
    PipelineWhatIf entry{static_cast<int32_t>(i), pipeline.crossrank.pipeline.stage_order(),
                         absl::FailedPreconditionError(pipeline.shape_problem.empty()
                                                           ? "the pipeline's shape is unknown"
                                                           : pipeline.shape_problem)};
    if (pipeline.shape.has_value()) {
      std::vector<whatif::Candidate> candidates;
      if (chosen) {
        absl::StatusOr<whatif::Candidate> candidate =
            FlagCandidate(*pipeline.shape, schedule_, microbatches_, virtual_stages_,
                          same_global_batch_);
        if (!candidate.ok()) {
          err << "bubblescope: " << MessageLine(candidate.status()) << "\n";
          return kExitBadInput;
        }
        candidates.push_back(*candidate);
      }
      entry.result = whatif::Analyze({.trace = &loaded->trace,
                                      .shape = &*pipeline.shape,
                                      .bubble = &pipeline.bubble,
                                      .links = &pipeline.crossrank.links},
                                     candidates);
    }
    pipelines.push_back(std::move(entry));
  }
  std::string report;
  if (format_ == "json") {
    absl::StatusOr<std::string> json = WhatIfJson(pipelines, tool_version_);
    if (!json.ok()) {
      err << "bubblescope: internal error: " << MessageLine(json.status()) << "\n";
      return kExitFailure;
    }
    report = *std::move(json);
  } else {
    report = WhatIfText(pipelines);
  }
  return WriteReport(report, loaded->trace, out, err);
}

}  // namespace bubblescope
