// bench_gen: writes the benchmark's simulated multi-rank pipeline trace set and its truth.json
// (bench_set.h), on its own: to keep a set around, or to write one in another layout.
//
//   bench_gen --ranks 8 --target-mb 440 -o /tmp/bubblescope-bench
//   bench_gen --ranks 4 --iterations 3 --gzip --layout old -o /tmp/small-set
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "CLI/CLI.hpp"
#include "bench_set.h"

namespace {

namespace bench = bubblescope::bench;
namespace sim = bubblescope::sim;
using bubblescope::KinetoLayout;

int Run(int argc, char** argv) {
  bench::BenchSetOptions options;
  std::string directory;
  double target_mb = 0;
  int32_t iterations = bench::kMinIterations;
  bool no_bulk_args = false;
  const std::map<std::string, KinetoLayout> layouts = {{"new", KinetoLayout::kRelativeWithBase},
                                                       {"old", KinetoLayout::kAbsoluteMicros},
                                                       {"array", KinetoLayout::kBareArray}};

  CLI::App app{"Writes the benchmark's simulated pipeline trace set and truth.json"};
  app.add_option("-o,--output", directory, "Directory to write into")->required();
  app.add_option("--ranks", options.ranks, "Pipeline stages, one rank each");
  app.add_option("--schedule", options.schedule, "gpipe, 1f1b, interleaved, zb-h1 or fwd-only")
      ->transform(
          CLI::CheckedTransformer(bench::SchedulesByName(), CLI::ignore_case).description(""));
  app.add_option("--iterations", iterations, "Profiler steps (ignored with --target-mb)");
  app.add_option("--target-mb", target_mb,
                 "Choose the iteration count so all files total this many MB uncompressed");
  app.add_option("--seed", options.seed, "Jitter seed (same seed, same files)");
  app.add_option("--layout", options.layout,
                 "new (relative ts + baseTimeNanoseconds), old (absolute ts) or array")
      ->transform(CLI::CheckedTransformer(layouts, CLI::ignore_case).description(""));
  app.add_flag("--gzip", options.gzip, "Write .json.gz files");
  app.add_flag("--no-bulk-args", no_bulk_args, "Leave out the bulky per-event args");
  CLI11_PARSE(app, argc, argv);
  options.bulk_args = !no_bulk_args;

  const auto started = std::chrono::steady_clock::now();
  if (target_mb > 0) {
    absl::StatusOr<int32_t> sized = bench::IterationsForTargetBytes(options, target_mb * 1e6);
    if (!sized.ok()) {
      std::fprintf(stderr, "bench_gen: %s\n", sized.status().ToString().c_str());
      return 2;
    }
    iterations = *sized;
  }
  absl::StatusOr<bench::WrittenSet> set = bench::WriteBenchSet(options, iterations, directory);
  if (!set.ok()) {
    std::fprintf(stderr, "bench_gen: %s\n", set.status().ToString().c_str());
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("bench_gen: %s, %d ranks x %d iterations x %d microbatches, seed %llu\n",
              std::string(sim::ScheduleName(options.schedule)).c_str(), options.ranks, iterations,
              set->config.microbatches, static_cast<unsigned long long>(options.seed));
  std::printf("bench_gen: wrote %zu files, %.1f MB, and truth.json in %.1f s to %s\n",
              set->trace_files.size(), static_cast<double>(set->trace_bytes) / 1e6, seconds,
              directory.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
