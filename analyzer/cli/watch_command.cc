#include "cli/watch_command.h"

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "cli/job_input.h"
#include "common/output_file.h"
#include "report/openmetrics.h"
#include "report/watch_lines.h"
#include "watch/alerts.h"
#include "watch/job_follower.h"

namespace bubblescope {
namespace {

constexpr char kWatchFooter[] = R"(
DIR is the folder a running job writes its traces into: the files `bubblescope record` writes
(each rank's JSON array, grown as the job runs; `record --live` writes each step as it ends), or
torch.profiler's file per rank per cycle (tensorboard_trace_handler with schedule(repeat=0)).
Each pipeline iteration is reported once it is complete on every rank of its pipeline, about
one iteration after it ended: one line per iteration per pipeline (step, bubble, the bubble
above what the schedule leaves by itself, latency, slowest stage, top cause). Memory holds a few
iterations per rank whatever the job's length (docs/watch.md).

Examples:
  bubblescope watch /scratch/job42/trace
  bubblescope watch --format jsonl --prometheus /var/lib/node_exporter/bubble.prom runs/
  bubblescope watch --alert-bubble 0.35 --alert-for 5 --on-alert 'scripts/page.sh' runs/
  bubblescope watch --once runs/            # what is there now, then exit

Exit status: 0 the folder was followed to its end (--once, --idle-exit, or every file closed);
1 an alert fired (without --on-alert), or the metrics file could not be written; 2 usage error,
a folder that cannot be read, or (with --once) a file that is not a readable trace.
)";

int64_t UnixNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Runs the --on-alert command once, through the shell, with the alert in its environment.
void RunOnAlert(const std::string& command, const std::string& line, std::ostream& err) {
  ::setenv("BUBBLESCOPE_ALERT", line.c_str(), 1);
  const int status = std::system(command.c_str());
  if (status != 0) {
    err << "bubblescope watch: --on-alert command exited with status "
        << (WIFEXITED(status) ? WEXITSTATUS(status) : status) << "\n";
  }
}

// One JSON line, or (for a figure JSON cannot hold, a NaN) the error; false after an error.
bool PrintJsonLine(const absl::StatusOr<std::string>& line, std::ostream& out, std::ostream& err) {
  if (!line.ok()) {
    err << "bubblescope watch: " << MessageLine(line.status()) << "\n";
    return false;
  }
  out << *line << "\n";
  return true;
}

}  // namespace

CLI::App* WatchCommand::Define(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "watch", "Follow a running job's trace folder and report each pipeline iteration's bubble");
  command->footer(kWatchFooter);
  command->add_option("DIR", dir_, "The folder the job writes its per-rank traces into")
      ->required();
  command->add_flag("--once", once_,
                    "Analyse what the folder holds now, report every complete iteration, exit");
  command->add_option("--format", format_, "text (one line per iteration) or jsonl")
      ->check(CLI::IsMember({"text", "jsonl"}))
      ->capture_default_str();
  command
      ->add_option("--prometheus", prometheus_,
                   "Keep FILE the OpenMetrics text of the newest iteration of each pipeline, "
                   "replaced whole after each (for node_exporter's textfile collector: *.prom)")
      ->type_name("FILE");
  command->add_option("--interval-ms", interval_ms_, "How often to look at the folder")
      ->check(WholeNumberAtLeast(10))
      ->capture_default_str();
  command
      ->add_option("--idle-exit", idle_exit_s_,
                   "Exit once nothing new has reached the folder for this long, counted from the "
                   "first file it gives (0: never)")
      ->type_name("SECONDS")
      ->check(FiniteNumberBetween(0, 1e9))
      ->capture_default_str();
  command
      ->add_option("--alert-bubble", alert_bubble_,
                   "Alert when the bubble fraction is above F (0..1) --alert-for iterations "
                   "in a row")
      ->type_name("F")
      ->check(FiniteNumberBetween(0, 1));
  command
      ->add_option("--alert-excess", alert_excess_,
                   "Alert when the bubble above the schedule's own is above F (0..1)")
      ->type_name("F")
      ->check(FiniteNumberBetween(0, 1));
  command
      ->add_option("--alert-latency", alert_latency_ms_,
                   "Alert when an iteration takes longer than MS milliseconds")
      ->type_name("MS")
      ->check(FiniteNumberBetween(0, 1e12));
  command->add_option("--alert-for", alert_for_, "Iterations in a row an alert needs")
      ->check(WholeNumberAtLeast(1))
      ->capture_default_str();
  command
      ->add_option("--on-alert", on_alert_,
                   "Run CMD (through /bin/sh, once per alert, with BUBBLESCOPE_ALERT set to "
                   "the alert's line) and keep watching, instead of exiting with status 1")
      ->type_name("CMD");
  command
      ->add_option("-j,--jobs", jobs_,
                   "Threads that analyse each window of iterations; 0 = one per core")
      ->check(WholeNumberAtLeast(0))
      ->capture_default_str();
  command
      ->add_option("--max-file-mb", max_file_mb_,
                   "The most trace text (after gzip) one file read whole may hold, in MiB")
      ->type_name("MB")
      ->check(WholeNumberAtLeast(1));
  return command;
}

int WatchCommand::Run(std::ostream& out, std::ostream& err) {
  if (!prometheus_.empty()) {
    if (const int status = CheckCommandOutputs({{"--prometheus", prometheus_}}, err);
        status != kExitOk) {
      return status;
    }
  }
  watch::FollowOptions options{.dir = dir_, .once = once_};
  options.max_file_bytes = int64_t{max_file_mb_} << 20;
  options.job.jobs = jobs_;
  watch::JobFollower follower(std::move(options));

  watch::AlertOptions alert_options;
  if (alert_bubble_ >= 0) alert_options.bubble_above = alert_bubble_;
  if (alert_excess_ >= 0) alert_options.excess_above = alert_excess_;
  if (alert_latency_ms_ >= 0) {
    alert_options.latency_above = static_cast<TimeNs>(alert_latency_ms_ * 1e6);
  }
  alert_options.for_iterations = alert_for_;
  if (absl::Status valid = watch::ValidateAlertOptions(alert_options); !valid.ok()) {
    err << "bubblescope watch: " << MessageLine(valid) << "\n";
    return kExitBadInput;
  }
  watch::AlertTracker alerts(alert_options);

  const bool jsonl = format_ == "jsonl";
  std::map<int32_t, watch::IterationReport> latest;  // by pipeline
  // --idle-exit counts from the last time the folder gave something, once it has given anything.
  std::optional<std::chrono::steady_clock::time_point> last_news;
  bool alerted = false;
  while (true) {
    const int64_t now = UnixNowNs();
    absl::StatusOr<watch::Polled> polled = follower.Poll(now);
    if (!polled.ok()) {
      err << "bubblescope watch: " << MessageLine(polled.status()) << "\n";
      return kExitBadInput;
    }
    for (const watch::WatchNotice& notice : polled->notices) {
      if (jsonl) {
        if (!PrintJsonLine(NoticeJson(notice), out, err)) return kExitFailure;
      } else {
        out << NoticeText(notice) << "\n";
      }
    }
    for (const watch::IterationReport& report : polled->iterations) {
      if (jsonl) {
        if (!PrintJsonLine(IterationJson(report), out, err)) return kExitFailure;
      } else {
        out << IterationText(report) << "\n";
      }
      latest[report.pipeline] = report;
      for (const watch::Alert& alert : alerts.Observe(report)) {
        const std::string line = AlertText(alert);
        if (jsonl) {
          if (!PrintJsonLine(AlertJson(alert), out, err)) return kExitFailure;
        } else {
          out << line << "\n";
        }
        out.flush();
        if (on_alert_.empty()) {
          alerted = true;
        } else {
          RunOnAlert(on_alert_, line, err);
        }
      }
    }
    out.flush();
    if (!polled->iterations.empty() && !prometheus_.empty()) {
      std::vector<watch::IterationReport> newest;
      for (const auto& [pipeline, report] : latest) newest.push_back(report);
      if (absl::Status written = WriteOutputFile(prometheus_, OpenMetricsText(newest));
          !written.ok()) {
        err << "bubblescope watch: --prometheus: " << MessageLine(written) << "\n";
        return kExitFailure;
      }
    }
    if (alerted) return kExitFailure;
    if (once_ || polled->all_finished) return kExitOk;
    const auto now_steady = std::chrono::steady_clock::now();
    if (polled->read_something || !polled->iterations.empty()) last_news = now_steady;
    if (idle_exit_s_ > 0 && last_news.has_value() &&
        now_steady - *last_news > std::chrono::duration<double>(idle_exit_s_)) {
      return kExitOk;
    }
    if (!polled->more_to_read) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms_));
  }
}

}  // namespace bubblescope
