// Writes a Rank as an Nsight Systems report exported to SQLite (`nsys export --type sqlite
// --include-blobs=true`, export schema 3.25), one file per rank as `nsys profile` run under each
// rank's launcher leaves them. What nsys records of a torch job is written; what it does not
// record is not: the profiler's GPU copies of user ranges, memory samples, torch's process-group
// descriptions and the NCCL arguments torch puts in Kineto's args. The NCCL calls appear as the
// NCCL library itself annotates them (NVTX domain "NCCL", with payloads naming the communicator,
// the size and the peer's rank in the communicator). Used by `bubblescope simulate --format nsys`
// and the tests that hold the Nsight reader to the Kineto one; never by an analysis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bubblescope/trace.h"

namespace bubblescope {

// The export schemas the writer can write, as the nsys releases of those years export them
// (docs/nsight-systems.md): 2022 (schema 2.9: EXPORT_META_DATA, no systemClockNs, no
// META_DATA_CAPTURE), 2024 (3.13: META_DATA_EXPORT with the time parameters and
// META_DATA_CAPTURE, no systemClockNs) and 2026 (3.25: systemClockNs too).
enum class NsysSchema { k2022, k2024, k2026 };

struct NsysWriteOptions {
  // NCCL's NVTX payloads (what --include-blobs=true exports); without them the NCCL ranges keep
  // only their names and times.
  bool nccl_payloads = true;
  // The UTC epoch time, in ns, that the rank's clock zero stands for: a time t of the rank is
  // exported so that the reader puts it at utc_of_zero_ns + t. 0: the rank's times are UTC epoch
  // times already (as the simulator's and Kineto's absolute times are).
  int64_t utc_of_zero_ns = 0;
  // How long before the rank's first event its nsys session started: event times are written
  // from the session's start, as nsys exports them, and the session's start on the UTC epoch
  // and on the host's own clock in TARGET_INFO_SESSION_START_TIME and ANALYSIS_DETAILS.
  int64_t session_lead_ns = 500'000'000;
  // Added to the lead for each rank id (one file per rank): rank r's session starts
  // session_lead_ns + r * session_lead_step_ns before its first event, as sessions of ranks
  // launched one after another do.
  int64_t session_lead_step_ns = 0;
  NsysSchema schema = NsysSchema::k2026;
  // The launcher's variables in the launched process's environment (META_DATA_CAPTURE):
  // torchrun's RANK, WORLD_SIZE and LOCAL_RANK, for a file of one rank with an id.
  bool environment = true;
};

// Writes `rank` to `path` (replaced when it exists; written beside it first, then renamed).
absl::Status WriteNsysSqlite(const Rank& rank, const NsysWriteOptions& options,
                             const std::string& path);

// Writes several ranks as the processes of one export, as one `nsys profile` around a launcher
// of every local rank leaves them: one clock (the ranks' times as they are), one host (the first
// rank's).
absl::Status WriteNsysSqlite(const std::vector<const Rank*>& ranks, const NsysWriteOptions& options,
                             const std::string& path);

}  // namespace bubblescope
