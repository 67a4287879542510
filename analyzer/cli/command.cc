#include "cli/command.h"

#include "CLI/CLI.hpp"
#include "text/one_line.h"

namespace bubblescope {

std::string MessageLine(const absl::Status& status) {
  const auto message = status.message();
  return text::OneLine(std::string_view(message.data(), message.size()));
}

bool Command::Selected() const { return subcommand_ != nullptr && subcommand_->parsed(); }

}  // namespace bubblescope
