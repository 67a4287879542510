// The heavy sweeps of address-space limits (ctest label `slow`, about a minute): a 1,024-rank job
// and a 36 MB trace under 16 limits each, from where nothing can be read to where the run
// completes. Each run completes or exits 2 with one line saying memory ran out or naming the
// reading budget, never a signal; the fast sweep is memory_limits_cli_test.cc.
#include <string>

#include "cli/compare_sets.h"
#include "cli/memory_limits.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::LimitsBetween;
using ::bubblescope::testing::SimulateRun;
using ::bubblescope::testing::SweepLimits;
using ::bubblescope::testing::SweepOutcome;
using ::bubblescope::testing::TempDir;

// 256 data-parallel copies of a 4-stage pipeline: 1,024 files, 43 MB (1,024-rank jobs aborted at
// 30-100 MB limits).
TEST(MemoryLimitsSlowTest, AThousandRankJobUnderEveryLimit) {
#ifdef BUBBLESCOPE_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#else
  TempDir dir;
  const std::string job = SimulateRun(
      dir, "job", {"--data-parallel", "256", "--microbatches", "4", "--iterations", "1"});
  for (const char* jobs : {"1", "4"}) {
    SCOPED_TRACE(std::string("-j ") + jobs);
    const SweepOutcome outcome =
        SweepLimits(LimitsBetween(30'000, 150'000, 16), std::string("analyze -j ") + jobs + " '" +
                                                            job + "' --format json -o /dev/null");
    EXPECT_GT(outcome.out_of_memory, 0);
    EXPECT_GT(outcome.completed, 0);
  }
#endif
}

// One 36 MB trace: it needs about 300 MB of address space.
TEST(MemoryLimitsSlowTest, ALargeTraceUnderEveryLimit) {
#ifdef BUBBLESCOPE_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#else
  TempDir dir;
  const std::string job =
      SimulateRun(dir, "job", {"--stages", "2", "--microbatches", "16", "--iterations", "400"});
  const SweepOutcome outcome =
      SweepLimits(LimitsBetween(40'000, 440'000, 16), "analyze -j 1 --max-file-mb 64 '" + job +
                                                          "/rank0.pt.trace.json' --format json "
                                                          "-o /dev/null");
  EXPECT_GT(outcome.out_of_memory, 0);
  EXPECT_GT(outcome.completed, 0);
#endif
}

}  // namespace
}  // namespace bubblescope
