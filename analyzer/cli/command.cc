#include "cli/command.h"

#include "CLI/CLI.hpp"

namespace bubblescope {

bool Command::Selected() const { return subcommand_ != nullptr && subcommand_->parsed(); }

}  // namespace bubblescope
