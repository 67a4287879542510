// `bubblescope watch DIR [--once] [--format text|jsonl] [--prometheus FILE] [alerts]`: follows a
// folder that a running job writes its traces into and reports each pipeline iteration once it
// is complete on every rank of the pipeline (watch/job_follower.h, docs/watch.md).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "cli/command.h"

namespace bubblescope {

class WatchCommand : public Command {
 public:
  int Run(std::ostream& out, std::ostream& err) override;

 protected:
  CLI::App* Define(CLI::App& app) override;

 private:
  std::string dir_;
  bool once_ = false;
  std::string format_ = "text";
  std::string prometheus_;
  int32_t interval_ms_ = 1000;
  double idle_exit_s_ = 0;
  double alert_bubble_ = -1;
  double alert_excess_ = -1;
  double alert_latency_ms_ = -1;
  int32_t alert_for_ = 1;
  std::string on_alert_;
  int32_t jobs_ = 1;
  int32_t max_file_mb_ = 0;
};

}  // namespace bubblescope
