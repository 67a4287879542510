// Counters of what an importer skipped or repaired. A damaged event inside a readable file never
// stops the import: it bumps one of these named counters, and every report shows the non-zero
// ones with their severity. Only a file that is not a trace at all is an error (absl::Status).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace bubblescope {

enum class Severity : uint8_t { kInfo, kWarning, kError };

std::string_view SeverityName(Severity severity);

enum class ImportCounter : uint8_t {
  kEventNotObject,     // an element of traceEvents that is not a JSON object
  kMissingField,       // an event lacks a field its phase needs (ts, dur, name, ...)
  kWrongFieldType,     // a field has the wrong JSON type (e.g. "ts": "soon")
  kNegativeDuration,   // "dur" < 0
  kBadNumber,          // a timestamp or duration that does not fit int64 nanoseconds
  kBadId,              // a rank/device/group id or world size not fitting int32; a bad run id
  kTimeOutOfRange,     // a time outside the model's ±146 years (kMaxTimeNs)
  kUnknownPhase,       // "ph" we do not model (counted, harmless)
  kIgnoredCategory,    // a category we do not model (counted, harmless)
  kBadMemorySample,    // a [memory] instant event without usable byte counts
  kUnmatchedFlow,      // an ac2g flow end that fills no missing correlation id
  kTruncated,          // the file was cut short; events after the cut are lost
  kUnterminatedArray,  // array form without its closing ']' (allowed by the Chrome format)
  kTrailingContent,    // content after the trace document ends: not read (a second document?)
  // What bubblescope's collector lost while recording (its "bubblescope_dropped" event): the
  // timeline itself has holes there, whatever the file's state.
  kCollectorDroppedRecords,     // activity records CUPTI dropped (no free buffer, buffer full)
  kCollectorRefusedBuffers,     // CUPTI buffer requests refused at the collector's memory cap
  kCollectorDroppedRanges,      // NVTX ranges beyond the collector's open-range limit
  kCollectorDroppedNcclEvents,  // NCCL events beyond the collector's live-event limit
  // An event bubblescope's Perfetto overlay added to a merged trace (idle intervals, op labels):
  // its own annotations, no part of the rank's timeline (readers/merged_trace.h).
  kOverlayEvent,
  // A ProfilerStep range in whose slot the rank recorded nothing (model/rank_finish.cc): dropped,
  // no iteration. Appended last, so digests written before it still read (digest_reader.cc).
  kEmptyProfilerStep,
  // Steps and times that cannot all be one run's (model/rank_finish.cc), appended after it: a
  // ProfilerStep number the rank already has; a step that begins before the one before it ends;
  // events timed from near zero beside events timed from the epoch.
  kDuplicateProfilerStep,
  kOverlappingProfilerStep,
  kMixedTimeBases,
  // A file cut before its baseTimeNanoseconds (Kineto writes it last) whose times are relative
  // to it: the rank's clock is unknown (readers/kineto_reader.cc).
  kUnknownClockBase,
  // A launch of device work (cudaLaunchKernel, ...) on a rank whose file records no device
  // activity at all (profiled without ProfilerActivity.CUDA): its CPU thread stands in for the
  // device, which is no measure of it (model/rank_finish.cc). One count per launch.
  kLaunchWithoutDeviceActivity,
  kCount,
};

inline constexpr size_t kImportCounterCount = static_cast<size_t>(ImportCounter::kCount);

struct ImportCounterSpec {
  std::string_view name;  // stable snake_case key used in text and JSON reports
  Severity severity;
  std::string_view description;
};

const ImportCounterSpec& CounterSpec(ImportCounter counter);

class ImportStats {
 public:
  // Counts one occurrence at byte `offset` of the source (the first offset is kept for messages).
  void Bump(ImportCounter counter, int64_t offset);
  // Counts one occurrence where no byte offset says where (a database's row): `where` names it
  // ("CUPTI_ACTIVITY_KIND_KERNEL row 12"), kept for the first occurrence.
  void BumpAt(ImportCounter counter, std::string where);
  // Counts `n` occurrences at once, the first (if it is the counter's first) at `offset`.
  void Add(ImportCounter counter, uint64_t n, int64_t offset);
  uint64_t count(ImportCounter counter) const { return counts_[Index(counter)]; }
  // Byte offset of the first occurrence, or -1 if none.
  int64_t first_offset(ImportCounter counter) const { return first_offsets_[Index(counter)]; }
  // Where the first occurrence counted by BumpAt lies; empty for the others.
  const std::string& first_where(ImportCounter counter) const {
    return first_wheres_[Index(counter)];
  }
  // True if any counter of at least `severity` is non-zero.
  bool HasAtLeast(Severity severity) const;
  void Merge(const ImportStats& other);

  // Free-text detail for the truncation warning (e.g. "cut inside an event at byte 1234").
  const std::string& truncation_detail() const { return truncation_detail_; }
  void set_truncation_detail(std::string detail) { truncation_detail_ = std::move(detail); }

 private:
  static size_t Index(ImportCounter counter) { return static_cast<size_t>(counter); }
  std::array<uint64_t, kImportCounterCount> counts_{};
  std::array<int64_t, kImportCounterCount> first_offsets_ = MakeUnset();
  std::array<std::string, kImportCounterCount> first_wheres_;
  std::string truncation_detail_;

  static constexpr std::array<int64_t, kImportCounterCount> MakeUnset() {
    std::array<int64_t, kImportCounterCount> a{};
    a.fill(-1);
    return a;
  }
};

}  // namespace bubblescope
