// `bubblescope analyze PATH... [--format text|json] [-o FILE] [--jobs N] [--rank PATH=N]...
// [--strict] [--iteration-marker REGEX] [--layers-per-stage N,N,...]`: loads every rank's trace, summarises each rank,
// measures the pipeline bubble (all ranks form one pipeline), infers the pipeline's shape and
// schedule, and prints the report with its findings.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/command.h"
#include "loader/trace_loader.h"
#include "report/pipeline_report.h"

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
  // Bubble, shape and findings of the one pipeline all ranks form. A shape that cannot be
  // inferred is reported, not an error; a bad --iteration-marker is InvalidArgument.
  absl::StatusOr<PipelineFigures> AnalyzePipeline(const Trace& trace) const;

  std::string tool_version_;
  std::vector<std::string> paths_;
  std::string format_ = "text";
  std::string output_path_;
  int jobs_ = 0;
  std::vector<std::string> rank_args_;
  bool strict_ = false;
  std::string iteration_marker_;
  CLI::Option* iteration_marker_option_ = nullptr;  // tells an empty REGEX from none
  std::vector<int32_t> layers_per_stage_;
};

}  // namespace bubblescope
