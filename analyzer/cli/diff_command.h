// `bubblescope diff A B [--format text|json] [-o FILE] [-j N] [--iteration-marker REGEX]`:
// compares two runs, each an analyze JSON report or traces analysed on the fly; pairs their
// pipelines by stage structure and prints the shape changes, then per pipeline and stage the
// bubble, latency, memory, F/B/W times, links and the findings that appeared or disappeared
// (docs/diff-and-gate.md).
#pragma once

#include <ostream>
#include <string>

#include "cli/compare_input.h"

namespace bubblescope {

class DiffCommand : public CompareCommand {
 public:
  explicit DiffCommand(std::string tool_version) : CompareCommand(std::move(tool_version)) {}

  int Run(std::ostream& out, std::ostream& err) override;

 protected:
  CLI::App* Define(CLI::App& app) override;

 private:
  std::string side_a_;
  std::string side_b_;
  std::string format_ = "text";
  std::string output_path_;
};

}  // namespace bubblescope
