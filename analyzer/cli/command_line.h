// The whole `bubblescope` command line behind one call: what main() runs on the process's
// arguments and streams, and what the Python module runs for its verbs (whatif, diff, gate,
// digest, simulate) on streams of its own, so both say and do exactly the same.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace bubblescope {

// Parses `args` (the words after the program's name), runs the verb they select with its
// results on `out` and its diagnostics on `err`, and returns the exit status (command.h). A parse
// error is one line and a hint on `err`, status 2; so is running out of memory past the readers,
// which also sets *out_of_memory when given. `version` is what --version and the reports name.
int RunCommandLine(const std::vector<std::string>& args, const std::string& version,
                   std::ostream& out, std::ostream& err, bool* out_of_memory = nullptr);

}  // namespace bubblescope
