// `bubblescope gate --baseline BASE CURRENT [--config FILE] [--max-bubble F]
// [--max-bubble-increase F] [--max-latency T] [--max-latency-increase P] [--max-memory B]
// [--max-memory-increase P] [--latency p50|p90|max] [--markdown FILE] [--junit FILE]`: checks the
// current run against the baseline and the thresholds; exit status 0 pass, 1 regression, 2 usage
// or input error (docs/diff-and-gate.md).
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/compare_input.h"

namespace bubblescope {

class GateCommand : public CompareCommand {
 public:
  explicit GateCommand(std::string tool_version) : CompareCommand(std::move(tool_version)) {}

  int Run(std::ostream& out, std::ostream& err) override;

 protected:
  CLI::App* Define(CLI::App& app) override;

 private:
  // A threshold flag: its key (the config file's too) and the text given, if any.
  struct ThresholdFlag {
    std::string key;
    std::string value;
    CLI::Option* option = nullptr;
  };

  std::string baseline_;
  std::string current_;
  std::string config_path_;
  std::vector<ThresholdFlag> threshold_flags_;
  std::string markdown_path_;
  std::string junit_path_;
};

}  // namespace bubblescope
