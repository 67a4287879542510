#include "cli/whatif_command.h"

#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "cli/compare_input.h"
#include "report/html_report.h"
#include "report/whatif_model_json.h"
#include "report/whatif_report.h"
#include "whatif/candidates.h"

namespace bubblescope {
namespace {

constexpr char kWhatIfFooter[] = R"(
PATH is read as by `bubblescope analyze` (trace files or directories, one file per rank), or
is one JSON report of `bubblescope analyze --format json` (its what-if models: no trace read).
Without --microbatches, --schedule, --virtual-stages, --same-global-batch or --try-layers, each
pipeline is predicted at 2x and 4x its microbatches, in the other 1F1B flavour (interleaved v=2
from 1f1b when m is a multiple of p, 1f1b from interleaved), as ZB-H1 and, with layer counts
(--layers-per-stage or annotations), after the best single layer move; with any of them, at
that one configuration, the rest as measured.

Examples:
  bubblescope whatif traces/
  bubblescope whatif traces/ --microbatches 32
  bubblescope whatif traces/ --microbatches 32 --same-global-batch
  bubblescope whatif traces/ --schedule interleaved --virtual-stages 2 --format json
  bubblescope whatif traces/ --layers-per-stage 8,8,8,8 --try-layers 9,9,7,7
  bubblescope analyze traces/ --format json -o report.json && bubblescope whatif report.json
  bubblescope whatif report.json --html whatif.html   # the trade-off against m as a chart

The model (docs/whatif.md): the measured per-stage forward, backward and weight-gradient times,
each link's median transfer time and each rank's memory floor and peak, run through the
schedule simulator. "as measured, modelled" is the measured configuration through the same
model: its distance from the measured iteration is what the model leaves out (host time,
optimizer, jitter).

Exit status: 0 success (a pipeline that cannot be modelled says why in the report); 1 the
report could not be written; 2 usage error, unreadable input, or a --strict rejection.
)";

}  // namespace

WhatIfCommand::WhatIfCommand(std::string tool_version) : tool_version_(std::move(tool_version)) {}

CLI::App* WhatIfCommand::Define(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "whatif",
      "Predict each pipeline's iteration time, bubble and peak memory per stage under "
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
  DefineLayers(command);
  command
      ->add_option("--try-layers", try_layers_,
                   "Layers per stage to predict (e.g. 7,9,8,8; same total as measured): needs "
                   "the measured split, from --layers-per-stage or bubblescope:layers=N "
                   "annotations")
      ->type_name("N,N,...")
      ->delimiter(',')
      ->check(WholeNumberAtLeast(1));
  DefineHtml(command,
             "per pipeline the predictions' table and the bubble and memory against m chart");
  return command;
}

int WhatIfCommand::Run(std::ostream& out, std::ostream& err) {
  if (const int checked = CheckOutputFiles({}, err); checked != kExitOk) return checked;
  std::vector<ReportedPipeline> models;
  std::vector<std::string> inputs;
  const absl::StatusOr<bool> is_report =
      paths().size() == 1 ? IsReportFile(paths().front()) : absl::StatusOr<bool>(false);
  if (is_report.ok() && *is_report) {
    // A JSON report of `bubblescope analyze` holds each pipeline's model: no trace is read.
    absl::StatusOr<compare::RunFigures> read = ReadReportFile(paths().front());
    if (!read.ok()) {
      err << "bubblescope: " << MessageLine(read.status()) << "\n";
      return kExitBadInput;
    }
    models = ReportedPipelinesOf(*read);
    inputs = paths();
  } else {
    int status = kExitOk;
    std::optional<LoadedJob> loaded = LoadJob(job::Options{}, err, &status);
    if (!loaded.has_value()) return status;
    for (size_t i = 0; i < loaded->job.pipelines.size(); ++i) {
      models.push_back(ReportedPipelineOf(static_cast<int32_t>(i), loaded->job.pipelines[i]));
    }
    inputs = InputFiles(loaded->trace);
  }
  const whatif::CandidateChoice choice{.schedule = schedule_,
                                       .microbatches = microbatches_,
                                       .virtual_stages = virtual_stages_,
                                       .same_global_batch = same_global_batch_,
                                       .layers_per_stage = try_layers_};
  std::vector<PipelineWhatIf> pipelines;
  for (const ReportedPipeline& pipeline : models) {
    PipelineWhatIf entry{pipeline.pipeline, pipeline.ranks, absl::UnknownError("not predicted"),
                         std::nullopt};
    if (!pipeline.model.ok()) {
      entry.result = pipeline.model.status();
    } else {
      absl::StatusOr<std::vector<whatif::Candidate>> candidates =
          whatif::CandidatesToPredict(*pipeline.model, choice, pipeline.rebalance_layers_after);
      if (!candidates.ok()) {
        err << "bubblescope: " << MessageLine(candidates.status()) << "\n";
        return kExitBadInput;
      }
      entry.result = whatif::Analyze(*pipeline.model, *candidates);
      if (html_requested()) {
        entry.tradeoff =
            whatif::Analyze(*pipeline.model, whatif::TradeoffCandidates(*pipeline.model));
      }
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
  if (html_requested()) {
    SummaryReportOptions page_options;
    page_options.tool_version = tool_version_;
    if (int written = WriteHtml(WhatIfHtml(pipelines, models, page_options), inputs, err);
        written != kExitOk) {
      return written;
    }
  }
  return WriteReport(report, std::move(inputs), out, err);
}

}  // namespace bubblescope
