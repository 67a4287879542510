// `bubblescope analyze PATH... [--format text|json] [-o FILE] [--jobs N] [--rank PATH=N]...
// [--strict] [--iteration-marker REGEX] [--layers-per-stage N,N,...] [--slow-link-threshold F]`:
// loads every rank's trace, summarises each rank, finds the job's pipelines in its p2p traffic,
// aligns each pipeline's clocks, measures its bubble and links, infers its shape and schedule,
// suggests a layer move when layer counts are given, and prints the report with its findings and
// the job summary.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/command.h"
#include "job/job.h"
#include "loader/trace_loader.h"

namespace CLI {
class Option;
}  // namespace CLI

namespace bubblescope {

// Parses one --rank argument "PATH=N" (split at the last '='; N a decimal rank id >= 0).
absl::StatusOr<RankOverride> ParseRankOverride(const std::string& text);

class AnalyzeCommand : public Command {
 public:
  explicit AnalyzeCommand(std::string tool_version);

  int Run(std::ostream& out, std::ostream& err) override;

 protected:
  CLI::App* Define(CLI::App& app) override;

 private:
  // The job driver's options from the flags.
  job::Options JobOptions() const;

  std::string tool_version_;
  std::vector<std::string> paths_;
  std::string format_ = "text";
  std::string output_path_;
  int jobs_ = 0;
  int32_t max_file_mb_ = 0;  // 0: the automatic reading budget
  std::vector<std::string> rank_args_;
  std::string record_run_;  // --run: one record run's files of several
  bool mix_record_runs_ = false;
  bool strict_ = false;
  std::string iteration_marker_;
  CLI::Option* iteration_marker_option_ = nullptr;  // tells an empty REGEX from none
  std::vector<int32_t> layers_per_stage_;
  double slow_link_threshold_ = link_stats::SlowOptions{}.threshold;
};

}  // namespace bubblescope
