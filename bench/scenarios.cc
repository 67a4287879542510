#include "scenarios.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bare_pass.h"
#include "checked_figures.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "report/pipeline_report.h"
#include "set_truth.h"

namespace bubblescope::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The line between a scenario's "key value" lines and its serialised figures.
constexpr char kFiguresLine[] = "figures\n";
constexpr size_t kFiguresLineSize = sizeof(kFiguresLine) - 1;

double SecondsBetween(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

// User + system CPU seconds of this process so far, all its threads together.
double ProcessCpuSeconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// FNV-1a: a digest that is the same in every process (absl::Hash is seeded per process), so
// the reports of two scenarios can be compared without sending them through the pipe.
uint64_t Digest(std::string_view text, uint64_t digest = 0xcbf29ce484222325ULL) {
  for (char c : text) {
    digest = (digest ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  }
  return digest;
}

// What the loader kept of the trace: the events the memory budget is per.
int64_t KeptEvents(const Trace& trace) {
  int64_t kept = 0;
  for (const Rank& rank : trace.ranks) {
    for (const Timeline& timeline : rank.timelines) {
      kept += static_cast<int64_t>(timeline.intervals.size());
    }
    kept += static_cast<int64_t>(rank.annotations.size() + rank.memory.size() + rank.steps.size());
  }
  return kept;
}

}  // namespace

absl::StatusOr<std::string> AnalyzeScenario(const std::vector<std::string>& files, int jobs) {
  const double cpu_start = ProcessCpuSeconds();
  const Clock::time_point start = Clock::now();
  LoadOptions load;
  load.jobs = jobs;
  absl::StatusOr<Trace> trace = LoadTrace(files, load);
  if (!trace.ok()) return trace.status();
  const Clock::time_point loaded = Clock::now();
  const double cpu_loaded = ProcessCpuSeconds();
  job::Options options;
  options.jobs = jobs;
  absl::StatusOr<job::Result> result = job::Analyze(*trace, options);
  if (!result.ok()) return result.status();
  const Clock::time_point analysed = Clock::now();
  const double cpu_analysed = ProcessCpuSeconds();
  const SummaryReportOptions report_options;
  const std::string text = AnalyzeText(*result, report_options);
  absl::StatusOr<std::string> json = AnalyzeJson(*result, report_options);
  if (!json.ok()) return json.status();
  const Clock::time_point reported = Clock::now();

  return absl::StrCat(
      "seconds_load ", SecondsBetween(start, loaded), "\nseconds_job ",
      SecondsBetween(loaded, analysed), "\ncpu_load ", cpu_loaded - cpu_start, "\ncpu_job ",
      cpu_analysed - cpu_loaded, "\nseconds_reports ", SecondsBetween(analysed, reported),
      "\nseconds ", SecondsBetween(start, reported), "\nkept ", KeptEvents(*trace),
      "\nreport_text_bytes ", text.size(), "\nreport_json_bytes ", json->size(), "\nreport_digest ",
      Digest(*json, Digest(text)), "\n", kFiguresLine, SerializeFigures(FiguresOfJob(*result)));
}

absl::StatusOr<std::string> BarePassScenario(const std::vector<std::string>& files) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<BarePassResult> result = BareSimdjsonPass(files);
  if (!result.ok()) return result.status();
  return absl::StrCat("seconds ", SecondsBetween(start, Clock::now()), "\nevents ", result->events,
                      "\nlargest ", result->largest_file_bytes, "\nchecksum ",
                      result->checksum % 1000, "\n");
}

absl::StatusOr<std::string> CoresFreeScenario(int threads, double seconds) {
  const double cpu_start = ProcessCpuSeconds();
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  {
    std::vector<std::jthread> spinners;
    for (int i = 0; i < threads; ++i) {
      spinners.emplace_back([end] {
        while (Clock::now() < end) {
        }
      });
    }
  }
  return absl::StrCat("cores ",
                      (ProcessCpuSeconds() - cpu_start) / SecondsBetween(start, Clock::now()),
                      "\n");
}

absl::StatusOr<std::string> TruthScenario(const std::string& truth_path) {
  absl::StatusOr<SetTruth> set = ResimulateTruthFile(truth_path);
  if (!set.ok()) return set.status();
  const sim::Truth& truth = set->truth;
  return absl::StrCat("schedule ", truth.schedule, "\nstages ", truth.stages, "\nmicrobatches ",
                      truth.microbatches, "\nvirtual_stages ", truth.virtual_stages,
                      "\niterations ", truth.iterations.size(), "\nbubble_fraction ",
                      truth.bubble_fraction, "\ntheoretical_bubble_fraction ",
                      truth.theoretical_bubble_fraction, "\n", kFiguresLine,
                      SerializeFigures(FiguresOfTruth(set->config, truth)));
}

double ScenarioReport::Number(const std::string& key) const {
  auto it = values.find(key);
  double number = 0;
  if (it == values.end() || !absl::SimpleAtod(it->second, &number)) return 0;
  return number;
}

ScenarioReport ParseScenarioReport(const std::string& text) {
  ScenarioReport report;
  std::string_view head = text;
  if (size_t figures = text.find(kFiguresLine);
      figures != std::string::npos && (figures == 0 || text[figures - 1] == '\n')) {
    head = std::string_view(text).substr(0, figures);
    report.figures = text.substr(figures + kFiguresLineSize);
  }
  std::istringstream lines{std::string(head)};
  std::string key;
  std::string value;
  while (lines >> key >> value) report.values[key] = value;
  return report;
}

}  // namespace bubblescope::bench
