// bench_analyze: throughput and memory figures of `analyze` on a multi-rank trace set, plus a
// check of its numbers against the generator's truth.json. Every scenario runs in a forked child
// so its peak RSS is its own. Speed and memory are printed as figures against their targets;
// only the truth checks decide the exit status.
//
//   bench_analyze [DIR]      (DIR defaults to /tmp/bubblescope-bench; generated when absent)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "analysis/rank_summary.h"
#include "bare_pass.h"
#include "child_process.h"
#include "generator_truth.h"
#include "job_writer.h"
#include "loader/trace_loader.h"
#include "trace_generator.h"

namespace {

namespace bench = bubblescope::bench;
using Clock = std::chrono::steady_clock;

constexpr double kMB = 1e6;
constexpr double kBudgetPerFileFactor = 2.5;  // × largest decompressed file, per worker
constexpr double kBudgetPerKeptEvent = 64;    // bytes

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A child's report: "key value" lines, and "rank <fields...>" lines for analyze figures.
std::map<std::string, double> ParseKeyValues(const std::string& text,
                                             std::vector<bench::RankTruth>* ranks) {
  std::map<std::string, double> values;
  std::istringstream lines(text);
  std::string key;
  while (lines >> key) {
    if (key == "rank") {
      bench::RankTruth figures;
      lines >> figures.rank >> figures.kernels >> figures.comm_ops >> figures.memcpys >>
          figures.steps >> figures.span >> figures.compute >> figures.comm >> figures.memcpy >>
          figures.idle >> figures.peak_allocated_bytes >> figures.peak_reserved_bytes;
      if (ranks != nullptr) ranks->push_back(figures);
      continue;
    }
    double value = 0;
    lines >> value;
    values[key] = value;
  }
  return values;
}

absl::StatusOr<std::string> AnalyzeWork(const std::vector<std::string>& files, int jobs) {
  Clock::time_point start = Clock::now();
  bubblescope::LoadOptions load;
  load.jobs = jobs;
  absl::StatusOr<bubblescope::Trace> trace = bubblescope::LoadTrace(files, load);
  if (!trace.ok()) return trace.status();
  bubblescope::rank_summary::Result result =
      bubblescope::rank_summary::Analyze(*trace, bubblescope::index::Build(*trace));
  double seconds = SecondsSince(start);
  int64_t kept = 0;
  for (const bubblescope::Rank& rank : trace->ranks) {
    for (const bubblescope::Timeline& timeline : rank.timelines) {
      kept += static_cast<int64_t>(timeline.intervals.size());
    }
    kept += static_cast<int64_t>(rank.annotations.size() + rank.memory.size() + rank.steps.size());
  }
  std::string report = absl::StrCat("seconds ", seconds, "\nkept ", kept, "\n");
  for (const auto& r : result.ranks) {
    absl::StrAppend(&report, "rank ", r.rank, " ", r.kernels, " ", r.comm_ops, " ", r.memcpys, " ",
                    r.steps, " ", r.span, " ", r.compute, " ", r.comm, " ", r.memcpy, " ", r.idle,
                    " ", r.peak_allocated_bytes, " ", r.peak_reserved_bytes, "\n");
  }
  return report;
}

absl::StatusOr<std::string> BareWork(const std::vector<std::string>& files) {
  Clock::time_point start = Clock::now();
  absl::StatusOr<bench::BarePassResult> result = bench::BareSimdjsonPass(files);
  if (!result.ok()) return result.status();
  return absl::StrCat("seconds ", SecondsSince(start), "\nevents ", result->events, "\nlargest ",
                      result->largest_file_bytes, "\nchecksum ", result->checksum % 1000, "\n");
}

std::vector<std::string> TraceFiles(const std::string& directory) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    std::string name = entry.path().filename().string();
    bool trace = name.ends_with(".json") || name.ends_with(".json.gz");
    if (entry.is_regular_file() && trace && name != "truth.json") {
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

void CheckAgainstTruth(const std::vector<bench::RankTruth>& truth,
                       const std::vector<bench::RankTruth>& got, Checks* checks) {
  checks->Report(truth.size() == got.size(),
                 absl::StrCat("ranks: ", got.size(), " analysed, ", truth.size(), " generated"));
  struct Field {
    const char* name;
    int64_t bench::RankTruth::*member;
  };
  const Field fields[] = {{"kernels", &bench::RankTruth::kernels},
                          {"comm_ops", &bench::RankTruth::comm_ops},
                          {"memcpys", &bench::RankTruth::memcpys},
                          {"steps", &bench::RankTruth::steps},
                          {"span_ns", &bench::RankTruth::span},
                          {"compute_ns", &bench::RankTruth::compute},
                          {"comm_ns", &bench::RankTruth::comm},
                          {"memcpy_ns", &bench::RankTruth::memcpy},
                          {"idle_ns", &bench::RankTruth::idle},
                          {"peak_allocated_bytes", &bench::RankTruth::peak_allocated_bytes},
                          {"peak_reserved_bytes", &bench::RankTruth::peak_reserved_bytes}};
  for (const Field& field : fields) {
    std::string mismatch;
    for (const bench::RankTruth& want : truth) {
      auto it = std::find_if(got.begin(), got.end(),
                             [&](const bench::RankTruth& g) { return g.rank == want.rank; });
      if (it == got.end()) {
        mismatch = absl::StrCat("rank ", want.rank, " missing");
        break;
      }
      if ((*it).*field.member != want.*field.member) {
        mismatch = absl::StrCat("rank ", want.rank, ": analyze ", (*it).*field.member,
                                ", generated ", want.*field.member);
        break;
      }
    }
    checks->Report(mismatch.empty(), absl::StrCat(field.name, mismatch.empty() ? "" : ": ",
                                                  mismatch));
  }
}

int Run(int argc, char** argv) {
  std::string directory = "/tmp/bubblescope-bench";
  bench::GeneratorOptions generator;
  generator.ranks = 8;
  double target_mb = 440;
  bool regenerate = false;
  CLI::App app{"Throughput, memory and correctness figures of `bubblescope analyze`"};
  app.add_option("dir", directory, "Trace directory (generated with bench_gen's model if absent)");
  app.add_option("--ranks", generator.ranks, "Ranks to generate when generating");
  app.add_option("--target-mb", target_mb, "Size to generate when generating");
  app.add_option("--seed", generator.seed, "Seed to generate with");
  app.add_flag("--regenerate", regenerate, "Generate even if the directory holds a trace set");
  CLI11_PARSE(app, argc, argv);

  std::string truth_path = (std::filesystem::path(directory) / "truth.json").string();
  if (regenerate || !std::filesystem::exists(truth_path)) {
    std::printf("generating %d ranks, ~%.0f MB into %s ...\n", generator.ranks, target_mb,
                directory.c_str());
    std::fflush(stdout);
    auto generated = bench::RunInChild([&]() -> absl::StatusOr<std::string> {
      std::error_code ignored;
      std::filesystem::remove_all(directory, ignored);
      bench::JobWriteOptions write;
      absl::StatusOr<int> steps = bench::StepsForTargetBytes(generator, write, target_mb * kMB);
      if (!steps.ok()) return steps.status();
      bench::GeneratorOptions sized = generator;
      sized.steps = *steps;
      absl::StatusOr<bench::GeneratedJob> job = bench::GenerateJob(sized);
      if (!job.ok()) return job.status();
      absl::StatusOr<bench::WrittenJob> written = bench::WriteJob(*job, directory, write);
      if (!written.ok()) return written.status();
      return std::string("ok");
    });
    if (!generated.ok()) {
      std::fprintf(stderr, "bench_analyze: %s\n", generated.status().ToString().c_str());
      return 2;
    }
  }
  std::vector<std::string> files = TraceFiles(directory);
  std::ifstream truth_file(truth_path);
  std::string truth_text((std::istreambuf_iterator<char>(truth_file)), {});
  absl::StatusOr<std::vector<bench::RankTruth>> truth = bench::ParseTruthJson(truth_text);
  if (files.empty() || !truth.ok()) {
    std::fprintf(stderr, "bench_analyze: %s: no trace files or unreadable truth.json\n",
                 directory.c_str());
    return 2;
  }
  double total_bytes = 0;
  for (const std::string& file : files) {
    total_bytes += static_cast<double>(std::filesystem::file_size(file));
  }

  // A child that does nothing: the RSS every scenario starts from (binary, libraries, inherited
  // pages), which the budgets leave out.
  auto idle = bench::RunInChild([]() -> absl::StatusOr<std::string> { return std::string("ok"); });
  auto bare = bench::RunInChild([&] { return BareWork(files); });
  auto one = bench::RunInChild([&] { return AnalyzeWork(files, 1); });
  auto two = bench::RunInChild([&] { return AnalyzeWork(files, 2); });
  for (const auto* run : {&idle, &bare, &one, &two}) {
    if (!run->ok()) {
      std::fprintf(stderr, "bench_analyze: %s\n", run->status().ToString().c_str());
      return 2;
    }
  }
  std::map<std::string, double> bare_values = ParseKeyValues(bare->output, nullptr);
  std::vector<bench::RankTruth> figures_one;
  std::vector<bench::RankTruth> figures_two;
  std::map<std::string, double> one_values = ParseKeyValues(one->output, &figures_one);
  std::map<std::string, double> two_values = ParseKeyValues(two->output, &figures_two);

  double largest = bare_values["largest"];
  double total_mb = total_bytes / kMB;
  double bare_rate = total_mb / bare_values["seconds"];
  double one_rate = total_mb / one_values["seconds"];
  double two_rate = total_mb / two_values["seconds"];
  std::printf("bubblescope bench: %zu files, %.1f MB (largest %.1f MB decompressed), %s\n",
              files.size(), total_mb, largest / kMB, directory.c_str());
  // Wall-clock rates are what users see; CPU seconds (whole child) show how much of a slow run
  // was the machine being busy with other work.
  auto line = [&](const char* what, double rate, double seconds, const bench::ChildResult& run,
                  double budget) {
    double own = static_cast<double>(run.max_rss_bytes - idle->max_rss_bytes);
    std::printf("  %-30s %7.1f MB/s %6.2f s wall %6.2f s cpu  peak RSS %6.1f MB, %6.1f MB over "
                "baseline (budget %.1f MB: %s)\n",
                what, rate, seconds, run.cpu_seconds, static_cast<double>(run.max_rss_bytes) / kMB,
                own / kMB, budget / kMB, own <= budget ? "within" : "OVER");
  };
  double kept = one_values["kept"];
  line("bare simdjson pass (ph..tid)", bare_rate, bare_values["seconds"], *bare,
       kBudgetPerFileFactor * largest);
  line("analyze, jobs=1", one_rate, one_values["seconds"], *one,
       kBudgetPerFileFactor * largest + kBudgetPerKeptEvent * kept);
  line("analyze, jobs=2", two_rate, two_values["seconds"], *two,
       2 * kBudgetPerFileFactor * largest + kBudgetPerKeptEvent * kept);
  std::printf("  events %.0f, kept %.0f; baseline RSS of an idle child %.1f MB\n",
              bare_values["events"], kept, static_cast<double>(idle->max_rss_bytes) / kMB);
  double ratio = one_rate / bare_rate;
  double cpu_ratio = bare->cpu_seconds / one->cpu_seconds;
  double speedup = two_rate / one_rate;
  std::printf("  analyze/bare ratio %.2f (target >= 0.60: %s); by CPU time %.2f\n", ratio,
              ratio >= 0.6 ? "met" : "missed", cpu_ratio);
  std::printf("  jobs=2 speed-up %.2fx (target >= 1.80x on >= 4 files: %s)\n", speedup,
              files.size() < 4 ? "n/a" : speedup >= 1.8 ? "met" : "missed");

  std::printf("truth checks (analyze jobs=1 against %s):\n", truth_path.c_str());
  Checks checks;
  CheckAgainstTruth(*truth, figures_one, &checks);
  checks.Report(figures_one == figures_two, "jobs=2 figures equal jobs=1 figures");
  std::printf("result: %s (%d passed, %d failed)\n", checks.failed == 0 ? "PASS" : "FAIL",
              checks.passed, checks.failed);
  return checks.failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
