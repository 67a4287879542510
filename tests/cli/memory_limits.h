// Runs of the built bubblescope under address-space limits (`ulimit -v`, in a shell of its own
// each), for the sweeps that check memory running out is always the one-line error
// (docs/input-errors.md, "Memory"), never a signal.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/subprocess.h"

namespace bubblescope::testing {

// What a sweep saw: runs that completed and runs that said memory ran out.
struct SweepOutcome {
  int completed = 0;
  int out_of_memory = 0;
};

// `arguments` (shell-quoted by the caller) under each limit of `limits_kb`. Every run exits 0,
// or 2 with one line that says memory ran out or names the reading budget; none is killed by a
// signal (an abort: "double free or corruption" when a hash table's growth threw).
inline SweepOutcome SweepLimits(const std::vector<int>& limits_kb, const std::string& arguments) {
  SweepOutcome outcome;
  for (int limit : limits_kb) {
    const CommandResult run = RunCommand({"/bin/bash", "-c",
                                          "ulimit -v " + std::to_string(limit) + " && exec '" +
                                              std::string(BUBBLESCOPE_BINARY) + "' " + arguments},
                                         300);
    SCOPED_TRACE(std::to_string(limit) + " kB: " + run.err);
    EXPECT_FALSE(run.signaled);
    if (run.exit_status == 0) {
      ++outcome.completed;
      continue;
    }
    EXPECT_EQ(run.exit_status, 2);
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1);
    EXPECT_THAT(run.err, ::testing::StartsWith("bubblescope: "));
    const bool said = run.err.find("out of memory") != std::string::npos ||
                      run.err.find("reading budget") != std::string::npos;
    EXPECT_TRUE(said);
    outcome.out_of_memory += said ? 1 : 0;
  }
  return outcome;
}

// From `low` to `high` kB in `steps` equal steps (both ends included).
inline std::vector<int> LimitsBetween(int low, int high, int steps) {
  std::vector<int> limits;
  for (int i = 0; i <= steps; ++i) limits.push_back(low + (high - low) * i / steps);
  return limits;
}

}  // namespace bubblescope::testing
