#include "cli/command.h"

#include <csignal>

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

int CheckCommandOutputs(const std::vector<NamedOutput>& outputs, std::ostream& err) {
  const absl::Status checked = CheckOutputs(outputs);
  if (checked.ok()) return kExitOk;
  err << "bubblescope: " << MessageLine(checked) << "\n";
  return absl::IsInvalidArgument(checked) ? kExitBadInput : kExitFailure;
}

bool Command::Selected() const { return subcommand_ != nullptr && subcommand_->parsed(); }

}  // namespace bubblescope
