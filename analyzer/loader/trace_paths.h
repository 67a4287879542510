// Expands the paths given on the command line into the list of trace files to read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"

namespace bubblescope {

// True for names ending in ".json" or ".json.gz" (any case), which includes ".pt.trace.json", for
// digests, ".bsdigest" (docs/digest.md), and for Nsight Systems' SQLite exports, ".sqlite".
bool IsTraceFileName(std::string_view name);

// True for Nsight Systems reports (".nsys-rep", and ".qdrep" as releases before 2021.4 named
// them): only nsys reads them, so bubblescope reads their SQLite export instead.
bool IsNsightReportName(std::string_view name);

// Each path that is a directory contributes its regular files (not recursively) whose names are
// trace file names, sorted by name; any other path is kept as given (a missing file is reported
// when it is read). An entry with a trace file name that is not a regular file (a FIFO, a
// device, a socket, a directory, a symlink to nothing) is passed over and added to `skipped`
// with the reason, so the report can say so. Errors: "<dir>: no trace files (*.json,
// *.json.gz, *.bsdigest, *.sqlite)", "<dir>: <strerror>" when the directory cannot be listed, and
// an empty `paths`. An Nsight report given, or each of a directory holding reports and no trace,
// is replaced by its SQLite export, which nsys writes into bubblescope's cache
// (loader/nsys_export.h); without nsys on PATH, or where it fails, that is the error.
// A directory with no trace file whose subfolders hold some (a folder of trace sets) is named in
// the error with the sets and how to name one; where its files may still be no traces (a
// provenance.json), the same words go to `trace_sets_below`, for the loader to add when none is.
struct TraceFile {
  std::string path;
  bool from_directory = false;  // found by listing a directory, not named by the user
};
absl::StatusOr<std::vector<TraceFile>> ExpandTracePaths(const std::vector<std::string>& paths,
                                                        std::vector<SkippedFile>* skipped,
                                                        std::string* trace_sets_below = nullptr);

}  // namespace bubblescope
