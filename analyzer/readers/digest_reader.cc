#include "readers/digest_reader.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bubblescope/rank_finish.h"
#include "common/digest_format.h"
#include "common/out_of_memory.h"
#include "common/status_macros.h"

#define ZLIB_CONST
#include <zlib.h>

namespace bubblescope::digest {
namespace {

// Deflate cannot expand data by more than about 1032:1, which bounds a believable size field.
constexpr uint64_t kMaxDeflateRatio = 1032;

absl::Status FileError(const std::string& path, size_t offset, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": byte ", offset, ": ", what));
}

// The payload, read field by field in the writer's order. The first failure sticks: later reads
// return zeros and the decoder checks ok() where a bad value could do harm (before allocating,
// indexing or storing).
class PayloadReader {
 public:
  // `stream_at`: where the compressed stream starts in the file, the byte errors name.
  PayloadReader(std::string_view data, const std::string& path, size_t stream_at)
      : data_(data), path_(path), stream_at_(stream_at) {}

  bool ok() const { return status_.ok(); }
  absl::Status status() const { return status_; }
  size_t offset() const { return pos_; }
  bool AtEnd() const { return pos_ == data_.size(); }

  void Fail(const std::string& what) {
    if (ok()) {
      status_ = FileError(path_, stream_at_, absl::StrCat("inflated byte ", pos_, ": ", what));
    }
  }

  uint64_t Unsigned() {
    uint64_t value = 0;
    if (ok() && !GetVarint(data_, &pos_, &value)) Fail("a number runs past the data or 64 bits");
    return ok() ? value : 0;
  }
  int64_t Signed() { return UnZigZag(Unsigned()); }
  // A signed value that must fit an int32 (ids, ranks, device numbers).
  int32_t Int32(const std::string& what) {
    const int64_t value = Signed();
    if (value < INT32_MIN || value > INT32_MAX) Fail(absl::StrCat(what, " does not fit 32 bits"));
    return ok() ? static_cast<int32_t>(value) : 0;
  }
  // previous + a delta, which must stay within the model's time range.
  TimeNs Time(TimeNs previous) {
    const int64_t delta = Signed();
    const std::optional<TimeNs> time = CheckedAdd(previous, delta);
    if (!time || !InTimeRange(*time)) Fail("a time outside the model's range");
    return ok() ? *time : 0;
  }
  // An end recorded as its distance from `start`: never before it.
  TimeNs End(TimeNs start) {
    const TimeNs end = Time(start);
    if (ok() && end < start) Fail("an end before its start");
    return end;
  }
  // An enum stored as a number no larger than `last`.
  template <typename Enum>
  Enum Kind(Enum last, const std::string& what) {
    const uint64_t value = Unsigned();
    if (value > static_cast<uint64_t>(last)) Fail(absl::StrCat("unknown ", what, " ", value));
    return ok() ? static_cast<Enum>(value) : Enum{};
  }
  // An index below `size`.
  uint32_t Index(size_t size, const std::string& what) {
    const uint64_t value = Unsigned();
    if (value >= size) Fail(absl::StrCat(what, " ", value, " out of range"));
    return ok() ? static_cast<uint32_t>(value) : 0;
  }
  // An index below `size` written as index + 1, 0 standing for kNoIndex.
  uint32_t OptionalIndex(size_t size, const std::string& what) {
    const uint64_t value = Unsigned();
    if (value == 0) return kNoIndex;
    if (value > size) Fail(absl::StrCat(what, " ", value - 1, " out of range"));
    return ok() ? static_cast<uint32_t>(value - 1) : kNoIndex;
  }
  // A count of items that take at least `min_bytes` each: never more than the rest of the data
  // could hold, so a hostile count cannot make a huge allocation.
  size_t Count(size_t min_bytes, const std::string& what) {
    const uint64_t value = Unsigned();
    if (ok() && value > (data_.size() - pos_) / min_bytes) {
      Fail(absl::StrCat(what, ": ", value, " is more than the data holds"));
    }
    return ok() ? static_cast<size_t>(value) : 0;
  }
  std::string String() {
    const size_t size = Count(1, "string length");
    if (!ok()) return {};
    std::string text(data_.substr(pos_, size));
    pos_ += size;
    return text;
  }

 private:
  std::string_view data_;
  const std::string& path_;
  size_t stream_at_ = 0;
  size_t pos_ = 0;
  absl::Status status_;
};

// The header's ids: a rank from 0 and a world size from 1, or -1 for unknown, as the model holds
// them. Any other value (rank -5) is no id: left unknown and counted as a bad id, as the Kineto
// reader counts one in distributedInfo, never passed on for the loader to replace in silence
// with the rank the file's name gives. True when an id was refused.
bool ReadIds(PayloadReader& in, Rank* rank) {
  const int32_t id = in.Int32("the rank");
  const int32_t world = in.Int32("the world size");
  const bool rank_usable = id >= -1;
  const bool world_usable = world == -1 || world >= 1;
  rank->rank = rank_usable ? id : -1;
  rank->world_size = world_usable ? world : -1;
  return !rank_usable || !world_usable;
}

// True when the header held an id that is none (ReadIds).
bool ReadHeader(PayloadReader& in, uint64_t version, Rank* rank) {
  const bool bad_id = ReadIds(in, rank);
  rank->pid = in.Signed();
  rank->host = in.String();
  rank->backend = in.String();
  rank->record_run_id = in.String();
  if (version >= 2) {  // version 1 kept no sources: they stay empty
    rank->rank_source = in.String();
    rank->time_base = in.String();
    rank->time_evidence = in.String();
  }
  return bad_id;
}

void ReadNames(PayloadReader& in, Rank* rank) {
  const size_t count = in.Count(1, "names");
  for (size_t i = 0; i < count && in.ok(); ++i) {
    const std::string name = in.String();
    // Each name once, in id order: a repeated (or empty) one would shift every later id.
    if (in.ok() && rank->names.Intern(name) != i + 1) in.Fail("a name repeated");
  }
}

void ReadDevices(PayloadReader& in, Rank* rank) {
  const size_t count = in.Count(6, "devices");
  for (size_t i = 0; i < count && in.ok(); ++i) {
    DeviceInfo device;
    device.id = in.Int32("a device id");
    device.name = in.String();
    device.total_memory_bytes = in.Signed();
    device.compute_major = in.Int32("a compute capability");
    device.compute_minor = in.Int32("a compute capability");
    device.multiprocessors = in.Int32("a multiprocessor count");
    if (in.ok()) rank->devices.push_back(std::move(device));
  }
}

void ReadGroups(PayloadReader& in, Rank* rank) {
  const size_t count = in.Count(3, "process groups");
  for (size_t i = 0; i < count && in.ok(); ++i) {
    ProcessGroup group;
    group.name = in.String();
    group.description = in.String();
    const size_t members = in.Count(1, "group members");
    group.ranks.reserve(members);
    for (size_t m = 0; m < members && in.ok(); ++m) group.ranks.push_back(in.Int32("a member"));
    if (in.ok()) rank->process_groups.push_back(std::move(group));
  }
}

void ReadComms(PayloadReader& in, Rank* rank) {
  const size_t count = in.Count(8, "communication records");
  rank->comms.reserve(count);
  const size_t names = rank->names.size();
  for (size_t i = 0; i < count && in.ok(); ++i) {
    CommInfo comm;
    comm.bytes = in.Signed();
    comm.peer = in.Int32("a peer");
    comm.group_size = in.Int32("a group size");
    comm.process_group = in.OptionalIndex(rank->process_groups.size(), "process group");
    comm.collective = in.Index(names, "name");
    comm.dtype = in.Index(names, "name");
    comm.kind = in.Kind(CommKind::kBarrier, "communication kind");
    comm.seq = in.Signed();
    if (in.ok()) rank->comms.push_back(comm);
  }
}

void ReadIntervals(PayloadReader& in, const Rank& rank, std::vector<Interval>* intervals) {
  const size_t count = in.Count(6, "intervals");
  if (!in.ok()) return;
  intervals->resize(count);
  for (Interval& interval : *intervals) {
    interval.kind = in.Kind(IntervalKind::kRuntime, "interval kind");
  }
  TimeNs previous_start = 0;
  for (Interval& interval : *intervals) {
    interval.start = in.Time(previous_start);
    previous_start = interval.start;
  }
  for (size_t i = 0; i < count && in.ok(); ++i) {
    Interval& interval = (*intervals)[i];
    interval.end = in.End(interval.start);
    // The model's order (bubblescope/rank_finish.h), which analyses rely on.
    if (in.ok() && i > 0 && IntervalBefore(interval, (*intervals)[i - 1])) {
      in.Fail("intervals out of order");
    }
  }
  int64_t previous_correlation = 0;
  for (Interval& interval : *intervals) {
    const int64_t delta = in.Signed();
    // Correlation ids are opaque: any int64, so the sum wraps as the writer's difference did.
    interval.correlation = static_cast<int64_t>(static_cast<uint64_t>(previous_correlation) +
                                                static_cast<uint64_t>(delta));
    previous_correlation = interval.correlation;
  }
  for (Interval& interval : *intervals) interval.name = in.Index(rank.names.size(), "name");
  for (Interval& interval : *intervals) {
    interval.comm = in.OptionalIndex(rank.comms.size(), "communication record");
  }
  if (!in.ok()) intervals->clear();
}

void ReadTimelines(PayloadReader& in, Rank* rank) {
  const size_t count = in.Count(5, "timelines");
  rank->timelines.reserve(count);
  for (size_t i = 0; i < count && in.ok(); ++i) {
    Timeline timeline;
    timeline.kind = in.Kind(TimelineKind::kCpuThread, "timeline kind");
    timeline.device = in.Int32("a device");
    timeline.pid = in.Signed();
    timeline.id = in.Signed();
    ReadIntervals(in, *rank, &timeline.intervals);
    if (in.ok()) rank->timelines.push_back(std::move(timeline));
  }
}

void ReadAnnotations(PayloadReader& in, Rank* rank) {
  const size_t count = in.Count(6, "annotations");
  rank->annotations.reserve(count);
  TimeNs previous_start = 0;
  for (size_t i = 0; i < count && in.ok(); ++i) {
    Annotation annotation;
    annotation.start = in.Time(previous_start);
    if (in.ok() && i > 0 && annotation.start < previous_start) in.Fail("annotations out of order");
    previous_start = annotation.start;
    annotation.end = in.End(annotation.start);
    annotation.name = in.Index(rank->names.size(), "name");
    annotation.scope = in.Kind(AnnotationScope::kGpu, "annotation scope");
    annotation.device = in.Int32("a device");
    annotation.thread_or_stream = in.Signed();
    if (in.ok()) rank->annotations.push_back(annotation);
  }
}

void ReadSteps(PayloadReader& in, Rank* rank) {
  const size_t count = in.Count(3, "profiler steps");
  rank->steps.reserve(count);
  TimeNs previous_start = 0;
  for (size_t i = 0; i < count && in.ok(); ++i) {
    ProfilerStep step;
    step.number = in.Signed();
    step.start = in.Time(previous_start);
    if (in.ok() && i > 0 && step.start < previous_start) in.Fail("profiler steps out of order");
    previous_start = step.start;
    step.end = in.End(step.start);
    if (in.ok()) rank->steps.push_back(step);
  }
}

void ReadMemory(PayloadReader& in, Rank* rank) {
  const size_t count = in.Count(5, "memory samples");
  rank->memory.reserve(count);
  TimeNs previous_time = 0;
  for (size_t i = 0; i < count && in.ok(); ++i) {
    MemorySample sample;
    sample.time = in.Time(previous_time);
    if (in.ok() && i > 0 && sample.time < previous_time) in.Fail("memory samples out of order");
    previous_time = sample.time;
    sample.allocated_bytes = in.Signed();
    sample.reserved_bytes = in.Signed();
    // The readers keep only usable samples (trace.h, kMaxMemoryBytes); so must a digest.
    for (int64_t bytes : {sample.allocated_bytes, sample.reserved_bytes}) {
      if (bytes < 0 || bytes > kMaxMemoryBytes) in.Fail("a memory sample out of range");
    }
    sample.device = in.Int32("a device");
    const uint64_t host = in.Unsigned();
    if (host > 1) in.Fail("a memory sample's host flag is neither 0 nor 1");
    sample.host = host == 1;
    if (in.ok()) rank->memory.push_back(sample);
  }
}

void ReadStats(PayloadReader& in, Rank* rank) {
  // Counters are only ever appended: a digest of this version holds this build's counters or
  // the first of them (written before the later ones existed, which it then did not count).
  const uint64_t counters = in.Unsigned();
  if (counters > kImportCounterCount && in.ok()) in.Fail("a different set of import counters");
  for (size_t c = 0; c < counters && in.ok(); ++c) {
    const uint64_t count = in.Unsigned();
    const int64_t first_offset = in.Signed();
    if (in.ok() && first_offset < -1) in.Fail("an import counter's offset below -1");
    if (in.ok() && count > 0) {
      rank->stats.Add(static_cast<ImportCounter>(c), count, first_offset);
    }
  }
  std::string detail = in.String();
  if (in.ok()) rank->stats.set_truncation_detail(std::move(detail));
}

// The payload the zlib stream at `bytes[start..]` holds: exactly `size` bytes, with nothing
// after the stream.
absl::StatusOr<std::string> Inflate(std::string_view bytes, size_t start, size_t size,
                                    const std::string& path) {
  // One byte of room more than the header says, so a stream holding more shows as such.
  std::string payload(size + 1, '\0');
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) return OutOfMemoryReading(path);
  stream.next_in = reinterpret_cast<const Bytef*>(bytes.data() + start);
  stream.next_out = reinterpret_cast<Bytef*>(payload.data());
  size_t in_left = bytes.size() - start;
  size_t out_left = payload.size();
  // zlib counts in 32-bit units: it is given at most 1 GiB at a time either way.
  constexpr size_t kStep = size_t{1} << 30;
  int status = Z_OK;
  while (status == Z_OK) {
    if (stream.avail_in == 0) {
      stream.avail_in = static_cast<uInt>(std::min(in_left, kStep));
      in_left -= stream.avail_in;
    }
    if (stream.avail_out == 0) {
      stream.avail_out = static_cast<uInt>(std::min(out_left, kStep));
      out_left -= stream.avail_out;
    }
    // Z_BUF_ERROR: no progress possible, the input ended or the room is full.
    status = inflate(&stream, Z_NO_FLUSH);
  }
  const size_t at = bytes.size() - in_left - stream.avail_in;
  const size_t produced = payload.size() - out_left - stream.avail_out;
  const std::string message = stream.msg != nullptr ? stream.msg : "zlib error";
  inflateEnd(&stream);
  if (status == Z_MEM_ERROR) return OutOfMemoryReading(path);
  if (produced > size) {
    return FileError(
        path, at, absl::StrCat("the payload holds more than the ", size, " bytes its header says"));
  }
  if (status == Z_BUF_ERROR) return FileError(path, at, "the digest ends early (cut short?)");
  if (status != Z_STREAM_END)
    return FileError(path, at, absl::StrCat("bad compressed data: ", message));
  if (produced != size) {
    return FileError(
        path, at,
        absl::StrCat("the payload holds ", produced, " bytes, not the ", size, " its header says"));
  }
  if (at != bytes.size()) return FileError(path, at, "bytes after the digest's data");
  payload.resize(size);
  return payload;
}

}  // namespace

bool LooksLikeDigest(std::string_view first_bytes) { return first_bytes.starts_with(kMagic); }

absl::StatusOr<Rank> Decode(std::string_view bytes, const std::string& source_path,
                            int64_t max_inflated_bytes) {
  try {
    if (!LooksLikeDigest(bytes)) return FileError(source_path, 0, "not a bubblescope digest");
    size_t pos = kMagic.size();
    uint64_t version = 0;
    if (!GetVarint(bytes, &pos, &version)) return FileError(source_path, pos, "no format version");
    if (version < kOldestFormatVersion || version > kFormatVersion) {
      return FileError(
          source_path, kMagic.size(),
          absl::StrCat("digest format version ", version, "; this bubblescope reads ",
                       kOldestFormatVersion, " to ", kFormatVersion, " (digest the trace again)"));
    }
    const size_t size_at = pos;
    uint64_t size = 0;
    if (!GetVarint(bytes, &pos, &size)) return FileError(source_path, pos, "no payload size");
    if (size > static_cast<uint64_t>(max_inflated_bytes)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          source_path, ": byte ", size_at, ": a payload of ", size,
          " bytes, more than the reading budget per file (", max_inflated_bytes, " bytes)"));
    }
    if (size > (bytes.size() - pos) * kMaxDeflateRatio) {
      return FileError(source_path, size_at,
                       absl::StrCat("a payload of ", size, " bytes cannot come from ",
                                    bytes.size() - pos, " compressed bytes"));
    }
    BUBBLESCOPE_ASSIGN_OR_RETURN(std::string payload, Inflate(bytes, pos, size, source_path));

    Rank rank;
    PayloadReader in(payload, source_path, pos);
    const bool bad_id = ReadHeader(in, version, &rank);
    ReadNames(in, &rank);
    ReadDevices(in, &rank);
    ReadGroups(in, &rank);
    ReadComms(in, &rank);
    ReadTimelines(in, &rank);
    ReadAnnotations(in, &rank);
    ReadSteps(in, &rank);
    ReadMemory(in, &rank);
    ReadStats(in, &rank);
    if (in.ok() && !in.AtEnd()) in.Fail("data after the last section");
    BUBBLESCOPE_RETURN_IF_ERROR(in.status());
    // Counted after the digest's own counters are read, at the rank's compressed stream.
    if (bad_id) rank.stats.Bump(ImportCounter::kBadId, static_cast<int64_t>(pos));
    rank.source_path = source_path;
    return rank;
  } catch (const std::bad_alloc&) {
    return OutOfMemoryReading(source_path, max_inflated_bytes);
  }
}

bool DigestTraceReader::Sniff(std::string_view head, std::string_view path) const {
  return LooksLikeDigest(head) ||
         absl::EndsWithIgnoreCase(absl::string_view(path.data(), path.size()), ".bsdigest");
}

absl::StatusOr<FileRanks> DigestTraceReader::Read(const std::string& path,
                                                  const ReaderOptions& options) {
  FileRanks file;
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      Rank rank,
      Decode(std::string_view(options.text.data(), options.text.size()), path, options.max_bytes));
  file.ranks.push_back(std::move(rank));
  return file;
}

}  // namespace bubblescope::digest
