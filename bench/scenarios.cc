#include "scenarios.h"

#include <sys/resource.h>

#include <array>
#include <atomic>
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

// This process's resource use so far, all its threads together.
struct Usage {
  double cpu_seconds = 0;  // user + system
  int64_t minor_faults = 0;
};

Usage ProcessUsage() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return {seconds(usage.ru_utime) + seconds(usage.ru_stime), usage.ru_minflt};
}

double ProcessCpuSeconds() { return ProcessUsage().cpu_seconds; }

// Work that keeps one core's multiplier busy (four independent multiply chains over a buffer that
// stays in the first-level cache) and touches no memory beyond it: two threads finish it in the
// time of one only when each has a core of its own. Two hyper-threads of one core share the
// multiplier and take about twice as long; a machine busy with other work, longer still.
uint64_t MultiplyChains(int64_t rounds) {
  constexpr uint64_t kOdd = 0x9E3779B97F4A7C15ULL;
  std::array<uint64_t, 512> words{};
  for (size_t i = 0; i < words.size(); ++i) words[i] = i * kOdd;
  uint64_t a = 1, b = 2, c = 3, d = 4;
  for (int64_t round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < words.size(); i += 4) {
      a = (a ^ words[i]) * kOdd;
      b = (b ^ words[i + 1]) * kOdd;
      c = (c ^ words[i + 2]) * kOdd;
      d = (d ^ words[i + 3]) * kOdd;
    }
  }
  return a ^ b ^ c ^ d;
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
  const Usage usage_start = ProcessUsage();
  const Clock::time_point start = Clock::now();
  LoadOptions load;
  load.jobs = jobs;
  // LoadTrace's two phases timed apart: the files read on `jobs` workers, then the trace
  // assembled from them on one thread.
  absl::StatusOr<TraceFileList> list = ListTraceFiles(files, load);
  if (!list.ok()) return list.status();
  std::vector<FileRead> reads = ReadTraceFiles(list->files, load);
  const Clock::time_point read = Clock::now();
  const Usage usage_read = ProcessUsage();
  absl::StatusOr<Trace> trace = AssembleTrace(*list, std::move(reads), load);
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
      "seconds_load ", SecondsBetween(start, loaded), "\nseconds_read ",
      SecondsBetween(start, read), "\ncpu_read ", usage_read.cpu_seconds - usage_start.cpu_seconds,
      "\nfaults_read ", usage_read.minor_faults - usage_start.minor_faults, "\nseconds_job ",
      SecondsBetween(loaded, analysed), "\ncpu_load ", cpu_loaded - usage_start.cpu_seconds,
      "\ncpu_job ", cpu_analysed - cpu_loaded, "\nseconds_reports ",
      SecondsBetween(analysed, reported), "\nseconds ", SecondsBetween(start, reported), "\nkept ",
      KeptEvents(*trace), "\nreport_text_bytes ", text.size(), "\nreport_json_bytes ", json->size(),
      "\nreport_digest ", Digest(*json, Digest(text)), "\n", kFiguresLine,
      SerializeFigures(FiguresOfJob(*result)));
}

absl::StatusOr<std::string> BarePassScenario(const std::vector<std::string>& files) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<BarePassResult> result = BareSimdjsonPass(files);
  if (!result.ok()) return result.status();
  return absl::StrCat("seconds ", SecondsBetween(start, Clock::now()), "\nevents ", result->events,
                      "\nlargest ", result->largest_file_bytes, "\nchecksum ",
                      result->checksum % 1000, "\n");
}

absl::StatusOr<std::string> CoresScenario(int threads, double seconds) {
  // Called through a pointer the compiler cannot see through, so that each call is made where it
  // stands, between its clock readings, and none is merged with an earlier one of equal rounds.
  uint64_t (*volatile work)(int64_t) = MultiplyChains;
  // Rounds of the work that take one thread about `seconds`, found by doubling.
  int64_t rounds = 1024;
  double one_seconds = 0;
  std::atomic<uint64_t> sink = 0;
  while (true) {
    const Clock::time_point start = Clock::now();
    sink ^= work(rounds);
    one_seconds = SecondsBetween(start, Clock::now());
    if (one_seconds >= seconds / 2 || rounds > (int64_t{1} << 40)) break;
    rounds *= 2;
  }
  // The same rounds on one thread again (now measured whole), then on `threads` at once.
  Clock::time_point start = Clock::now();
  sink ^= work(rounds);
  one_seconds = SecondsBetween(start, Clock::now());
  const double cpu_start = ProcessCpuSeconds();
  start = Clock::now();
  {
    std::vector<std::jthread> workers;
    for (int i = 0; i < threads; ++i) {
      workers.emplace_back([rounds, work, &sink] { sink ^= work(rounds); });
    }
  }
  const double together_seconds = SecondsBetween(start, Clock::now());
  return absl::StrCat("cores ", (ProcessCpuSeconds() - cpu_start) / together_seconds,
                      "\nthroughput ", threads * one_seconds / together_seconds, "\nsink ",
                      sink.load() % 2, "\n");
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
