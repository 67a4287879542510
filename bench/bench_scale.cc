// bench_scale: the scale figures of issue 26 (docs/benchmarks.md, "Scale"), printed, never
// judged. For simulated DP x PP jobs of 128, 512 and 1,024 ranks (pipelines of 8 stages, the
// rest data-parallel replicas) it runs the real `bubblescope` as a child process and reports, per
// job: the trace bytes; `digest` throughput and the digest/trace size ratio; analyze from the
// traces and from the digests (the reduce step), each with its wall time and peak RSS (wait4's
// ru_maxrss of the child); and for the largest job `analyze --mpi` under mpiexec with 1, 2 and 4
// processes, with each process's own peak RSS. Reports are compared: from digests, the JSON from
// "pipelines" on must be the traces' byte for byte; under --mpi, the whole JSON.
//
//   bench_scale [--dir DIR] [--ranks 128,512,1024] [--processes 1,2,4] [--iterations N]
//
// Under mpiexec bench_scale runs each process of bubblescope through itself,
//   bench_scale --peak-rss-of PREFIX COMMAND...
// which runs COMMAND, writes its peak RSS in MB to PREFIX.<its MPI process number> and exits
// with its status, so that every process's peak is known, not only the largest.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace {

namespace fs = std::filesystem;

constexpr int kStages = 8;
constexpr double kMB = 1e6;

struct Run {
  bool ok = false;
  double wall_s = 0;
  double max_rss_mb = 0;  // the largest of the child and the descendants it waited for
  double user_s = 0;      // CPU time in bubblescope's own code
  double system_s = 0;    // CPU time in the kernel (file creation dominates `digest`'s)
};

// Runs `args` as a child (stdout and stderr to `log`), timed, with its peak RSS.
Run Execute(const std::vector<std::string>& args, const std::string& log) {
  std::fflush(stdout);  // or the child's freopen would print what is buffered a second time
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (out == nullptr || dup2(fileno(stdout), 2) < 0) _exit(127);
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  Run run;
  if (pid < 0) return run;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return run;
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.max_rss_mb = static_cast<double>(usage.ru_maxrss) * 1024 / kMB;
  run.user_s = static_cast<double>(usage.ru_utime.tv_sec) +
               static_cast<double>(usage.ru_utime.tv_usec) / 1e6;
  run.system_s = static_cast<double>(usage.ru_stime.tv_sec) +
                 static_cast<double>(usage.ru_stime.tv_usec) / 1e6;
  run.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return run;
}

uint64_t DirectoryBytes(const std::string& directory, const std::string& suffix) {
  uint64_t bytes = 0;
  for (const auto& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.starts_with("rank") && name.ends_with(suffix)) {
      bytes += entry.file_size();
    }
  }
  return bytes;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The report from its "pipelines" member on (the ranks before it name the files read).
std::string FromPipelines(const std::string& report) {
  const size_t at = report.find("\"pipelines\"");
  return at == std::string::npos ? std::string() : report.substr(at);
}

// Wall time, peak RSS, input MB per wall second, and CPU time (user + system).
void PrintRun(const char* what, const Run& run, double input_mb) {
  std::printf("  %-34s %7.2f s %8.1f MB peak RSS %7.1f MB/s  cpu %.2f + %.2f s%s\n", what,
              run.wall_s, run.max_rss_mb, run.wall_s > 0 ? input_mb / run.wall_s : 0.0, run.user_s,
              run.system_s, run.ok ? "" : "   FAILED (see its .log)");
}

// The MPI process number the launcher gave this process (Open MPI, PMI, Slurm); "0" without one.
std::string MpiProcessNumber() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name); value != nullptr) return value;
  }
  return "0";
}

// --peak-rss-of PREFIX COMMAND...: runs COMMAND with this process's stdout and stderr, writes its
// peak RSS (MB) to PREFIX.<process number>, and exits with its status.
int PeakRssOf(int argc, char** argv) {
  if (argc < 4) return 2;
  const pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[3], argv + 3);
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return 127;
  std::ofstream(std::string(argv[2]) + "." + MpiProcessNumber())
      << static_cast<double>(usage.ru_maxrss) * 1024 / kMB << "\n";
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// The peaks PeakRssOf wrote for `processes` processes, "p0 a MB, p1 b MB, ...".
std::string ProcessPeaks(const std::string& prefix, int processes) {
  std::string peaks;
  for (int p = 0; p < processes; ++p) {
    std::string mb = ReadAll(prefix + "." + std::to_string(p));
    while (!mb.empty() && (mb.back() == '\n' || mb.back() == ' ')) mb.pop_back();
    char formatted[64];
    std::snprintf(formatted, sizeof formatted, "%sp%d %.1f MB", p == 0 ? "" : ", ", p,
                  std::atof(mb.c_str()));
    peaks += formatted;
  }
  return peaks;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--peak-rss-of") return PeakRssOf(argc, argv);
  CLI::App app("bench_scale: digest, reduce and --mpi figures of 128- to 1,024-rank jobs");
  std::string directory = "/tmp/bubblescope-scale";
  std::string bubblescope = BUBBLESCOPE_BINARY;
  std::string mpiexec = BUBBLESCOPE_MPIEXEC;
  std::vector<int> ranks = {128, 512, 1024};
  std::vector<int> processes = {1, 2, 4};
  int iterations = 3;
  int microbatches = 8;
  app.add_option("--dir", directory, "Where the jobs, digests and reports go")
      ->capture_default_str();
  app.add_option("--bubblescope", bubblescope, "The bubblescope to run")->capture_default_str();
  app.add_option("--mpiexec", mpiexec, "mpiexec for --mpi (empty: skip)")->capture_default_str();
  app.add_option("--ranks", ranks, "Job sizes, multiples of 8")->delimiter(',');
  app.add_option("--processes", processes, "Process counts for --mpi")->delimiter(',');
  app.add_option("--iterations", iterations, "Profiler steps per job")->capture_default_str();
  app.add_option("--microbatches", microbatches, "Microbatches per step")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  fs::create_directories(directory);

  int failures = 0;
  for (const int size : ranks) {
    const std::string job = directory + "/job" + std::to_string(size);
    const std::string digests = job + ".digests";
    std::printf(
        "%d ranks (%d pipelines x %d stages, DP replicas), %d iterations of %d "
        "microbatches\n",
        size, size / kStages, kStages, iterations, microbatches);
    if (!fs::exists(job + "/truth.json")) {
      const Run made = Execute(
          {bubblescope, "simulate", "-o", job, "--force", "--data-parallel",
           std::to_string(size / kStages), "--stages", std::to_string(kStages), "--microbatches",
           std::to_string(microbatches), "--iterations", std::to_string(iterations), "--dp-sync-us",
           "500", "--jitter", "0.02", "--ranks-per-host", "8"},
          job + ".simulate.log");
      PrintRun("simulate", made, 0);
      if (!made.ok) {
        ++failures;
        continue;
      }
    }
    const double trace_mb = static_cast<double>(DirectoryBytes(job, ".json")) / kMB;
    fs::remove_all(digests);
    const Run digested =
        Execute({bubblescope, "digest", job, "-o", digests, "-j", "1"}, job + ".digest.log");
    const double digest_mb = static_cast<double>(DirectoryBytes(digests, ".bsdigest")) / kMB;
    std::printf("  traces %.1f MB (%.2f MB a rank); digests %.2f MB: %.1fx smaller\n", trace_mb,
                trace_mb / size, digest_mb, digest_mb > 0 ? trace_mb / digest_mb : 0.0);
    PrintRun("digest (-j 1)", digested, trace_mb);
    const Run from_traces =
        Execute({bubblescope, "analyze", job, "--format", "json", "-o", job + ".json", "-j", "1"},
                job + ".analyze.log");
    PrintRun("analyze traces (-j 1)", from_traces, trace_mb);
    const Run reduced = Execute(
        {bubblescope, "analyze", digests, "--format", "json", "-o", digests + ".json", "-j", "1"},
        job + ".reduce.log");
    PrintRun("analyze digests = reduce (-j 1)", reduced, trace_mb);
    const bool same =
        digested.ok && from_traces.ok && reduced.ok &&
        !FromPipelines(ReadAll(job + ".json")).empty() &&
        FromPipelines(ReadAll(job + ".json")) == FromPipelines(ReadAll(digests + ".json"));
    std::printf("  report from digests = report from traces (from \"pipelines\" on): %s\n",
                same ? "yes" : "NO");
    failures += same ? 0 : 1;
    if (size != ranks.back() || mpiexec.empty()) continue;
    for (const int count : processes) {
      const std::string report = job + ".mpi" + std::to_string(count) + ".json";
      const std::string peaks = report + ".peak-rss";
      const Run spread =
          Execute({mpiexec, "--oversubscribe", "-np", std::to_string(count),
                   fs::absolute(argv[0]).string(), "--peak-rss-of", peaks, bubblescope, "analyze",
                   "--mpi", job, "--format", "json", "-o", report, "-j", "1"},
                  report + ".log");
      const std::string label = "analyze --mpi, " + std::to_string(count) + " processes";
      PrintRun(label.c_str(), spread, trace_mb);
      std::printf("    peak RSS per process: %s\n", ProcessPeaks(peaks, count).c_str());
      const bool identical = spread.ok && ReadAll(report) == ReadAll(job + ".json");
      std::printf("    the whole JSON report equals one process's: %s\n", identical ? "yes" : "NO");
      failures += identical ? 0 : 1;
    }
  }
  return failures == 0 ? 0 : 1;
}
