// bench_analyze: throughput and memory figures of `bubblescope analyze` on a simulated multi-rank
// trace set, and a check of every figure of the analysis against the simulator's truth. Every
// scenario runs in a forked child so its peak RSS is its own. Speed and memory are printed as
// figures against their targets; only the truth checks decide the exit status.
//
//   bench_analyze [DIR]      (DIR defaults to /tmp/bubblescope-bench; generated when absent)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "bench_set.h"
#include "checked_figures.h"
#include "child_process.h"
#include "scenarios.h"
#include "writers/simulated_set.h"

namespace {

namespace bench = bubblescope::bench;
namespace sim = bubblescope::sim;

constexpr double kMB = 1e6;
constexpr double kBudgetPerFileFactor = 2.5;  // × largest decompressed file, per worker
constexpr double kBudgetPerKeptEvent = 64;    // bytes

// The rank files of a set (truth.json and anything else beside them left out), by name.
std::vector<std::string> TraceFiles(const std::string& directory) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    std::string name = entry.path().filename().string();
    bool trace = name.ends_with(".json") || name.ends_with(".json.gz");
    if (entry.is_regular_file() && trace && name != sim::kTruthFileName) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct Checks {
  int passed = 0;
  int failed = 0;
  void Report(bool ok, const std::string& what) {
    std::printf("  %s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    (ok ? passed : failed) += 1;
  }
};

// One line per checked field: how many instances agreed, or the first that did not.
void CheckFigures(const std::string& truth_text, const std::string& analysis_text, Checks* checks) {
  absl::StatusOr<bench::Figures> truth = bench::ParseFigures(truth_text);
  absl::StatusOr<bench::Figures> analysis = bench::ParseFigures(analysis_text);
  if (!truth.ok() || !analysis.ok()) {
    checks->Report(false, absl::StrCat("figures readable: ",
                                       (truth.ok() ? analysis : truth).status().ToString()));
    return;
  }
  for (const bench::FieldCheck& field : bench::CompareFigures(*truth, *analysis)) {
    if (field.mismatched == 0) {
      checks->Report(true, absl::StrCat(field.field, " (", field.compared, ")"));
    } else {
      checks->Report(false, absl::StrCat(field.field, ": ", field.mismatched, " of ",
                                         field.compared, " differ; ", field.first_mismatch));
    }
  }
}

// Writes the set in a child, so the parent stays small: every later child starts from the
// parent's pages, and its peak RSS is measured from there.
int Generate(const bench::BenchSetOptions& options, double target_mb,
             const std::string& directory) {
  std::printf("generating %d ranks (%s), ~%.0f MB into %s ...\n", options.ranks,
              std::string(sim::ScheduleName(options.schedule)).c_str(), target_mb,
              directory.c_str());
  std::fflush(stdout);
  auto generated = bench::RunInChild([&]() -> absl::StatusOr<std::string> {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<int32_t> iterations = bench::IterationsForTargetBytes(options, target_mb * kMB);
    if (!iterations.ok()) return iterations.status();
    absl::StatusOr<bench::WrittenSet> set = bench::WriteBenchSet(options, *iterations, directory);
    if (!set.ok()) return set.status();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return absl::StrCat("iterations ", *iterations, "\nmicrobatches ", set->config.microbatches,
                        "\nfiles ", set->trace_files.size(), "\nbytes ", set->trace_bytes,
                        "\nseconds ", seconds, "\n");
  });
  if (!generated.ok()) {
    std::fprintf(stderr, "bench_analyze: %s\n", std::string(generated.status().message()).c_str());
    return 2;
  }
  const bench::ScenarioReport report = bench::ParseScenarioReport(generated->output);
  std::printf("  %.0f iterations of %.0f microbatches: %.0f files, %.1f MB, in %.1f s\n",
              report.Number("iterations"), report.Number("microbatches"), report.Number("files"),
              report.Number("bytes") / kMB, report.Number("seconds"));
  return 0;
}

int Run(int argc, char** argv) {
  std::string directory = "/tmp/bubblescope-bench";
  bench::BenchSetOptions options;
  double target_mb = 440;
  bool regenerate = false;

  CLI::App app{"Throughput, memory and correctness figures of `bubblescope analyze`"};
  app.add_option("dir", directory, "Trace directory with truth.json (generated if it has none)");
  app.add_option("--ranks", options.ranks, "Pipeline stages to generate, one rank each");
  app.add_option("--target-mb", target_mb, "Size to generate (uncompressed MB of all files)");
  app.add_option("--seed", options.seed, "Jitter seed to generate with");
  app.add_option("--schedule", options.schedule,
                 "Schedule to generate: gpipe, 1f1b, interleaved, zb-h1 or fwd-only")
      ->transform(
          CLI::CheckedTransformer(bench::SchedulesByName(), CLI::ignore_case).description(""));
  app.add_flag("--regenerate", regenerate, "Generate even if the directory holds a set");
  CLI11_PARSE(app, argc, argv);

  const std::string truth_path = (std::filesystem::path(directory) / sim::kTruthFileName).string();
  if (regenerate || !std::filesystem::exists(truth_path)) {
    if (int status = Generate(options, target_mb, directory); status != 0) return status;
  } else {
    std::printf("using the set in %s as it is (--regenerate writes a new one)\n",
                directory.c_str());
  }
  const std::vector<std::string> files = TraceFiles(directory);
  if (files.empty()) {
    std::fprintf(stderr, "bench_analyze: %s: no trace files\n", directory.c_str());
    return 2;
  }
  double total_bytes = 0;
  for (const std::string& file : files) {
    total_bytes += static_cast<double>(std::filesystem::file_size(file));
  }

  // The truth first: a set it cannot vouch for is not worth timing.
  auto truth = bench::RunInChild([&] { return bench::TruthScenario(truth_path); });
  if (!truth.ok()) {
    std::fprintf(stderr, "bench_analyze: %s\n(--regenerate replaces the set with a new one)\n",
                 std::string(truth.status().message()).c_str());
    return 2;
  }
  // A child that does nothing: the RSS every scenario starts from (binary, libraries, inherited
  // pages), which the budgets leave out.
  auto idle = bench::RunInChild([]() -> absl::StatusOr<std::string> { return std::string("ok"); });
  auto bare = bench::RunInChild([&] { return bench::BarePassScenario(files); });
  auto one = bench::RunInChild([&] { return bench::AnalyzeScenario(files, 1); });
  auto two = bench::RunInChild([&] { return bench::AnalyzeScenario(files, 2); });
  // Right after the timed runs: what the machine had to give two threads at that moment.
  auto cores = bench::RunInChild([] { return bench::CoresFreeScenario(2, 0.5); });
  for (const auto* run : {&idle, &bare, &one, &two, &cores}) {
    if (!run->ok()) {
      std::fprintf(stderr, "bench_analyze: %s\n", std::string(run->status().message()).c_str());
      return 2;
    }
  }
  const bench::ScenarioReport bare_report = bench::ParseScenarioReport(bare->output);
  const bench::ScenarioReport one_report = bench::ParseScenarioReport(one->output);
  const bench::ScenarioReport two_report = bench::ParseScenarioReport(two->output);
  const bench::ScenarioReport truth_report = bench::ParseScenarioReport(truth->output);

  const double largest = bare_report.Number("largest");
  const double events = bare_report.Number("events");
  const double kept = one_report.Number("kept");
  const double total_mb = total_bytes / kMB;
  std::printf("bubblescope bench: %zu files, %.1f MB (largest %.1f MB decompressed), %s\n",
              files.size(), total_mb, largest / kMB, directory.c_str());
  std::printf(
      "  job: %s p=%.0f m=%.0f v=%.0f, %.0f iterations, bubble %.4f (theoretical "
      "%.4f); %.0f events, %.0f kept\n",
      truth_report.values.at("schedule").c_str(), truth_report.Number("stages"),
      truth_report.Number("microbatches"), truth_report.Number("virtual_stages"),
      truth_report.Number("iterations"), truth_report.Number("bubble_fraction"),
      truth_report.Number("theoretical_bubble_fraction"), events, kept);
  // Wall-clock rates are what users see; CPU seconds (whole child) show how much of a slow run
  // was the machine being busy with other work.
  auto line = [&](const char* what, double seconds, const bench::ChildResult& run, double budget) {
    const double own = static_cast<double>(run.max_rss_bytes - idle->max_rss_bytes);
    std::printf(
        "  %-26s %7.1f MB/s %5.2f M events/s %6.2f s wall %6.2f s cpu  peak RSS "
        "%6.1f MB, %6.1f MB over baseline (budget %.1f MB: %s)\n",
        what, total_mb / seconds, events / seconds / 1e6, seconds, run.cpu_seconds,
        static_cast<double>(run.max_rss_bytes) / kMB, own / kMB, budget / kMB,
        own <= budget ? "within" : "OVER");
  };
  auto phases = [&](const bench::ScenarioReport& report) {
    std::printf(
        "  %-26s load %.2f s wall %.2f s cpu (%.1f MB/s), job analysis %.2f s wall %.2f s cpu, "
        "reports %.2f s\n",
        "", report.Number("seconds_load"), report.Number("cpu_load"),
        total_mb / report.Number("seconds_load"), report.Number("seconds_job"),
        report.Number("cpu_job"), report.Number("seconds_reports"));
  };
  line("bare simdjson pass (ph..tid)", bare_report.Number("seconds"), *bare,
       kBudgetPerFileFactor * largest);
  line("analyze, jobs=1", one_report.Number("seconds"), *one,
       kBudgetPerFileFactor * largest + kBudgetPerKeptEvent * kept);
  phases(one_report);
  line("analyze, jobs=2", two_report.Number("seconds"), *two,
       2 * kBudgetPerFileFactor * largest + kBudgetPerKeptEvent * kept);
  phases(two_report);
  std::printf("  baseline RSS of an idle child %.1f MB\n",
              static_cast<double>(idle->max_rss_bytes) / kMB);
  // The reader's targets concern loading, which both ratios take from the load phase; the
  // whole analyze (the job analysis runs on --jobs threads too) is printed beside them.
  const double load_ratio = bare_report.Number("seconds") / one_report.Number("seconds_load");
  const double load_speedup = one_report.Number("seconds_load") / two_report.Number("seconds_load");
  std::printf("  load/bare ratio %.2f (target >= 0.60: %s); whole analyze/bare %.2f\n", load_ratio,
              load_ratio >= 0.6 ? "met" : "missed",
              bare_report.Number("seconds") / one_report.Number("seconds"));
  std::printf(
      "  jobs=2 load speed-up %.2fx wall (target >= 1.80x on >= 4 files: %s); whole analyze "
      "%.2fx wall\n",
      load_speedup,
      files.size() < 4      ? "n/a"
      : load_speedup >= 1.8 ? "met"
                            : "missed",
      one_report.Number("seconds") / two_report.Number("seconds"));
  // CPU seconds tell the work apart from the machine: jobs=2 over jobs=1 is the work that the
  // second thread adds (1.00: none), and CPU over wall the cores the run really had.
  std::printf(
      "  jobs=2 over jobs=1 in cpu: load %.2fx, whole analyze %.2fx; cores used: load %.2f "
      "(jobs=1 %.2f), whole analyze %.2f\n",
      two_report.Number("cpu_load") / one_report.Number("cpu_load"),
      two->cpu_seconds / one->cpu_seconds,
      two_report.Number("cpu_load") / two_report.Number("seconds_load"),
      one_report.Number("cpu_load") / one_report.Number("seconds_load"),
      two->cpu_seconds / two_report.Number("seconds"));
  const double free_cores = bench::ParseScenarioReport(cores->output).Number("cores");
  std::printf("  machine: 2 spinning threads got %.2f cores%s\n", free_cores,
              free_cores < 1.9 ? " (busy: no speed-up measured now can pass that)" : "");

  std::printf("truth checks (analyze jobs=1 against %s, simulated again):\n", truth_path.c_str());
  Checks checks;
  CheckFigures(truth_report.figures, one_report.figures, &checks);
  checks.Report(one_report.figures == two_report.figures, "jobs=2 figures equal jobs=1 figures");
  checks.Report(one_report.values.at("report_digest") == two_report.values.at("report_digest"),
                absl::StrCat("jobs=2 reports equal jobs=1 reports (text ",
                             one_report.values.at("report_text_bytes"), " bytes, JSON ",
                             one_report.values.at("report_json_bytes"), " bytes)"));
  std::printf("result: %s (%d passed, %d failed)\n", checks.failed == 0 ? "PASS" : "FAIL",
              checks.passed, checks.failed);
  return checks.failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
