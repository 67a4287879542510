// --jobs and --quiet on every verb that reads traces, and no progress line where stderr is not a
// terminal (here a pipe, as in CI logs and `2>file`): the report and stderr are the same with and
// without --quiet, and for any --jobs.
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope::testing {
namespace {

namespace fs = std::filesystem;

class ProgressCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    traces_ = (fs::path(dir_.path()) / "traces").string();
    // A 4-stage 1f1b job of 4 files: a pipeline for diff and gate to compare.
    const CommandResult simulated =
        Run({"simulate", "-o", traces_, "--schedule", "1f1b", "-p", "4", "-m", "8", "-k", "3"});
    ASSERT_EQ(simulated.exit_status, 0) << simulated.err;
  }

  CommandResult Run(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {BUBBLESCOPE_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }

  TempDir dir_;
  std::string traces_;
};

// What a progress line would leave in stderr: a carriage return or an escape sequence.
bool HasLineControl(const std::string& text) {
  return text.find('\r') != std::string::npos || text.find('\033') != std::string::npos;
}

TEST_F(ProgressCliTest, EveryVerbThatReadsTracesTakesJobsAndQuietAndDrawsNothingOnAPipe) {
  const std::string digests = (fs::path(dir_.path()) / "digests").string();
  const std::vector<std::vector<std::string>> verbs = {
      {"analyze", traces_},
      {"analyze", traces_, "--format", "json"},
      {"whatif", traces_},
      {"diff", traces_, traces_},
      {"gate", "--baseline", traces_, "--max-bubble-increase", "0.5", traces_},
  };
  for (const std::vector<std::string>& verb : verbs) {
    SCOPED_TRACE(verb[0] + " " + verb.back());
    const CommandResult plain = Run(verb);
    ASSERT_EQ(plain.exit_status, 0) << plain.err;
    EXPECT_FALSE(HasLineControl(plain.err)) << plain.err;
    for (const std::vector<std::string>& extra :
         std::vector<std::vector<std::string>>{{"--quiet"}, {"-q", "-j", "3"}, {"--jobs", "1"}}) {
      std::vector<std::string> args = verb;
      args.insert(args.end(), extra.begin(), extra.end());
      const CommandResult run = Run(args);
      ASSERT_EQ(run.exit_status, 0) << run.err;
      // The same report and the same notes: only a terminal would have seen a difference.
      EXPECT_EQ(run.out, plain.out);
      EXPECT_EQ(run.err, plain.err);
    }
  }
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{{}, {"--quiet", "-j", "2"}}) {
    std::vector<std::string> args = {"digest", traces_, "-o", digests, "--force"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandResult run = Run(args);
    ASSERT_EQ(run.exit_status, 0) << run.err;
    EXPECT_FALSE(HasLineControl(run.err)) << run.err;
  }
}

}  // namespace
}  // namespace bubblescope::testing
