// Reads an Nsight Systems report exported as SQLite (`nsys export --type sqlite`) into the
// timeline model: one Rank per profiled process that ran CUDA work (a report of a launcher that
// started every local rank holds several). What each table becomes is in docs/nsight-systems.md.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "readers/trace_reader.h"

namespace bubblescope {

struct NsysReadOptions {
  // The most bytes SQLite may cache for the file (its pages are read on demand).
  int64_t max_bytes = std::numeric_limits<int64_t>::max();
};

// Whether `head` (a file's first bytes) is an SQLite database: the format's 16-byte magic.
bool IsSqliteHead(std::string_view head);

// The file's ranks, each with source_path = `path`, sorted as the model requires. A rank's id is
// its rank in the largest NCCL communicator it created first (NCCL's payloads, exported with
// --include-blobs=true), else -1 for the loader to take from the file name or --rank; several
// processes without NCCL ids are numbered by the GPU each ran on (torchrun's LOCAL_RANK
// convention). Errors, one line naming `path`: not SQLite, SQLite of something else, a damaged
// database, no CUDA activity at all.
absl::StatusOr<std::vector<Rank>> ReadNsysSqlite(const std::string& path,
                                                 const NsysReadOptions& options);

// The seam's reader for Nsight Systems exports: claims SQLite files by their magic (the loader
// answers a report itself, .nsys-rep or .qdrep, with the nsys export command that makes it
// readable: loader/trace_paths.h).
class NsysTraceReader final : public TraceReader {
 public:
  std::string_view format_name() const override { return "nsys-sqlite"; }
  // An export is told by its content alone.
  bool Sniff(std::string_view head, std::string_view /*path*/) const override {
    return IsSqliteHead(head);
  }
  bool ReadsText() const override { return false; }  // SQLite opens the file itself
  absl::StatusOr<FileRanks> Read(const std::string& path, const ReaderOptions& options) override;
};

}  // namespace bubblescope
