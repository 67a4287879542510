// Makes an Nsight Systems report (.nsys-rep, .qdrep) readable: only nsys reads its reports, so
// where `nsys` is on PATH bubblescope runs `nsys export` itself, into a cache of its own, and reads
// the SQLite export it wrote (docs/nsight-systems.md, "Reports given as they are").
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace bubblescope {

// The `nsys export` command that writes the SQLite export bubblescope reads, with the export's
// name beside the report (what a user without nsys here runs elsewhere).
std::string NsightExportCommand(const std::string& report);

// The path of `report`'s SQLite export in bubblescope's cache, exported now unless the cache
// holds a current one. The cache is $XDG_CACHE_HOME/bubblescope/nsys (else
// $HOME/.cache/bubblescope/nsys); each report's export lies in a folder named by a hash of the
// report's absolute path, size and modification time (so a report changed since is exported
// again), under the report's own name with ".sqlite" (so a rank number in the name still names
// the rank). nsys writes a temporary file that is renamed into place only when it succeeded:
// two processes exporting the same report at once each write their own and the last rename
// wins, and an export cut short is never taken for one. Nothing is written beside the report.
// Errors, one line naming `report`: no nsys on PATH (with the export command to run elsewhere),
// no cache folder, nsys failing (its exit status and its stderr's last line).
absl::StatusOr<std::string> ExportNsightReport(const std::string& report);

}  // namespace bubblescope
