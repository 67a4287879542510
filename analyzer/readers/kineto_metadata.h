// The top-level members of a Kineto trace besides its events: the GPUs ("deviceProperties") and
// the job's distributed setup ("distributedInfo": rank, world size, backend, process groups); and
// the same facts as bubblescope's collector writes them, in the args of its process-metadata event.
#pragma once

#include <cstdint>
#include <string>

#include "bubblescope/trace.h"
#include "readers/rank_builder.h"
#include "simdjson.h"

namespace bubblescope::kineto {

// Each reader returns a simdjson error only for broken syntax; fields of the wrong type are
// counted (kWrongFieldType / kBadNumber) and skipped. The byte at `begin` is file offset `bias`.
simdjson::error_code ReadDeviceProperties(simdjson::ondemand::value& value, const char* begin,
                                          int64_t bias, Rank* rank);
simdjson::error_code ReadDistributedInfo(simdjson::ondemand::value& value, const char* begin,
                                         int64_t bias, Rank* rank, RankBuilder* builder);

// The args of the collector's "bubblescope_process" metadata event: "distributedInfo" and
// "deviceProperties" as above, plus "host" and "run_id" (text) and "pid" (integer).
simdjson::error_code ReadProcessMetadata(simdjson::ondemand::value& value, const char* begin,
                                         int64_t bias, Rank* rank, RankBuilder* builder);

// The running totals of the collector's "bubblescope_dropped" events seen so far in one file.
struct DroppedTotals {
  int64_t cupti_records = 0;
  int64_t buffer_requests = 0;
  int64_t nvtx_ranges = 0;
  int64_t nccl_events = 0;
};

// The args of one "bubblescope_dropped" event: each total that grew since `*seen` adds the
// growth to its collector_* import counter, so a file holding several such events (one per
// flush) counts every loss once.
simdjson::error_code ReadDroppedCounts(simdjson::ondemand::value& value, const char* begin,
                                       int64_t bias, Rank* rank, DroppedTotals* seen);

// The args of the collector's "bubblescope_cupti_unavailable" event: another profiler
// (torch.profiler's Kineto, Nsight Systems) held CUPTI while the file was recorded, so the
// collector recorded only what needs no CUPTI, NCCL transfers.
struct CuptiUnavailable {
  std::string held_by;       // the holder as CUPTI names it; empty when it did not say
  std::string not_recorded;  // the kinds lost, a comma list ("kernel,memcpy,...")
  std::string recorded;      // the kinds still recorded ("nccl", or empty)
};
simdjson::error_code ReadCuptiUnavailable(simdjson::ondemand::value& value, const char* begin,
                                          int64_t bias, Rank* rank, CuptiUnavailable* out);

// Why a file with that event holds nothing to analyze, as one line: who held CUPTI, what was
// lost, and what to do instead.
std::string CuptiUnavailableReason(const CuptiUnavailable& unavailable);

}  // namespace bubblescope::kineto
