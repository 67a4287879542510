#include "scenarios.h"

#include <chrono>
#include <cstdint>
#include <sstream>
#include <utility>

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
  const Clock::time_point start = Clock::now();
  LoadOptions load;
  load.jobs = jobs;
  absl::StatusOr<Trace> trace = LoadTrace(files, load);
  if (!trace.ok()) return trace.status();
  const Clock::time_point loaded = Clock::now();
  absl::StatusOr<job::Result> result = job::Analyze(*trace, job::Options{});
  if (!result.ok()) return result.status();
  const Clock::time_point analysed = Clock::now();
  const SummaryReportOptions report_options;
  const std::string text = AnalyzeText(*result, report_options);
  absl::StatusOr<std::string> json = AnalyzeJson(*result, report_options);
  if (!json.ok()) return json.status();
  const Clock::time_point reported = Clock::now();

  return absl::StrCat(
      "seconds_load ", SecondsBetween(start, loaded), "\nseconds_job ",
      SecondsBetween(loaded, analysed), "\nseconds_reports ", SecondsBetween(analysed, reported),
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
