// `bubblescope whatif PATH... [--microbatches N] [--schedule S] [--virtual-stages V]
// [--same-global-batch] [--layers-per-stage N,...] [--try-layers N,...] [--format text|json]
// [-o FILE] [--html FILE]`: reads a job's traces as analyze does, or the models in an analyze JSON
// report, and predicts, per pipeline, the iteration time, bubble and peak memory per stage of other
// configurations from the measured job (whatif/whatif.h), without writing a trace. With no
// candidate flag, it tries the useful ones (more microbatches, the other 1F1B flavour, ZB-H1).
// --html also writes the predictions and the bubble and memory against m chart as a page.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/job_input.h"

namespace CLI {
class Option;
}  // namespace CLI

namespace bubblescope {

class WhatIfCommand : public JobInputCommand {
 public:
  explicit WhatIfCommand(std::string tool_version);

  int Run(std::ostream& out, std::ostream& err) override;

 protected:
  CLI::App* Define(CLI::App& app) override;

 private:
  std::string tool_version_;
  int32_t microbatches_ = 0;    // 0: the measured m
  std::string schedule_;        // empty: the measured schedule
  int32_t virtual_stages_ = 0;  // 0: the measured v (2 when --schedule interleaved changes it)
  bool same_global_batch_ = false;
  std::vector<int32_t> try_layers_;  // empty: the measured split
};

}  // namespace bubblescope
