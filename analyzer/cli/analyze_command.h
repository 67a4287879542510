// `bubblescope analyze PATH... [--format text|json] [-o FILE] [--jobs N] [--rank PATH=N]...
// [--strict] [--iteration-marker REGEX] [--layers-per-stage N,N,...] [--slow-link-threshold F]
// [--html FILE] [--show-pipelines LIST] [--perfetto FILE] [--mpi]`:
// loads every rank's trace, summarises each rank, finds the job's pipelines in its p2p traffic,
// aligns each pipeline's clocks, measures its bubble and links, infers its shape and schedule,
// suggests a layer move when layer counts are given, and prints the report with its findings and
// the job summary; with --html, also the HTML report (report/html_report.h) into FILE; with
// --perfetto, also the merged, annotated trace to open in ui.perfetto.dev. Under mpirun or srun
// with --mpi, every process reads a share of the files and process 0 reports.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/job_input.h"
#include "distributed/mpi_world.h"
#include "job/job.h"

namespace bubblescope {

class AnalyzeCommand : public JobInputCommand {
 public:
  explicit AnalyzeCommand(std::string tool_version);

  int Run(std::ostream& out, std::ostream& err) override;

 protected:
  CLI::App* Define(CLI::App& app) override;

 private:
  // The one run that writes the report: a single process's, or process 0's of `world` (--mpi),
  // which tells the other processes whether to read and reads with them.
  int RunReporting(const distributed::MpiWorld* world, std::ostream& out, std::ostream& err);

  // The job driver's options from the flags (the iteration marker is JobInputCommand's).
  job::Options JobOptions() const;

  // The pipelines --show-pipelines names, into *picked; returns the exit status, after one line
  // naming the first the job lacks.
  int PickedPipelines(const job::Result& result, std::ostream& err,
                      std::vector<int32_t>* picked) const;
  // --perfetto-pipelines and --perfetto-ranks: the lists that limit the --perfetto trace.
  void DefinePerfettoLimits(CLI::App* analyze);
  // The indices of the ranks the --perfetto trace holds into *ranks (none asked for: none);
  // returns the exit status, after one line naming the flag when a choice is not in the job.
  int ChoosePerfettoRanks(const LoadedJob& loaded, std::ostream& err,
                          std::vector<size_t>* ranks) const;
  // Writes the Perfetto overlay of `ranks` to perfetto_path_, rank by rank, gzip-compressed for
  // a .gz name, never over an input or the report; returns the exit status.
  int WritePerfetto(const LoadedJob& loaded, const std::vector<size_t>& ranks,
                    std::ostream& err) const;

  std::string tool_version_;
  std::string perfetto_pipelines_;  // as given; empty: every pipeline
  std::string perfetto_ranks_;      // as given; empty: every rank
  std::string perfetto_path_;
  double slow_link_threshold_ = link_stats::SlowOptions{}.threshold;
  bool mpi_ = false;            // --mpi: one process of an MPI job (docs/scale.md)
  std::string show_pipelines_;  // --show-pipelines as given; empty: none
};

}  // namespace bubblescope
