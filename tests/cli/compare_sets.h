// Simulated runs for the `diff` and `gate` end-to-end tests: each a 4-stage 1F1B job on free
// links (so its bubble is the closed form (p-1)/(m+p-1) and its iteration (m+p-1)(F+B)), written
// by the built `bubblescope simulate` and, for a baseline, analysed into a JSON report.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope::testing {

// The flags every compared run shares (flag, value pairs): 4 stages, free links, 1 GiB of weights;
// the simulator's defaults give m = 8, F 1 ms and B 2 ms.
inline std::vector<std::string> BaseRunFlags() {
  return {"--stages", "4", "--link-gbps", "inf", "--link-latency-us", "0", "--weights-mb", "1024"};
}

// Simulates into `dir`/`name` with `flags` and those of BaseRunFlags() that `flags` does not
// give; returns the set's directory.
inline std::string SimulateRun(const TempDir& dir, const std::string& name,
                               const std::vector<std::string>& flags) {
  const std::string out = dir.path() + "/" + name;
  std::vector<std::string> argv = {BUBBLESCOPE_BINARY, "simulate", "-o", out};
  const std::vector<std::string> base = BaseRunFlags();
  for (size_t i = 0; i + 1 < base.size(); i += 2) {
    if (std::find(flags.begin(), flags.end(), base[i]) == flags.end()) {
      argv.insert(argv.end(), {base[i], base[i + 1]});
    }
  }
  argv.insert(argv.end(), flags.begin(), flags.end());
  CommandResult run = RunCommand(argv);
  EXPECT_EQ(run.exit_status, 0) << run.err;
  return out;
}

// Analyses `set` into `set`.json (analyze --format json -o); returns the report's path.
inline std::string AnalyzeToJson(const std::string& set) {
  const std::string report = set + ".json";
  CommandResult run =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", set, "--format", "json", "-o", report});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  return report;
}

// The lines of `text` that contain `needle`.
inline std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.find(needle) != std::string::npos) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

}  // namespace bubblescope::testing
