#include "cli/analyze_command.h"

#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "common/out_of_memory.h"
#include "common/output_file.h"
#include "report/perfetto_overlay.h"
#include "report/html_report.h"
#include "report/pipeline_report.h"
#include "report/summary_report.h"

namespace bubblescope {
namespace {

constexpr char kAnalyzeFooter[] = R"(
Each PATH is a trace file (*.json or *.json.gz, as written by torch.profiler / Kineto) or a
directory whose *.json and *.json.gz files are read (one file per rank). Rank ids come from each
file's distributedInfo, else from the file name (rank3, worker3, ...), else 0 for a single
file; --rank PATH=N overrides all of these. In a directory, JSON files with no traceEvents at
all (a truth.json, a config) are passed over with a note. Traces of several `bubblescope record`
runs (a directory recorded into twice) are never paired by accident: choose one with --run ID,
or combine them with --mix-runs.

Examples:
  bubblescope analyze traces/
  bubblescope analyze rank0.json.gz rank1.json.gz --format json -o summary.json
  bubblescope analyze run/ --rank run/host-a.json.gz=0 --rank run/host-b.json.gz=1
  bubblescope analyze traces/ --strict     # refuse traces with damaged events or cut short
  bubblescope analyze traces/ --run 20261125-1328   # one record run of several in traces/
  bubblescope analyze traces/ --iteration-marker '^train_step$'
  bubblescope analyze traces/ --layers-per-stage 8,8,8,8   # where to move layers
  bubblescope analyze traces/ --perfetto job.perfetto.json  # open it in ui.perfetto.dev
  bubblescope analyze traces/ --html report.html   # the bubble as a picture, in a browser

Pipelines are found in the point-to-point traffic between ranks (several in a DP x PP job);
each is aligned to one clock from its matched sends and receives before it is measured; ranks
without p2p traffic belong to no pipeline, and a job without any reports its collectives
instead (docs/cross-rank.md). Iterations are the ProfilerStep#N ranges, or with
--iteration-marker the CPU annotations whose name matches REGEX (RE2 syntax, searched anywhere
in the name); without either, the periods of the op sequence every rank repeats; else the
whole trace is one iteration. docs/bubble.md defines every figure; docs/json-report.md every
JSON key; docs/html-report.md the HTML report's pictures. A large job (more than 256 pipeline
ranks, or 20,000 ops) folds its data-parallel replicas into per-stage spreads and shows in full
only its worst pipelines and those --show-pipelines names (docs/analyze.md, "Large jobs").

--perfetto FILE writes one Chrome trace of every rank on its pipeline's aligned clock, the
original events unchanged but for their pid and time, with tracks per pipeline rank marking its
fill / drain / comm_wait / empty intervals and its ops labelled with stage, microbatch and
F/B/W; open it in ui.perfetto.dev. bubblescope reads it back as the ranks it came from
(docs/perfetto.md).

Exit status: 0 success; 1 the report could not be written; 2 usage error, unreadable input, or
(--strict) import warnings or errors, or a job missing ranks it declares or its pipelines reach.
)";

}  // namespace

AnalyzeCommand::AnalyzeCommand(std::string tool_version)
    : tool_version_(std::move(tool_version)) {}

CLI::App* AnalyzeCommand::Define(CLI::App& app) {
  CLI::App* analyze = app.add_subcommand(
      "analyze", "Summarise every rank (device span, compute / communication / memcpy time, idle "
                 "time, op counts, profiler steps, peak memory), measure the pipeline bubble, "
                 "infer the schedule and list findings");
  analyze->footer(kAnalyzeFooter);
  DefineInputs(analyze);
  DefineOutput(analyze);
  DefineLayers(analyze);
  analyze
      ->add_option("--slow-link-threshold", slow_link_threshold_,
                   "Flag a link as slow when its median bandwidth is below this fraction of the "
                   "job's median link bandwidth for messages of similar size")
      ->check(FiniteNumberBetween(0.0, 1.0))
      ->capture_default_str();
  analyze
      ->add_option("--perfetto", perfetto_path_,
                   "Also write the merged trace of all ranks on the aligned clock, with the "
                   "bubble's intervals and labelled ops on tracks of their own, to open in "
                   "ui.perfetto.dev (never over an input or the -o report)")
      ->type_name("FILE");
  DefineHtml(analyze,
             "each pipeline's schedule timeline with its bubble marked beside the theoretical "
             "one, per-stage bars, latency, memory, links and the what-if trade-off");
  analyze
      ->add_option("--show-pipelines", show_pipelines_,
                   "In a large job (more than 256 pipeline ranks or 20,000 ops), also show these "
                   "pipelines in full in the text and HTML reports, besides the worst ones "
                   "(docs/analyze.md, \"Large jobs\")")
      ->type_name("N,N,...")
      ->delimiter(',')
      ->check(WholeNumberAtLeast(0));
  return analyze;
}

job::Options AnalyzeCommand::JobOptions() const {
  job::Options options;
  options.slow.threshold = slow_link_threshold_;
  options.tradeoff = html_requested();
  return options;
}

int AnalyzeCommand::Run(std::ostream& out, std::ostream& err) {
  if (const int checked = CheckOutputFiles({{"--perfetto", perfetto_path_}}, err);
      checked != kExitOk) {
    return checked;
  }
  int status = kExitOk;
  std::optional<LoadedJob> loaded = LoadJob(JobOptions(), err, &status);
  if (!loaded.has_value()) return status;
  for (const int32_t picked : show_pipelines_) {
    if (static_cast<size_t>(picked) >= loaded->job.pipelines.size()) {
      err << "bubblescope: --show-pipelines: no pipeline " << picked << " (the job has "
          << loaded->job.pipelines.size() << ")\n";
      return kExitBadInput;
    }
  }
  SummaryReportOptions report_options;
  report_options.tool_version = tool_version_;
  report_options.show_pipelines = show_pipelines_;
  std::string report;
  if (format_ == "json") {
    absl::StatusOr<std::string> json = AnalyzeJson(loaded->job, report_options);
    if (!json.ok()) {
      err << "bubblescope: internal error: " << MessageLine(json.status()) << "\n";
      return kExitFailure;
    }
    report = *std::move(json);
  } else {
    report = AnalyzeText(loaded->job, report_options);
  }
  std::vector<std::string> inputs = InputFiles(loaded->trace);
  if (html_requested()) {
    if (int written = WriteHtml(AnalyzeHtml(loaded->job, report_options), inputs, err);
        written != kExitOk) {
      return written;
    }
  }
  if (const int written = WriteReport(report, std::move(inputs), out, err); written != kExitOk) {
    return written;
  }
  return perfetto_path_.empty() ? kExitOk : WritePerfetto(*loaded, err);
}

int AnalyzeCommand::WritePerfetto(const LoadedJob& loaded, std::ostream& err) const {
  perfetto::OverlayCounts counts;
  absl::StatusOr<std::string> overlay = perfetto::RenderOverlay(loaded.trace, loaded.job, &counts);
  if (!overlay.ok()) {
    err << "bubblescope: --perfetto: " << MessageLine(overlay.status()) << "\n";
    // Memory running out re-reading a trace is the input's size, not a failed write.
    return IsOutOfMemory(overlay.status()) ? kExitBadInput : kExitFailure;
  }
  OutputFileOptions options;
  options.protected_files = InputFiles(loaded.trace);
  if (!output_path().empty()) options.protected_files.push_back(output_path());
  if (html_requested()) options.protected_files.push_back(html_path());
  if (absl::Status written = WriteOutputFile(perfetto_path_, *overlay, options); !written.ok()) {
    err << "bubblescope: --perfetto: " << MessageLine(written) << "\n";
    return kExitFailure;
  }
  if (counts.left_out > 0) {
    err << "note: --perfetto: " << counts.left_out
        << " events the Chrome trace format cannot hold were left out (bubblescope skips them "
           "too)\n";
  }
  return kExitOk;
}

}  // namespace bubblescope
