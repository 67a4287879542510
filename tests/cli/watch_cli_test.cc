// `bubblescope watch` end to end: a live simulation (`simulate --live`) written while watch
// follows it, checked against `analyze` of the finished set: the lines, the metrics file, alerts.
#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using testing::CommandResult;
using testing::ReadFile;
using testing::RunCommand;
using testing::TempDir;

// A 4-stage 1F1B job whose stage 2 is 1.5x slower: (p-1)/(m+p-1) = 3/11 by its schedule, about
// 46% measured (its truth.json).
std::vector<std::string> SimulateLive(const std::string& dir, const std::string& layout,
                                      const std::string& iterations, const std::string& pace) {
  return {BUBBLESCOPE_BINARY,
          "simulate",
          "-o",
          dir,
          "-p",
          "4",
          "-m",
          "8",
          "-k",
          iterations,
          "--fwd-us",
          "1000,1000,1500,1000",
          "--bwd-us",
          "2000,2000,3000,2000",
          "--format",
          layout,
          "--live",
          pace};
}

// `bubblescope watch WATCH_ARGS... DIR` run beside a live simulation writing DIR (from before the
// folder exists); the simulation's result and the watch's.
struct LiveRun {
  CommandResult simulated;
  CommandResult watched;
};
LiveRun WatchLive(const std::string& traces, const std::string& layout,
                  const std::string& iterations, const std::string& pace,
                  std::vector<std::string> watch_args) {
  LiveRun run;
  std::thread job(
      [&] { run.simulated = RunCommand(SimulateLive(traces, layout, iterations, pace)); });
  watch_args.insert(watch_args.begin(), {BUBBLESCOPE_BINARY, "watch", "--interval-ms", "50"});
  watch_args.push_back(traces);
  run.watched = RunCommand(watch_args, 120);
  job.join();
  EXPECT_EQ(run.simulated.exit_status, 0) << run.simulated.err;
  return run;
}

// step -> "window_us,bubble_fraction" as each JSON text spells them.
using Figures = std::map<int64_t, std::string>;

Figures AnalyzeIterations(const std::string& dir, const std::string& cycle = "") {
  std::vector<std::string> argv = {BUBBLESCOPE_BINARY, "analyze", "--format", "json", dir};
  if (!cycle.empty()) argv.insert(argv.end(), {"--cycle", cycle});
  const CommandResult analyzed = RunCommand(argv);
  EXPECT_EQ(analyzed.exit_status, 0) << analyzed.err;
  // The report laid out on one line: outside strings, no white space.
  std::string compact;
  bool in_string = false;
  for (size_t i = 0; i < analyzed.out.size(); ++i) {
    const char c = analyzed.out[i];
    if (in_string && c == '\\') {
      compact += c;
      compact += analyzed.out[++i];
      continue;
    }
    if (c == '"') in_string = !in_string;
    if (in_string || (c != ' ' && c != '\n')) compact += c;
  }
  // Each {"step":N,"complete":true,"window_us":W,"bubble_fraction":B}.
  Figures figures;
  const std::string head = "{\"step\":";
  const std::string middle = ",\"complete\":true,\"window_us\":";
  const std::string tail = ",\"bubble_fraction\":";
  for (size_t at = compact.find(head); at != std::string::npos; at = compact.find(head, at + 1)) {
    const size_t step_end = compact.find(',', at);
    if (compact.compare(step_end, middle.size(), middle) != 0) continue;
    const size_t window = step_end + middle.size();
    const size_t window_end = compact.find(',', window);
    if (compact.compare(window_end, tail.size(), tail) != 0) continue;
    const size_t bubble = window_end + tail.size();
    const size_t bubble_end = compact.find('}', bubble);
    figures[std::stoll(compact.substr(at + head.size(), step_end - at - head.size()))] =
        compact.substr(window, window_end - window) + "," +
        compact.substr(bubble, bubble_end - bubble);
  }
  return figures;
}

struct WatchLines {
  Figures figures;
  std::vector<int64_t> steps;  // in the order reported
  std::vector<std::string> alerts;
  std::vector<std::string> notices;
};

WatchLines ParseJsonLines(const std::string& out) {
  const std::regex iteration(
      R"re("type":"iteration","pipeline":0,"step":(-?\d+),"bubble_fraction":([-0-9.e+]+),.*"window_us":([-0-9.e+]+),)re");
  WatchLines lines;
  std::istringstream stream(out);
  std::string line;
  while (std::getline(stream, line)) {
    std::smatch match;
    if (std::regex_search(line, match, iteration)) {
      const int64_t step = std::stoll(match[1]);
      lines.steps.push_back(step);
      lines.figures[step] = match[3].str() + "," + match[2].str();
    } else if (line.find("\"type\":\"alert\"") != std::string::npos) {
      lines.alerts.push_back(line);
    } else {
      lines.notices.push_back(line);
    }
  }
  return lines;
}

TEST(WatchCliTest, ALiveJobIsReportedIterationByIterationWithItsMetricsAndAnAlert) {
  TempDir dir;
  const std::string traces = dir.path() + "/traces";
  const std::string metrics = dir.path() + "/bubble.prom";
  const std::string alert_log = dir.path() + "/alerts.log";
  // Started beside the job, before its folder exists: watch waits for it.
  const CommandResult watched =
      WatchLive(traces, "array", "10", "0.15",
                {"--format", "jsonl", "--prometheus", metrics, "--alert-bubble", "0.40",
                 "--alert-for", "3", "--on-alert", "echo \"$BUBBLESCOPE_ALERT\" >> " + alert_log})
          .watched;
  ASSERT_EQ(watched.exit_status, 0) << watched.err << watched.out;

  const WatchLines lines = ParseJsonLines(watched.out);
  // Only that it waited for the job's folder.
  for (const std::string& notice : lines.notices) {
    EXPECT_NE(notice.find("does not exist yet: waiting for it"), std::string::npos) << notice;
  }
  // Every iteration once, in order, each with analyze's figures to the character.
  EXPECT_EQ(lines.steps, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const Figures expected = AnalyzeIterations(traces);
  ASSERT_EQ(expected.size(), 10u);
  EXPECT_EQ(lines.figures, expected);

  // The bubble (46%) is above 40% from the first iteration: the alert fires on the third, once,
  // and the command ran once with its line.
  ASSERT_EQ(lines.alerts.size(), 1u);
  EXPECT_NE(lines.alerts[0].find("\"rule\":\"bubble\",\"threshold\":0.4,\"iterations\":3,"
                                 "\"first_step\":0,\"last_step\":2"),
            std::string::npos)
      << lines.alerts[0];
  const std::string alerted = ReadFile(alert_log);
  EXPECT_TRUE(alerted.starts_with(
      "ALERT pipeline 0: bubble above 40.0% for 3 iterations in a row (steps 0-2: "))
      << alerted;
  EXPECT_EQ(std::count(alerted.begin(), alerted.end(), '\n'), 1);

  // The metrics file holds the last iteration's figures.
  const std::string prom = ReadFile(metrics);
  const std::string last_bubble = expected.at(9).substr(expected.at(9).find(',') + 1);
  EXPECT_NE(prom.find("bubblescope_pipeline_bubble_ratio{pipeline=\"0\"} " + last_bubble + "\n"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("bubblescope_pipeline_step{pipeline=\"0\"} 9\n"), std::string::npos);
  EXPECT_NE(
      prom.find("bubblescope_pipeline_ideal_bubble_ratio{pipeline=\"0\"} 0.2727272727272727\n"),
      std::string::npos);
  EXPECT_NE(prom.find("bubblescope_stage_compute_seconds{pipeline=\"0\",stage=\"2\",rank=\"2\"} "),
            std::string::npos);
  EXPECT_TRUE(prom.ends_with("# EOF\n"));
}

TEST(WatchCliTest, AnAlertWithoutACommandEndsTheWatchWithStatusOne) {
  TempDir dir;
  const std::string traces = dir.path() + "/traces";
  const CommandResult watched =
      WatchLive(traces, "array", "8", "0.1", {"--alert-excess", "0.1", "--alert-for", "2"}).watched;
  EXPECT_EQ(watched.exit_status, 1) << watched.err;
  // The excess (46% - 27.3% = 18.7 points) crosses 10 points from the first iteration: the
  // watch ends with the second iteration's line and the alert.
  EXPECT_NE(watched.out.find("step       1  bubble  46.0%  excess  +18.7 pts"), std::string::npos)
      << watched.out;
  EXPECT_NE(watched.out.find("ALERT pipeline 0: excess above +10.0 pts for 2 iterations in a row "
                             "(steps 0-1: "),
            std::string::npos)
      << watched.out;
  EXPECT_EQ(watched.out.find("step       2 "), std::string::npos);
}

TEST(WatchCliTest, TorchProfilerCycleFilesAreFollowedAsTheyAppear) {
  TempDir dir;
  const std::string traces = dir.path() + "/traces";
  const CommandResult watched =
      WatchLive(traces, "new", "5", "0.15", {"--format", "jsonl", "--idle-exit", "6"}).watched;
  ASSERT_EQ(watched.exit_status, 0) << watched.err;
  const WatchLines lines = ParseJsonLines(watched.out);
  EXPECT_EQ(lines.steps, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  // analyze reads one cycle (a step) at a time.
  Figures expected;
  for (int cycle = 1; cycle <= 5; ++cycle) {
    expected.merge(AnalyzeIterations(traces, std::to_string(cycle)));
  }
  EXPECT_EQ(lines.figures, expected);
}

TEST(WatchCliTest, BadUseIsOneLineAndStatusTwo) {
  TempDir dir;
  const CommandResult missing =
      RunCommand({BUBBLESCOPE_BINARY, "watch", "--once", dir.path() + "/nothing"});
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_NE(missing.err.find(dir.path() + "/nothing"), std::string::npos);
  const CommandResult bad_threshold =
      RunCommand({BUBBLESCOPE_BINARY, "watch", "--alert-bubble", "1.5", dir.path()});
  EXPECT_EQ(bad_threshold.exit_status, 2);
  const CommandResult empty = RunCommand({BUBBLESCOPE_BINARY, "watch", "--once", dir.path()});
  EXPECT_EQ(empty.exit_status, 2);
  EXPECT_EQ(empty.err, "bubblescope watch: " + dir.path() +
                           ": no trace files (*.json, *.json.gz, *.bsdigest, *.sqlite)\n");
  dir.Write("rank0.json", "not json at all");
  const CommandResult not_a_trace = RunCommand({BUBBLESCOPE_BINARY, "watch", "--once", dir.path()});
  EXPECT_EQ(not_a_trace.exit_status, 2) << not_a_trace.out;
  EXPECT_NE(not_a_trace.err.find(dir.path() + "/rank0.json: byte 0: "), std::string::npos)
      << not_a_trace.err;
}

}  // namespace
}  // namespace bubblescope
