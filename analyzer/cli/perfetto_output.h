// What `analyze --perfetto FILE [--perfetto-pipelines LIST] [--perfetto-ranks LIST]` does once
// the job is analysed (docs/perfetto.md): the ranks chosen, checked before any report is
// written, and the merged trace written rank by rank through the one output writer,
// gzip-compressed for a .gz name.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "cli/job_input.h"
#include "common/output_file.h"

namespace bubblescope {

// The flags as given; empty lists limit nothing.
struct PerfettoRequest {
  std::string path;
  std::string pipelines;
  std::string ranks;
};

// The indices of the ranks `request` keeps into *ranks (none when no path is asked for);
// returns the exit status, after one line naming the flag when a choice is not in the job.
int ChooseMergedRanks(const PerfettoRequest& request, const LoadedJob& loaded, std::ostream& err,
                      std::vector<size_t>* ranks);

// Writes the merged trace of `ranks` to `path` under `options`; returns the exit status, after
// one line on `err` when it could not be written, and a note of the events left out.
int WriteMergedTrace(const std::string& path, const LoadedJob& loaded,
                     const std::vector<size_t>& ranks, const OutputFileOptions& options,
                     std::ostream& err);

}  // namespace bubblescope
