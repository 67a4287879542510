#include "cli/analyze_command.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "cli/id_ranges.h"
#include "common/out_of_memory.h"
#include "common/output_file.h"
#include "common/spooled_output.h"
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
  bubblescope analyze traces/ --perfetto p0.json.gz --perfetto-pipelines 0  # one pipeline, gzip
  bubblescope analyze traces/ --html report.html   # the bubble as a picture, in a browser

Pipelines are found in the point-to-point traffic between ranks (several in a DP x PP job);
each is aligned to one clock from its matched sends and receives before it is measured; ranks
without p2p traffic belong to no pipeline, and a job without any reports its collectives
instead (docs/cross-rank.md). Iterations are the ProfilerStep#N ranges, or with
--iteration-marker the CPU annotations whose name matches REGEX (RE2 syntax, searched anywhere
in the name); without either, the periods of the op sequence every rank repeats; else the
whole trace is one iteration. docs/bubble.md defines every figure; docs/json-report.md every
JSON key; docs/html-report.md the HTML report's pictures.

--perfetto FILE writes one Chrome trace of every rank on its pipeline's aligned clock, the
original events unchanged but for their pid and time, with tracks per pipeline rank marking its
fill / drain / comm_wait / empty intervals and its ops labelled with stage, microbatch and
F/B/W; open it in ui.perfetto.dev. bubblescope reads it back as the ranks it came from
(docs/perfetto.md). It is written rank by rank, never held whole in memory; a FILE ending in
.gz is gzip-compressed. --perfetto-pipelines 0,3 and --perfetto-ranks 0-7,12 keep it to the
ranks of those pipelines (numbered as the report numbers them) or with those ids.

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
  CLI::Option* perfetto =
      analyze
          ->add_option("--perfetto", perfetto_path_,
                       "Also write the merged trace of all ranks on the aligned clock, with the "
                       "bubble's intervals and labelled ops on tracks of their own, to open in "
                       "ui.perfetto.dev (gzip-compressed when FILE ends in .gz; never over an "
                       "input or the -o report)")
          ->type_name("FILE");
  const auto id_list = CLI::Validator(
      [](std::string& value) {
        absl::StatusOr<std::vector<perfetto::IdRange>> parsed = ParseIdRanges(value);
        return parsed.ok() ? std::string() : std::string(parsed.status().message());
      },
      "");
  analyze
      ->add_option("--perfetto-pipelines", perfetto_pipelines_,
                   "Write only these pipelines' ranks into the --perfetto trace, numbered as "
                   "the report numbers them (e.g. 0,3 or 0-3)")
      ->type_name("LIST")
      ->check(id_list)
      ->needs(perfetto);
  analyze
      ->add_option("--perfetto-ranks", perfetto_ranks_,
                   "Write only these ranks into the --perfetto trace (e.g. 0-7,12); with "
                   "--perfetto-pipelines, the ranks in both")
      ->type_name("LIST")
      ->check(id_list)
      ->needs(perfetto);
  DefineHtml(analyze,
             "each pipeline's schedule timeline with its bubble marked beside the theoretical "
             "one, per-stage bars, latency, memory, links and the what-if trade-off");
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
  // The ranks the merged trace holds, checked before any report is written.
  std::vector<size_t> perfetto_ranks;
  if (!perfetto_path_.empty()) {
    if (const int chosen = ChoosePerfettoRanks(*loaded, err, &perfetto_ranks); chosen != kExitOk) {
      return chosen;
    }
  }
  SummaryReportOptions report_options;
  report_options.tool_version = tool_version_;
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
  return perfetto_path_.empty() ? kExitOk : WritePerfetto(*loaded, perfetto_ranks, err);
}

int AnalyzeCommand::ChoosePerfettoRanks(const LoadedJob& loaded, std::ostream& err,
                                        std::vector<size_t>* ranks) const {
  // The flags' syntax was checked when they were parsed.
  perfetto::OverlayChoice choice;
  if (!perfetto_pipelines_.empty()) choice.pipelines = *ParseIdRanges(perfetto_pipelines_);
  if (!perfetto_ranks_.empty()) choice.ranks = *ParseIdRanges(perfetto_ranks_);
  // Each flag checked alone first, so that an error names the flag it is about.
  const std::pair<const char*, perfetto::OverlayChoice> alone[] = {
      {"--perfetto-pipelines", {.pipelines = choice.pipelines, .ranks = {}}},
      {"--perfetto-ranks", {.pipelines = {}, .ranks = choice.ranks}},
      {"--perfetto-pipelines and --perfetto-ranks", choice}};
  for (const auto& [flag, limit] : alone) {
    absl::StatusOr<std::vector<size_t>> chosen =
        perfetto::ChooseRanks(loaded.trace, loaded.job, limit);
    if (!chosen.ok()) {
      err << "bubblescope: " << flag << ": " << MessageLine(chosen.status()) << "\n";
      return kExitBadInput;
    }
    *ranks = *std::move(chosen);
  }
  return kExitOk;
}

int AnalyzeCommand::WritePerfetto(const LoadedJob& loaded, const std::vector<size_t>& ranks,
                                  std::ostream& err) const {
  OutputFileOptions options;
  options.protected_files = InputFiles(loaded.trace);
  if (!output_path().empty()) options.protected_files.push_back(output_path());
  if (html_requested()) options.protected_files.push_back(html_path());
  // Streamed rank by rank: the trace is never held whole, however many ranks the job has.
  absl::StatusOr<std::unique_ptr<SpooledOutput>> output =
      SpooledOutput::Open(perfetto_path_, options, absl::EndsWith(perfetto_path_, ".gz"));
  if (!output.ok()) {
    err << "bubblescope: --perfetto: " << MessageLine(output.status()) << "\n";
    return kExitFailure;
  }
  perfetto::OverlayCounts counts;
  absl::StatusOr<perfetto::MergedFrame> frame =
      perfetto::WriteOverlay(loaded.trace, loaded.job, ranks, &(*output)->body(), &counts);
  if (!frame.ok()) {
    err << "bubblescope: --perfetto: " << MessageLine(frame.status()) << "\n";
    // Memory running out re-reading a trace is the input's size, not a failed write.
    return IsOutOfMemory(frame.status()) ? kExitBadInput : kExitFailure;
  }
  if (absl::Status written = (*output)->Finish(frame->head, frame->tail); !written.ok()) {
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
