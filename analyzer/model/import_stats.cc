#include "bubblescope/import_stats.h"

namespace bubblescope {

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "unknown";
}

const ImportCounterSpec& CounterSpec(ImportCounter counter) {
  static constexpr std::array<ImportCounterSpec, kImportCounterCount> kSpecs = {{
      {"event_not_object", Severity::kError, "trace event that is not a JSON object"},
      {"missing_field", Severity::kError, "event without a field its phase needs"},
      {"wrong_field_type", Severity::kError, "event field of the wrong JSON type"},
      {"negative_duration", Severity::kError, "event with a negative duration"},
      {"bad_number", Severity::kError, "timestamp or duration outside int64 nanoseconds"},
      {"bad_id", Severity::kError,
       "rank, device or group id (or world size) outside 32 bits, a rank below 0 or a world "
       "size below 1 or either not whole, or a malformed record run id"},
      {"time_out_of_range", Severity::kError,
       "event time more than 146 years from the clock's zero (kMaxTimeNs)"},
      {"unknown_phase", Severity::kInfo, "event phase bubblescope does not model"},
      {"ignored_category", Severity::kInfo, "event category bubblescope does not model"},
      {"bad_memory_sample", Severity::kWarning, "[memory] event without usable byte counts"},
      {"unmatched_flow", Severity::kInfo, "ac2g flow that links no event"},
      {"truncated", Severity::kWarning, "file cut short; events after the cut are lost"},
      {"unterminated_array", Severity::kInfo, "array form without its closing ']'"},
      {"trailing_content", Severity::kWarning,
       "content after the end of the trace document (a second trace appended?); not read"},
      {"collector_dropped_records", Severity::kWarning,
       "kernel/copy records CUPTI dropped while recording; the timeline misses them"},
      {"collector_refused_buffers", Severity::kWarning,
       "CUPTI buffer requests refused at BUBBLESCOPE_BUFFER_MB; their records were dropped"},
      {"collector_dropped_ranges", Severity::kWarning,
       "NVTX ranges the collector could not track (too many open)"},
      {"collector_dropped_nccl_events", Severity::kWarning,
       "NCCL events the collector could not track (too many live)"},
      {"overlay_events", Severity::kInfo,
       "bubblescope's own overlay events in a merged trace (idle intervals, op labels); skipped"},
      {"empty_profiler_step", Severity::kInfo,
       "ProfilerStep range in which the rank recorded nothing (torch closes a profiler window "
       "the training loop left early with one); not an iteration"},
      {"duplicate_profiler_step", Severity::kWarning,
       "ProfilerStep number the rank already has (two profilers, or files of two runs joined?); "
       "iterations of one number are not one iteration"},
      {"overlapping_profiler_step", Severity::kWarning,
       "ProfilerStep range that begins before the one before it ends; iterations overlap"},
      {"mixed_time_bases", Severity::kWarning,
       "events timed from near zero beside events timed from the epoch in one rank (the fewer "
       "of the two counted); they cannot be on one clock"},
      {"unknown_clock_base", Severity::kError,
       "file cut before its baseTimeNanoseconds (Kineto writes it last), its times relative to "
       "that lost base: its clock is unknown, so it is kept off the other ranks' clock"},
      {"launch_without_device_activity", Severity::kWarning,
       "kernel launch (cudaLaunchKernel, ...) on a rank whose file records no device activity "
       "(profiled without ProfilerActivity.CUDA?): its CPU thread stands in for the device"},
  }};
  return kSpecs[static_cast<size_t>(counter)];
}

void ImportStats::Bump(ImportCounter counter, int64_t offset) {
  size_t i = Index(counter);
  if (counts_[i]++ == 0) first_offsets_[i] = offset;
}

void ImportStats::BumpAt(ImportCounter counter, std::string where) {
  const size_t i = Index(counter);
  if (counts_[i]++ == 0) first_wheres_[i] = std::move(where);
}

namespace {

// Counts come from the input too (a collector's dropped totals), so a sum stops at the largest
// count rather than wrapping to a small one.
uint64_t SaturatingSum(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

}  // namespace

void ImportStats::Add(ImportCounter counter, uint64_t n, int64_t offset) {
  if (n == 0) return;
  size_t i = Index(counter);
  if (counts_[i] == 0) first_offsets_[i] = offset;
  counts_[i] = SaturatingSum(counts_[i], n);
}

bool ImportStats::HasAtLeast(Severity severity) const {
  for (size_t i = 0; i < kImportCounterCount; ++i) {
    if (counts_[i] != 0 && CounterSpec(static_cast<ImportCounter>(i)).severity >= severity) {
      return true;
    }
  }
  return false;
}

void ImportStats::Merge(const ImportStats& other) {
  for (size_t i = 0; i < kImportCounterCount; ++i) {
    if (other.counts_[i] == 0) continue;
    if (counts_[i] == 0) {
      first_offsets_[i] = other.first_offsets_[i];
      first_wheres_[i] = other.first_wheres_[i];
    }
    counts_[i] = SaturatingSum(counts_[i], other.counts_[i]);
  }
  if (truncation_detail_.empty()) truncation_detail_ = other.truncation_detail_;
}

}  // namespace bubblescope
