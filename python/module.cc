// bubblescope._core: the Python module's native half (docs/python.md). It holds no analysis of its
// own: a job is loaded and analysed by the CLI's own LoadAndAnalyzeJob (the loader, the import
// checks, job::Analyze), its reports are the CLI's report writers, and the other verbs run the
// command line itself (cli/command_line.h) on streams of their own. What the CLI would print on
// stderr comes back as text, for the Python half to raise as its exceptions or keep as warnings.
#include <cstdint>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "analysis/bubble.h"
#include "cli/command.h"
#include "cli/command_line.h"
#include "cli/job_input.h"
#include "cli/perfetto_output.h"
#include "common/output_file.h"
#include "compare/report_reader.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "nanobind/nanobind.h"
#include "nanobind/stl/optional.h"
#include "nanobind/stl/string.h"
#include "nanobind/stl/tuple.h"
#include "nanobind/stl/vector.h"
#include "pipeline/ideal_bubble.h"
#include "pipeline/op_timeline.h"
#include "report/html_report.h"
#include "report/pipeline_report.h"
#include "report/summary_report.h"

namespace nb = nanobind;

namespace bubblescope::python {
namespace {

// The version every report names: the CLI's (both are built from one project version).
constexpr char kVersion[] = BUBBLESCOPE_VERSION;

// Raised to Python as bubblescope._core.Failure(kind, message): the Python half turns the kind
// ("usage", "trace", "output", "memory") into its own exception class.
struct Failure {
  std::string kind;
  std::string message;
};

// The last line that starts with "bubblescope: " in what a verb printed on stderr: the CLI's one
// line of why it stopped ("--strict: ..." included); else the last line at all.
std::string ErrorLine(const std::string& err) {
  std::istringstream lines(err);
  std::string line;
  std::string last;
  std::string last_error;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.rfind("bubblescope: ", 0) == 0) last_error = line;
  }
  return last_error.empty() ? last : last_error;
}

// One loaded and analysed job: the trace (the Perfetto overlay reads its files again) and the job
// driver's result, with the options every report of it is written with.
class Job {
 public:
  Job(LoadedJob loaded, std::string warnings)
      : loaded_(std::move(loaded)), warnings_(std::move(warnings)) {
    options_.tool_version = kVersion;
  }
  // A trace is never copied: Python holds the one Job analyze made.
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  Job(Job&&) = default;
  Job& operator=(Job&&) = default;

  // analyze --format json, read back through the schema check the CLI applies before writing.
  std::string Json() const {
    absl::StatusOr<std::string> json = AnalyzeJson(loaded_.job, options_);
    if (!json.ok()) throw Failure{"output", "internal error: " + MessageLine(json.status())};
    if (absl::StatusOr<compare::RunFigures> readable =
            compare::ReadAnalyzeReport("the JSON report", *json);
        !readable.ok()) {
      throw Failure{
          "trace", MessageLine(readable.status()) + " (the trace holds times no report can carry)"};
    }
    return *std::move(json);
  }
  std::string Text() const { return AnalyzeText(loaded_.job, options_); }
  std::string Html() const { return AnalyzeHtml(loaded_.job, options_); }

  // Writes `contents` to `path` as the CLI writes -o and --html: never over an input.
  void WriteFile(const std::string& path, const std::string& contents) const {
    OutputFileOptions options;
    options.protected_files = TraceInputFiles(loaded_.trace);
    if (absl::Status written = WriteOutputFile(path, contents, options); !written.ok()) {
      throw Failure{"output", MessageLine(written)};
    }
  }

  // analyze --perfetto PATH: every rank, as the CLI writes it without limits.
  std::string WritePerfetto(const std::string& path) const {
    std::ostringstream err;
    std::vector<size_t> ranks;
    if (ChooseMergedRanks(PerfettoRequest{.path = path, .pipelines = "", .ranks = ""}, loaded_, err,
                          &ranks) != kExitOk) {
      throw Failure{"usage", ErrorLine(err.str())};
    }
    OutputFileOptions options;
    options.protected_files = TraceInputFiles(loaded_.trace);
    if (WriteMergedTrace(path, loaded_, ranks, options, err) != kExitOk) {
      throw Failure{"output", ErrorLine(err.str())};
    }
    return err.str();  // the note of events left out, if any
  }

  // Pipeline `index`'s labelled ops on its reference clock (op_timeline.h): (rank, stage, chunk,
  // microbatch, type, start_ns, end_ns, iteration) each.
  using OpRow =
      std::tuple<int32_t, int32_t, int32_t, int32_t, std::string, int64_t, int64_t, int64_t>;
  std::vector<OpRow> Ops(size_t index) const {
    std::vector<OpRow> rows;
    for (const op_timeline::TimelineOp& op : Pipeline(index).op_timeline.ops) {
      rows.emplace_back(op.rank, op.stage, op.chunk, op.microbatch,
                        TypeLetter(op.type, op.input_grad_only), op.start, op.end, op.iteration);
    }
    return rows;
  }

  // Pipeline `index`'s theoretical schedule, one iteration of its own simulated run
  // (ideal_bubble.h): (stage, chunk, microbatch, type, start_ns, end_ns) each, times from the
  // iteration's first compute; empty where it could not be simulated.
  using IdealRow = std::tuple<int32_t, int32_t, int32_t, std::string, int64_t, int64_t>;
  std::vector<IdealRow> IdealOps(size_t index) const {
    std::vector<IdealRow> rows;
    const std::optional<pipeline::IdealBubble>& ideal = Pipeline(index).ideal;
    if (!ideal.has_value()) return rows;
    for (const pipeline::IdealOp& op : ideal->schedule) {
      rows.emplace_back(op.stage, op.chunk, op.microbatch, TypeLetter(op.type, false), op.start,
                        op.end);
    }
    return rows;
  }

  // Pipeline `index`'s idle spans (bubble.h): (rank, iteration, complete, kind, start_ns,
  // end_ns) each, every iteration's, incomplete ones flagged so that sums can keep to the
  // complete iterations the report's figures cover.
  using IdleRow = std::tuple<int32_t, int64_t, bool, std::string, int64_t, int64_t>;
  std::vector<IdleRow> Idle(size_t index) const {
    std::vector<IdleRow> rows;
    for (const bubble::IterationFigures& iteration : Pipeline(index).bubble.iterations) {
      for (const bubble::RankIterationFigures& rank : iteration.ranks) {
        for (const bubble::IdleSpan& span : rank.idle_spans) {
          rows.emplace_back(rank.rank, iteration.number, iteration.complete,
                            std::string(bubble::IdleKindName(span.kind)), span.start, span.end);
        }
      }
    }
    return rows;
  }

  const std::string& warnings() const { return warnings_; }

 private:
  const job::Pipeline& Pipeline(size_t index) const {
    if (index >= loaded_.job.pipelines.size()) {
      throw Failure{"usage", "no pipeline " + std::to_string(index) + " (the job has " +
                                 std::to_string(loaded_.job.pipelines.size()) + ")"};
    }
    return loaded_.job.pipelines[index];
  }

  // "F", "B", "I" (an input-gradient-only backward) or "W", as the reports letter them.
  static std::string TypeLetter(pipeline::OpType type, bool input_grad_only) {
    switch (type) {
      case pipeline::OpType::kForward:
        return "F";
      case pipeline::OpType::kBackward:
        return input_grad_only ? "I" : "B";
      case pipeline::OpType::kWeightGrad:
        return "W";
    }
    return "?";
  }

  LoadedJob loaded_;
  std::string warnings_;
  SummaryReportOptions options_;
};

// analyze's inputs and job options, as the CLI's flags set them, then LoadAndAnalyzeJob. Runs
// without the GIL; `progress` (may be None) is called with (stage, done, total) under it.
Job Analyze(const std::vector<std::string>& paths, int jobs, int32_t max_file_mb,
            const std::vector<std::string>& rank_args,
            const std::optional<std::string>& iteration_marker, bool strict,
            const std::vector<int32_t>& layers_per_stage, nb::object progress) {
  std::ostringstream err;
  JobSource source;
  source.paths = paths;
  source.load.jobs = jobs;
  source.load.max_file_bytes = int64_t{max_file_mb} << 20;
  source.quiet = true;
  // The loader's memory errors (a file over the reading budget, which is the memory this
  // process can afford, or memory running out while it read one: both ResourceExhausted) are
  // told apart from damage here, where the status still says so, for OutOfMemoryError.
  bool reading_out_of_memory = false;
  source.load_trace = [&reading_out_of_memory](const std::vector<std::string>& files,
                                               const LoadOptions& load) {
    absl::StatusOr<Trace> trace = LoadTrace(files, load);
    if (!trace.ok() && absl::IsResourceExhausted(trace.status())) reading_out_of_memory = true;
    return trace;
  };
  // The job driver refuses its options (an iteration marker that is no regular expression,
  // layer counts that do not fit the pipeline) as InvalidArgument, once the trace has loaded:
  // the caller's arguments, so a UsageError.
  bool options_refused = false;
  source.analyze_job = [&options_refused](const Trace& trace, const job::Options& options) {
    absl::StatusOr<job::Result> result = job::Analyze(trace, options);
    if (!result.ok() && absl::IsInvalidArgument(result.status())) options_refused = true;
    return result;
  };
  TraceSelection selection;
  selection.rank_args = rank_args;
  selection.strict = strict;
  if (!ApplyTraceSelection(selection, &source, err)) throw Failure{"usage", ErrorLine(err.str())};
  source.iteration_marker = iteration_marker;

  job::Options options;
  options.layers_per_stage = layers_per_stage;
  // The HTML report's trade-off picture, as analyze --html computes it; no other report reads it.
  options.tradeoff = true;
  if (!progress.is_none()) {
    options.progress = [&progress](const job::Progress& done) {
      nb::gil_scoped_acquire gil;
      try {
        progress(std::string(done.stage), done.done, done.total);
      } catch (nb::python_error& error) {
        // A progress display that fails must not stop the analysis: Python reports it as an
        // unraisable exception, as it does for a failing __del__.
        error.discard_as_unraisable("bubblescope progress callback");
      }
    };
  }
  int status = kExitOk;
  std::optional<LoadedJob> loaded;
  bool out_of_memory = false;
  {
    nb::gil_scoped_release released;
    try {
      loaded = LoadAndAnalyzeJob(source, std::move(options), err, &status);
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    }
  }
  if (out_of_memory) {
    throw Failure{"memory", "bubblescope: out of memory; " + std::string(JobOutOfMemoryAdvice())};
  }
  if (!loaded.has_value()) {
    throw Failure{reading_out_of_memory ? "memory"
                  : options_refused     ? "usage"
                                        : "trace",
                  ErrorLine(err.str())};
  }
  return Job(*std::move(loaded), err.str());
}

// The command line on `args`, without the GIL: (exit status, stdout, stderr, out of memory).
std::tuple<int, std::string, std::string, bool> RunVerb(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  bool out_of_memory = false;
  int status = kExitOk;
  {
    nb::gil_scoped_release released;
    status = RunCommandLine(args, kVersion, out, err, &out_of_memory);
  }
  return {status, out.str(), err.str(), out_of_memory};
}

}  // namespace
}  // namespace bubblescope::python

NB_MODULE(_core, module) {
  namespace py = bubblescope::python;
  module.attr("version") = py::kVersion;
  static nb::object failure =
      nb::steal(PyErr_NewException("bubblescope._core.Failure", PyExc_RuntimeError, nullptr));
  module.attr("Failure") = failure;
  nb::register_exception_translator([](const std::exception_ptr& thrown, void*) {
    try {
      std::rethrow_exception(thrown);
    } catch (const py::Failure& error) {
      nb::object value = failure(error.kind, error.message);
      PyErr_SetObject(failure.ptr(), value.ptr());
    }
  });

  nb::class_<py::Job>(module, "NativeJob")
      .def("json", &py::Job::Json)
      .def("text", &py::Job::Text)
      .def("html", &py::Job::Html)
      .def("write_file", &py::Job::WriteFile, nb::arg("path"), nb::arg("contents"))
      .def("write_perfetto", &py::Job::WritePerfetto, nb::arg("path"),
           nb::call_guard<nb::gil_scoped_release>())
      .def("ops", &py::Job::Ops, nb::arg("pipeline"))
      .def("idle", &py::Job::Idle, nb::arg("pipeline"))
      .def("ideal_ops", &py::Job::IdealOps, nb::arg("pipeline"))
      .def_prop_ro("warnings", &py::Job::warnings);

  module.def("analyze", &py::Analyze, nb::arg("paths"), nb::arg("jobs"), nb::arg("max_file_mb"),
             nb::arg("rank_args"), nb::arg("iteration_marker").none(), nb::arg("strict"),
             nb::arg("layers_per_stage"), nb::arg("progress").none());
  module.def("run", &py::RunVerb, nb::arg("args"));
}
