// `bubblescope simulate -o DIR [options]`: runs the pipeline schedule simulator
// and writes what the profilers of the simulated job would have recorded (one
// Kineto trace per rank) plus the job's truth.json (docs/simulator.md).
#pragma once

#include <ostream>

#include "cli/command.h"
#include "synth/simulate_options.h"

namespace bubblescope {

class SimulateCommand : public Command {
 public:
  int Run(std::ostream& out, std::ostream& err) override;

 protected:
  CLI::App* Define(CLI::App& app) override;

 private:
  sim::SimulateOptions options_;
};

}  // namespace bubblescope
