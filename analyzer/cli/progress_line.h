// The progress of a long load and analysis on a terminal: one line on stderr, rewritten in place
// as files are read (files done of the total, MB read, MB/s), then as the analysis goes (ranks
// indexed, pipelines analysed), and cleared when the work ends. Work that ends within the first
// seconds never shows it; output that is not a terminal (a file, a pipe, a CI log) never gets
// it, nor does a run with --quiet.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "job/job.h"
#include "loader/trace_loader.h"

namespace bubblescope {

// True when `stream` writes to this process's stderr and that is a terminal.
bool IsTerminalStderr(const std::ostream& stream);

// The line's text: "reading traces: 3 of 8 files, 165.2 of 448.9 MB, 98.3 MB/s".
std::string ProgressText(const LoadProgress& progress, double seconds);
// "analysing pipelines: 37 of 128".
std::string ProgressText(const job::Progress& progress);

class ProgressLine {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  static constexpr std::chrono::milliseconds kFirstShownAfter{2000};
  static constexpr std::chrono::milliseconds kRedrawnEvery{200};

  // Draws on `out` (which must outlive the line); `clock` tells the time (a test's own clock).
  explicit ProgressLine(std::ostream& out, Clock clock = std::chrono::steady_clock::now);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();  // clears the line if it was drawn

  // LoadOptions::progress: redraws the line when it is due.
  void Update(const LoadProgress& progress);
  // job::Options::progress: the same.
  void Update(const job::Progress& progress);
  // Erases the line (nothing to do when it was never drawn); later updates draw it again.
  void Clear();

 private:
  // Draws `text` when it is due: after the first seconds, not sooner than kRedrawnEvery after
  // the last time, and always for the `last` item of a stage.
  void Draw(const std::function<std::string(double seconds)>& text, bool last);

  std::ostream& out_;
  Clock clock_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_drawn_{};
  bool drawn_ = false;
};

// The LoadOptions::progress of a command: a ProgressLine on `err` when it is this process's
// terminal and the user did not ask for --quiet; nullptr otherwise.
std::unique_ptr<ProgressLine> ProgressLineFor(std::ostream& err, bool quiet);

}  // namespace bubblescope
