// Runs a piece of work in a forked child so its peak memory can be measured on its own
// (wait4's ru_maxrss) and nothing it allocates stays in the parent.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace bubblescope::bench {

struct ChildResult {
  std::string output;  // what the work returned, passed back through a pipe
  int64_t max_rss_bytes = 0;
  double cpu_seconds = 0;            // user + system time of the child (all its threads)
  double system_seconds = 0;         // of which in the kernel
  int64_t minor_faults = 0;          // pages the kernel had to map in (ru_minflt)
  int64_t involuntary_switches = 0;  // times the child was preempted (ru_nivcsw): a busy machine
};

// `work` returns its report text, or an error (which becomes this call's error). Fork before
// the parent holds anything large: a child's peak RSS starts from the pages it inherits.
absl::StatusOr<ChildResult> RunInChild(const std::function<absl::StatusOr<std::string>()>& work);

}  // namespace bubblescope::bench
