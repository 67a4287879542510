#include "cli/progress_line.h"

#include <unistd.h>

#include <iostream>
#include <memory>
#include <utility>

#include "absl/strings/str_format.h"

namespace bubblescope {
namespace {

// Moves to the start of the line and erases it (ANSI "erase in line", which every terminal
// emulator in use understands).
constexpr char kEraseLine[] = "\r\033[K";

}  // namespace

bool IsTerminalStderr(const std::ostream& stream) {
  return stream.rdbuf() == std::cerr.rdbuf() && isatty(STDERR_FILENO) == 1;
}

std::string ProgressText(const LoadProgress& progress, double seconds) {
  constexpr double kMB = 1e6;
  const double done_mb = static_cast<double>(progress.bytes_done) / kMB;
  return absl::StrFormat("reading traces: %d of %d files, %.1f of %.1f MB, %.1f MB/s",
                         progress.files_done, progress.files_total, done_mb,
                         static_cast<double>(progress.bytes_total) / kMB,
                         seconds > 0 ? done_mb / seconds : 0.0);
}

ProgressLine::ProgressLine(std::ostream& out, Clock clock)
    : out_(out), clock_(std::move(clock)), start_(clock_()) {}

ProgressLine::~ProgressLine() { Clear(); }

std::string ProgressText(const job::Progress& progress) {
  return absl::StrFormat("%s: %d of %d", std::string(progress.stage), progress.done,
                         progress.total);
}

void ProgressLine::Update(const LoadProgress& progress) {
  // The last file is always drawn, so the line ends on the whole count until it is cleared.
  Draw([&progress](double seconds) { return ProgressText(progress, seconds); },
       progress.files_done == progress.files_total);
}

void ProgressLine::Update(const job::Progress& progress) {
  Draw([&progress](double) { return ProgressText(progress); }, progress.done == progress.total);
}

void ProgressLine::Draw(const std::function<std::string(double seconds)>& text, bool last) {
  const std::chrono::steady_clock::time_point now = clock_();
  if (now - start_ < kFirstShownAfter) return;
  if (drawn_ && now - last_drawn_ < kRedrawnEvery && !last) return;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  out_ << kEraseLine << text(seconds) << std::flush;
  drawn_ = true;
  last_drawn_ = now;
}

void ProgressLine::Clear() {
  if (!drawn_) return;
  out_ << kEraseLine << std::flush;
  drawn_ = false;
}

std::unique_ptr<ProgressLine> ProgressLineFor(std::ostream& err, bool quiet) {
  if (quiet || !IsTerminalStderr(err)) return nullptr;
  return std::make_unique<ProgressLine>(err);
}

}  // namespace bubblescope
