// Memory running out at any point of a run is one line and exit 2, never a signal: a sweep of
// address-space limits over a small generated job, every limit from where nothing can start to
// where the run completes (seconds in all). The heavy sweeps (a large trace, a 1,024-rank job)
// are in memory_limits_slow_cli_test.cc.
#include <string>

#include "cli/compare_sets.h"
#include "cli/memory_limits.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::CommandResult;
using ::bubblescope::testing::LimitsBetween;
using ::bubblescope::testing::RunCommand;
using ::bubblescope::testing::SimulateRun;
using ::bubblescope::testing::SweepLimits;
using ::bubblescope::testing::SweepOutcome;
using ::bubblescope::testing::TempDir;
using ::testing::HasSubstr;

TEST(MemoryLimitsTest, ASmallJobUnderEveryLimitCompletesOrSaysMemoryRanOut) {
#ifdef BUBBLESCOPE_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#else
  TempDir dir;
  const std::string job = SimulateRun(dir, "job", {"--iterations", "40", "--microbatches", "16"});
  // Four files of 3.6 to 5 MB. Before the readers' hash tables were std ones, 44 and 58 MB
  // aborted with one thread, 58 and 66 to 76 MB with four ("double free or corruption").
  struct Sweep {
    const char* jobs;
    int lowest_kb;
    int highest_kb;
  };
  for (const Sweep& sweep : {Sweep{"1", 20'000, 80'000}, Sweep{"4", 40'000, 160'000}}) {
    SCOPED_TRACE(std::string("-j ") + sweep.jobs);
    const SweepOutcome outcome =
        SweepLimits(LimitsBetween(sweep.lowest_kb, sweep.highest_kb, 30),
                    // A budget of its own, so that every file is read and memory runs out wherever
                    // it happens to, not only where the automatic budget would refuse a file.
                    std::string("analyze --max-file-mb 64 -j ") + sweep.jobs + " '" + job +
                        "' --format json -o /dev/null");
    EXPECT_GT(outcome.out_of_memory, 0) << "no limit was low enough to run out";
    EXPECT_GT(outcome.completed, 0) << "no limit was high enough to complete";
  }
#endif
}

// The automatic budget names what fits: under an 80 MB address-space limit a 10 MB trace
// (which needs about 100 MB) is refused before it is read, naming a budget that, 9 bytes of
// address space a byte above the process's 32 MiB, fits the limit. The budget was the limit / 3
// (26 MiB): the file was read, memory ran out, and the message named that budget.
TEST(MemoryLimitsTest, TheReadingBudgetNamesWhatFits) {
#ifdef BUBBLESCOPE_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#else
  TempDir dir;
  const std::string job =
      SimulateRun(dir, "job", {"--stages", "2", "--microbatches", "16", "--iterations", "110"});
  const std::string trace = job + "/rank0.pt.trace.json";
  const CommandResult run =
      RunCommand({"/bin/bash", "-c",
                  "ulimit -v 80000 && exec '" + std::string(BUBBLESCOPE_BINARY) +
                      "' analyze -j 1 '" + trace + "' --format json -o /dev/null"},
                 120);
  ASSERT_FALSE(run.signaled) << run.err;
  EXPECT_EQ(run.exit_status, 2) << run.err;
  // (80,000 kB - 32 MiB) / 9 = 5.1 MiB.
  EXPECT_THAT(run.err, HasSubstr("more than 5 MiB of text, the reading budget per file"));
  // With room for it, the same file is read.
  const SweepOutcome roomy =
      SweepLimits({400'000}, "analyze -j 1 '" + trace + "' --format json -o /dev/null");
  EXPECT_EQ(roomy.completed, 1);
#endif
}

}  // namespace
}  // namespace bubblescope
