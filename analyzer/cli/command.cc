#include "cli/command.h"

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <filesystem>
#include <system_error>

#include "CLI/CLI.hpp"
#include "text/one_line.h"

namespace bubblescope {

std::string MessageLine(const absl::Status& status) {
  const auto message = status.message();
  return text::OneLine(std::string_view(message.data(), message.size()));
}

int PrintReport(const std::string& report, std::ostream& out, std::ostream& err) {
  // The verbs that print reports start no process that could inherit the setting.
  std::signal(SIGPIPE, SIG_IGN);
  out << report << std::flush;
  if (!out) {
    err << "bubblescope: cannot write the report to standard output\n";
    return kExitFailure;
  }
  return kExitOk;
}

void SayWritten(const std::string& path, std::string_view what, bool quiet, std::ostream& err) {
  std::error_code error;
  if (quiet || !std::filesystem::is_regular_file(path, error)) return;
  err << "wrote " << text::OneLine(path) << " (" << what << ")\n";
}

namespace {

// Edits that turn `a` into `b`: inserts, deletes, replacements and swaps of two neighbours
// (the optimal string alignment distance), so a transposition typo ("whatfi") costs one.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t replace = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string NearestName(std::string_view word, const std::vector<std::string>& names) {
  constexpr size_t kMostEdits = 2;
  std::string nearest;
  size_t best = std::min(kMostEdits + 1, (word.size() + 1) / 2);
  for (const std::string& name : names) {
    const size_t distance = EditDistance(word, name);
    if (distance < best) {
      best = distance;
      nearest = name;
    }
  }
  return nearest;
}

int CheckCommandOutputs(const std::vector<NamedOutput>& outputs, std::ostream& err) {
  const absl::Status checked = CheckOutputs(outputs);
  if (checked.ok()) return kExitOk;
  err << "bubblescope: " << MessageLine(checked) << "\n";
  return absl::IsInvalidArgument(checked) ? kExitBadInput : kExitFailure;
}

bool Command::Selected() const { return subcommand_ != nullptr && subcommand_->parsed(); }

}  // namespace bubblescope
