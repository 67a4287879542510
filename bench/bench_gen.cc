// bench_gen: writes a synthetic multi-rank pipeline-parallel Kineto trace set and its truth.json.
//
//   bench_gen --ranks 8 --target-mb 440 -o /tmp/bubblescope-bench
//   bench_gen --small -o sample_traces/synthetic_pipeline_4rank
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "CLI/CLI.hpp"
#include "job_writer.h"
#include "trace_generator.h"

namespace {

using bubblescope::bench::GeneratorOptions;
using bubblescope::bench::JobWriteOptions;
using bubblescope::bench::LayoutChoice;

int Run(int argc, char** argv) {
  GeneratorOptions generator;
  JobWriteOptions write;
  std::string directory;
  double target_mb = 0;
  bool small = false;
  bool no_bulk_args = false;
  LayoutChoice layout = LayoutChoice::kRelative;
  const std::map<std::string, LayoutChoice> layouts = {{"relative", LayoutChoice::kRelative},
                                                       {"absolute", LayoutChoice::kAbsolute},
                                                       {"array", LayoutChoice::kBareArray},
                                                       {"mixed", LayoutChoice::kMixed}};

  CLI::App app{"Writes a synthetic pipeline-parallel Kineto trace set and truth.json"};
  app.add_option("-o,--output", directory, "Directory to write into")->required();
  app.add_option("--ranks", generator.ranks, "Pipeline stages (one rank each)");
  app.add_option("--steps", generator.steps, "Profiled steps (ignored with --target-mb)");
  app.add_option("--microbatches", generator.microbatches, "Microbatches per step");
  app.add_option("--layers", generator.layers_per_stage, "Transformer layers per stage");
  app.add_option("--seed", generator.seed, "Random seed (same seed, same files)");
  app.add_option("--target-mb", target_mb, "Choose the step count so all files total this size");
  app.add_option("--layout", layout, "relative | absolute | array | mixed")
      ->transform(CLI::CheckedTransformer(layouts, CLI::ignore_case));
  app.add_flag("--gzip", write.gzip, "Write .json.gz files");
  app.add_flag("--no-bulk-args", no_bulk_args, "Leave out the bulky per-event args");
  app.add_flag("--small", small,
               "Small preset: 2 steps, 4 microbatches, 1 layer, no bulk args, gzip");
  CLI11_PARSE(app, argc, argv);

  if (small) {
    generator.steps = 2;
    generator.microbatches = 4;
    generator.layers_per_stage = 1;
    no_bulk_args = true;
    write.gzip = true;
  }
  write.layout = layout;
  write.bulk_args = !no_bulk_args;

  auto started = std::chrono::steady_clock::now();
  if (target_mb > 0) {
    absl::StatusOr<int> steps =
        bubblescope::bench::StepsForTargetBytes(generator, write, target_mb * 1e6);
    if (!steps.ok()) {
      std::fprintf(stderr, "bench_gen: %s\n", steps.status().ToString().c_str());
      return 1;
    }
    generator.steps = *steps;
  }
  absl::StatusOr<bubblescope::bench::GeneratedJob> job = bubblescope::bench::GenerateJob(generator);
  if (!job.ok()) {
    std::fprintf(stderr, "bench_gen: %s\n", job.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<bubblescope::bench::WrittenJob> written =
      bubblescope::bench::WriteJob(*job, directory, write);
  if (!written.ok()) {
    std::fprintf(stderr, "bench_gen: %s\n", written.status().ToString().c_str());
    return 1;
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("bench_gen: %d ranks x %d steps x %d microbatches x %d layers, seed %llu\n",
              generator.ranks, generator.steps, generator.microbatches,
              generator.layers_per_stage, static_cast<unsigned long long>(generator.seed));
  std::printf("bench_gen: wrote %zu files, %.1f MB, in %.1f s to %s\n", written->files.size(),
              static_cast<double>(written->total_bytes) / 1e6, seconds, directory.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
