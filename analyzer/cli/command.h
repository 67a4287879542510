// One class per CLI verb. A command adds its subcommand and options to the application, and runs
// when the parsed command line selected it; main() only parses and dispatches.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/output_file.h"

namespace CLI {
class App;
}  // namespace CLI

namespace bubblescope {

// Exit statuses shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the work was done but its result could not be written
inline constexpr int kExitBadInput = 2;  // usage error, unreadable input, or a --strict rejection

// A status's message as one line, for stderr.
std::string MessageLine(const absl::Status& status);

// Writes a finished report to `out` (stdout); a reader that stops early (`| head`) is reported on
// `err` rather than killing bubblescope with SIGPIPE. Returns kExitOk or kExitFailure.
int PrintReport(const std::string& report, std::ostream& out, std::ostream& err);

// Checks all the output files of one command before any is written (common/output_file.h):
// kExitOk, or after printing one line, kExitBadInput when two name one file and kExitFailure
// when one cannot be written.
int CheckCommandOutputs(const std::vector<NamedOutput>& outputs, std::ostream& err);

// After an output file is written: "wrote PATH (WHAT)" on `err`, so a user finds what a run
// left; nothing under --quiet, nor for a device or FIFO (-o /dev/null), which is no file left.
void SayWritten(const std::string& path, std::string_view what, bool quiet, std::ostream& err);

// The name in `names` that `word` is most likely a typo of: the fewest single-letter edits
// (insert, delete, replace, or swap two neighbours), at most 2 and fewer than half of `word`'s
// letters; empty when none is that near. "anlyze" gives "analyze".
std::string NearestName(std::string_view word, const std::vector<std::string>& names);

class Command {
 public:
  virtual ~Command() = default;

  // Adds this verb as a subcommand of `app`, its options bound to members of the command.
  void Register(CLI::App& app) { subcommand_ = Define(app); }
  // True when the parsed command line named this verb.
  bool Selected() const;
  // Runs the parsed command; results go to `out`, diagnostics to `err`. Returns the exit status.
  virtual int Run(std::ostream& out, std::ostream& err) = 0;
  // What the user can do when this command runs out of memory past the readers (main's one line
  // says it after "out of memory; "); empty when there is nothing to suggest.
  virtual std::string_view OutOfMemoryAdvice() const { return {}; }

 protected:
  // Creates the subcommand on `app` and declares its options; returns the subcommand.
  virtual CLI::App* Define(CLI::App& app) = 0;

 private:
  CLI::App* subcommand_ = nullptr;
};

}  // namespace bubblescope
