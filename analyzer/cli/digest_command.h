// `bubblescope digest PATH... -o DIR [--force] [-j N] [--max-file-mb MB] [--rank PATH=N]...
// [--run ID | --mix-runs]`: reads the traces as `analyze` does, reduces every rank to what the
// analyses read (index/digest_reduction.h) and writes DIR/rank<r>.bsdigest per rank
// (docs/digest.md), printing each file, its size and how much smaller the digests are than the
// traces. `analyze` reads the digests (alone or with traces) to the same report.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/job_input.h"

namespace bubblescope {

// "rank<r>.bsdigest".
std::string DigestFileName(int32_t rank);

// Reads the traces `source` names, one rank at a time reduced as soon as it is read, and writes
// one digest per rank into `directory` (created). Without `force`, a digest already in the
// directory (one of this job's names, or another *.bsdigest that `analyze DIR` would read with
// them) is an error and nothing is written; with it, this job's are replaced and the other
// digests removed, so DIR holds exactly this job. Never writes over an input. Prints the files
// to `out`; returns kExitOk, kExitBadInput (unreadable input, digests in the way) or
// kExitFailure (a file could not be written).
int WriteDigests(const JobSource& source, const std::string& directory, bool force,
                 std::ostream& out, std::ostream& err);

class DigestCommand : public JobInputCommand {
 public:
  int Run(std::ostream& out, std::ostream& err) override;
  // Each reading thread holds one file: fewer of them, or the files spread over processes.
  std::string_view OutOfMemoryAdvice() const override {
    return "digest with fewer --jobs (each reading thread holds one file), or give each process "
           "or node a share of the files";
  }

 protected:
  CLI::App* Define(CLI::App& app) override;

 private:
  std::string directory_;
  bool force_ = false;
};

}  // namespace bubblescope
