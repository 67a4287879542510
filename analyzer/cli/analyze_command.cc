#include "cli/analyze_command.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "cli/id_ranges.h"
#include "cli/mpi_load.h"
#include "cli/perfetto_output.h"
#include "common/out_of_memory.h"
#include "common/output_file.h"
#include "compare/report_reader.h"
#include "perfetto/perfetto_overlay.h"
#include "report/html_report.h"
#include "report/pipeline_report.h"
#include "report/summary_report.h"

namespace bubblescope {
namespace {

constexpr char kAnalyzeFooter[] = R"(
Each PATH is a trace file or a directory whose trace files are read (one file per rank, or
one file of many ranks). A trace file is any of:
  *.json, *.json.gz   PyTorch profiler (Kineto) traces, and those `bubblescope record` writes
  *.sqlite            Nsight Systems exports (nsys export --type sqlite; docs/nsight-systems.md)
  *.bsdigest          bubblescope digests (bubblescope digest; docs/digest.md)
Rank ids come from each file's distributedInfo, else from the file name (rank3, worker3, ...),
else 0 for a single file; --rank PATH=N overrides all of these. In a directory, JSON files
with no traceEvents at all (a truth.json, a config) are passed over with a note; a directory
of trace sets in subfolders names them. Traces of several `bubblescope record` runs (a
directory recorded into twice) are never paired by accident: choose one with --run ID, or
combine them with --mix-runs.

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
JSON key; docs/html-report.md the HTML report's pictures. A large job (more than 256 pipeline
ranks, or 20,000 ops) folds its data-parallel replicas into per-stage spreads and shows in full
only its worst pipelines and those --show-pipelines names (docs/analyze.md, "Large jobs").

--perfetto FILE writes one Chrome trace of every rank on its pipeline's aligned clock, the
original events unchanged but for their pid and time, with tracks per pipeline rank marking its
fill / drain / comm_wait / empty intervals and its ops labelled with stage, microbatch and
F/B/W; open it in ui.perfetto.dev. bubblescope reads it back as the ranks it came from
(docs/perfetto.md).

--mpi, under mpirun or srun, spreads the reading over the job's processes: each reads a share
of the files (balanced by size) and reduces its ranks to digests, process 0 gathers them,
analyses the job and writes the report exactly as one process would; the other processes print
nothing (docs/scale.md).
  mpirun -np 8 bubblescope analyze --mpi traces/ --format json -o report.json

Exit status: 0 success; 1 the report could not be written; 2 usage error, unreadable input, or
(--strict) import warnings or errors, a job missing ranks it declares or its pipelines reach,
or files that cannot be one run's.
)";

// The list syntax of the flags that choose pipelines or ranks (cli/id_ranges.h).
CLI::Validator IdList() {
  return CLI::Validator(
      [](std::string& value) {
        absl::StatusOr<std::vector<perfetto::IdRange>> parsed = ParseIdRanges(value);
        return parsed.ok() ? std::string() : std::string(parsed.status().message());
      },
      "");
}

}  // namespace

AnalyzeCommand::AnalyzeCommand(std::string tool_version) : tool_version_(std::move(tool_version)) {}

CLI::App* AnalyzeCommand::Define(CLI::App& app) {
  CLI::App* analyze = app.add_subcommand(
      "analyze",
      "Summarise every rank (device span, compute / communication / memcpy time, idle "
      "time, op counts, profiler steps, peak memory), measure the pipeline bubble, "
      "infer the schedule and list findings");
  analyze->footer(kAnalyzeFooter);
  DefineInputs(analyze);
  DefineOutput(analyze);
  DefineLayers(analyze);
  DefinePerfettoLimits(analyze);
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
                   "ui.perfetto.dev (gzip-compressed when FILE ends in .gz; rank by rank, never "
                   "held whole in memory; never over an input or the -o report)")
      ->type_name("FILE");
  analyze->add_flag("--mpi", mpi_,
                    "Run as one process of an MPI job (mpirun, srun --mpi=pmix): every process "
                    "reads a share of the files, process 0 writes the report (docs/scale.md)");
  DefineHtml(analyze,
             "each pipeline's schedule timeline with its bubble marked beside the theoretical "
             "one, per-stage bars, latency, memory, links and the what-if trade-off");
  analyze
      ->add_option("--show-pipelines", show_pipelines_,
                   "In a large job (more than 256 pipeline ranks or 20,000 ops), also show these "
                   "pipelines in full in the text and HTML reports, besides the worst ones "
                   "(e.g. 5,17 or 0-3; docs/analyze.md, \"Large jobs\")")
      ->type_name("LIST")
      ->check(IdList());
  return analyze;
}

job::Options AnalyzeCommand::JobOptions() const {
  job::Options options;
  options.slow.threshold = slow_link_threshold_;
  options.tradeoff = html_requested();
  return options;
}

int AnalyzeCommand::Run(std::ostream& out, std::ostream& err) {
  if (!mpi_) return RunReporting(nullptr, out, err);
  absl::StatusOr<std::unique_ptr<distributed::MpiWorld>> world = distributed::MpiWorld::Join();
  if (!world.ok()) {
    err << "bubblescope: " << MessageLine(world.status()) << "\n";
    return kExitBadInput;
  }
  if ((*world)->process() == 0) return RunReporting(world->get(), out, err);
  // The other processes print nothing: process 0 says whatever there is to say.
  std::ostringstream unprinted;
  return RunMpiReader(**world, Source(unprinted).value_or(JobSource{}));
}

int AnalyzeCommand::RunReporting(const distributed::MpiWorld* world, std::ostream& out,
                                 std::ostream& err) {
  int checked = CheckOutputFiles({{"--perfetto", perfetto_path_}}, err);
  std::optional<JobSource> source;
  if (world != nullptr) {
    // The readers start only on process 0's word, so a bad output flag stops them all.
    if (checked == kExitOk && !(source = Source(err)).has_value()) checked = kExitBadInput;
    world->Broadcast(checked);
  }
  if (checked != kExitOk) return checked;
  // Under --mpi, declared after `source` and destroyed before the world: it releases the others.
  std::optional<MpiProcessZero> process_zero;
  if (world != nullptr) {
    process_zero.emplace(*world, iterations::Options{.iteration_marker = source->iteration_marker,
                                                     .decided_source = std::nullopt});
  }
  int status = kExitOk;
  std::optional<LoadedJob> loaded = LoadJob(
      JobOptions(), err, &status, process_zero.has_value() ? process_zero->Loader() : TraceLoader(),
      process_zero.has_value() ? process_zero->Analyzer() : JobAnalyzer());
  if (!loaded.has_value()) return status;
  SummaryReportOptions report_options;
  report_options.tool_version = tool_version_;
  if (const int picked = PickedPipelines(loaded->job, err, &report_options.show_pipelines);
      picked != kExitOk) {
    return picked;
  }
  std::string report;
  if (format_ == "json") {
    absl::StatusOr<std::string> json = AnalyzeJson(loaded->job, report_options);
    if (!json.ok()) {
      err << "bubblescope: internal error: " << MessageLine(json.status()) << "\n";
      return kExitFailure;
    }
    // Read back through the one schema check diff, gate and whatif read it with (the same
    // members, the same ranges): analyze never writes a report its own readers refuse.
    if (absl::StatusOr<compare::RunFigures> readable =
            compare::ReadAnalyzeReport("the JSON report", *json);
        !readable.ok()) {
      err << "bubblescope: " << MessageLine(readable.status())
          << " (the trace holds times no report can carry; nothing written)\n";
      return kExitBadInput;
    }
    report = *std::move(json);
  } else {
    report = AnalyzeText(loaded->job, report_options);
  }
  // The ranks the merged trace holds, checked before anything is written.
  std::vector<size_t> perfetto_ranks;
  if (const int chosen = ChoosePerfettoRanks(*loaded, err, &perfetto_ranks); chosen != kExitOk) {
    return chosen;
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

int AnalyzeCommand::PickedPipelines(const job::Result& result, std::ostream& err,
                                    std::vector<int32_t>* picked) const {
  if (show_pipelines_.empty()) return kExitOk;
  const absl::StatusOr<std::vector<perfetto::IdRange>> ranges = ParseIdRanges(show_pipelines_);
  if (!ranges.ok()) {  // checked while parsing the flags already
    err << "bubblescope: --show-pipelines: " << MessageLine(ranges.status()) << "\n";
    return kExitBadInput;
  }
  const auto count = static_cast<int64_t>(result.pipelines.size());
  for (const perfetto::IdRange& range : *ranges) {
    if (range.last >= count) {
      err << "bubblescope: --show-pipelines: no pipeline " << std::max(range.first, count)
          << " (the job has " << count << ")\n";
      return kExitBadInput;
    }
    for (int64_t pipeline = range.first; pipeline <= range.last; ++pipeline) {
      picked->push_back(static_cast<int32_t>(pipeline));
    }
  }
  return kExitOk;
}

void AnalyzeCommand::DefinePerfettoLimits(CLI::App* analyze) {
  const CLI::Validator id_list = IdList();
  analyze
      ->add_option("--perfetto-pipelines", perfetto_pipelines_,
                   "With --perfetto, write only these pipelines' ranks into its trace, numbered "
                   "as the report numbers them (e.g. 0,3 or 0-3)")
      ->type_name("LIST")
      ->check(id_list);
  analyze
      ->add_option("--perfetto-ranks", perfetto_ranks_,
                   "With --perfetto, write only these ranks into its trace (e.g. 0-7,12); with "
                   "--perfetto-pipelines too, the ranks in both")
      ->type_name("LIST")
      ->check(id_list);
  // As CLI11's needs() would, had --perfetto been defined before these.
  analyze->parse_complete_callback([this] {
    if (!perfetto_path_.empty()) return;
    for (const auto& [flag, list] :
         {std::pair<const char*, const std::string&>("--perfetto-pipelines", perfetto_pipelines_),
          {"--perfetto-ranks", perfetto_ranks_}}) {
      if (!list.empty()) throw CLI::RequiresError(flag, "--perfetto");
    }
  });
}

int AnalyzeCommand::ChoosePerfettoRanks(const LoadedJob& loaded, std::ostream& err,
                                        std::vector<size_t>* ranks) const {
  return ChooseMergedRanks(
      PerfettoRequest{
          .path = perfetto_path_, .pipelines = perfetto_pipelines_, .ranks = perfetto_ranks_},
      loaded, err, ranks);
}

int AnalyzeCommand::WritePerfetto(const LoadedJob& loaded, const std::vector<size_t>& ranks,
                                  std::ostream& err) const {
  OutputFileOptions options;
  options.protected_files = InputFiles(loaded.trace);
  if (!output_path().empty()) options.protected_files.push_back(output_path());
  if (html_requested()) options.protected_files.push_back(html_path());
  const int written = WriteMergedTrace(perfetto_path_, loaded, ranks, options, err);
  if (written == kExitOk) SayWritten(perfetto_path_, "the Perfetto trace", quiet(), err);
  return written;
}

}  // namespace bubblescope
