// `bubblescope analyze PATH... [--format text|json] [-o FILE] [--jobs N] [--rank PATH=N]...
// [--strict]`: loads every rank's trace, summarises each rank and prints the report.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/command.h"
#include "loader/trace_loader.h"

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
  std::string tool_version_;
  std::vector<std::string> paths_;
  std::string format_ = "text";
  std::string output_path_;
  int jobs_ = 0;
  std::vector<std::string> rank_args_;
  bool strict_ = false;
};

}  // namespace bubblescope
