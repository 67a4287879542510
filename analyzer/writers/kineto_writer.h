// Writes a Rank back out as PyTorch profiler / Kineto Chrome-trace JSON, in the layouts real torch
// versions produce. Used to write simulated sets (simulated_set.h: `bubblescope simulate`, the
// benchmark, the tests) and by round-trip tests of the reader; never by an analysis.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "bubblescope/trace.h"

namespace bubblescope {

enum class KinetoLayout {
  // Newer torch: object form, "baseTimeNanoseconds", "ts" relative in µs with a ns fraction.
  kRelativeWithBase,
  // Older torch / Kineto: object form, absolute integer-or-fraction µs timestamps.
  kAbsoluteMicros,
  // Bare array form `[ {...}, ... ]` (torch without Kineto writes this), absolute µs.
  kBareArray,
};

struct KinetoWriteOptions {
  KinetoLayout layout = KinetoLayout::kRelativeWithBase;
  bool distributed_info = true;  // write distributedInfo {rank, world_size, backend}
  bool nccl_args = true;         // write NCCL metadata args on communication kernels
  bool close_array = true;       // kBareArray only: false leaves the closing ']' off
  // kRelativeWithBase only: the "baseTimeNanoseconds" every "ts" is relative to. Unset: the
  // earliest timestamp in the rank, so every "ts" is >= 0 as in real files.
  std::optional<TimeNs> base_time_ns;
  // Adds the bulky args real traces carry and no analysis needs (cpu_op: "External id", "Ev Idx",
  // "Input Dims", "Input type", "Sequence number"; kernels: launch geometry and occupancy), so
  // generated files weigh per event what real ones do.
  bool bulk_args = false;
  // kBareArray only: write CPU ops, CPU annotations and profiler steps as torch's autograd
  // profiler without Kineto did: no "cat", the string pid "CPU functions", and "ts" counted from
  // the rank's own first event (each rank its own zero).
  bool legacy_cpu_functions = false;
  int gzip_level = -1;  // zlib level for ".gz" paths; -1 = zlib's default
};

// Serialises `rank` (with its names, comm metadata, annotations, steps and memory samples).
std::string KinetoJson(const Rank& rank, const KinetoWriteOptions& options);

// A rank's file in the bare-array layout written in pieces while its job runs, as bubblescope's
// collector writes one (docs/collector.md): "[", the rank's metadata events, then its events a
// slice at a time, then "\n]\n"; one event a line, ",\n" between two. Each piece ends after a
// complete event, so the file read between two pieces is a legal unterminated array. Every "ts"
// is written as the whole rank's file writes it, whatever slice it comes in.
class EventText;
class KinetoArrayPieces {
 public:
  // `rank` is the whole rank (its metadata, the time origin); options.layout is taken as
  // kBareArray. `rank` must outlive this.
  KinetoArrayPieces(const Rank& rank, const KinetoWriteOptions& options);
  ~KinetoArrayPieces();
  KinetoArrayPieces(const KinetoArrayPieces&) = delete;
  KinetoArrayPieces& operator=(const KinetoArrayPieces&) = delete;

  // "[" and the metadata events of the rank's threads and streams: the file's first write.
  std::string Head();
  // The events of `slice` (a part of the rank: its names, comms and groups, some of its events),
  // each after its separator.
  std::string Events(const Rank& slice);
  // The closing bracket: the file's last write.
  static std::string Tail();

 private:
  const Rank& rank_;
  KinetoWriteOptions options_;
  TimeNs earliest_ = 0;
  TimeNs offset_ = 0;
  std::string text_;                   // the piece being written
  std::unique_ptr<EventText> events_;  // appends to text_; keeps the separators across pieces
};

// Writes KinetoJson to `path`; gzip-compressed when the path ends in ".gz".
absl::Status WriteKinetoFile(const Rank& rank, const KinetoWriteOptions& options,
                             const std::string& path);

}  // namespace bubblescope
