#include "writers/digest_writer.h"

#include <cstdint>
#include <new>
#include <string>
#include <string_view>

#include "common/digest_format.h"

#define ZLIB_CONST
#include <zlib.h>

namespace bubblescope::digest {
namespace {

// The payload, field by field (the reader reads it back in the same order).
class Payload {
 public:
  void Unsigned(uint64_t value) { PutVarint(value, &out_); }
  void Signed(int64_t value) { PutVarint(ZigZag(value), &out_); }
  // A difference of two model values: both lie within ±kMaxTimeNs (or are ids), so it fits.
  void Delta(int64_t value, int64_t previous) {
    PutVarint(ZigZag(static_cast<int64_t>(static_cast<uint64_t>(value) -
                                          static_cast<uint64_t>(previous))),
              &out_);
  }
  // An index that may be kNoIndex: 0 for none, else the index + 1.
  void OptionalIndex(uint32_t index) { Unsigned(index == kNoIndex ? 0 : uint64_t{index} + 1); }
  void String(std::string_view text) {
    Unsigned(text.size());
    out_.append(text);
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

void WriteHeader(const Rank& rank, Payload* out) {
  out->Signed(rank.rank);
  out->Signed(rank.world_size);
  out->Signed(rank.pid);
  out->String(rank.host);
  out->String(rank.backend);
  out->String(rank.record_run_id);
  // Since version 2.
  out->String(rank.rank_source);
  out->String(rank.time_base);
  out->String(rank.time_evidence);
}

void WriteNames(const NamePool& names, Payload* out) {
  out->Unsigned(names.size() - 1);  // id 0 is always the empty string
  for (size_t id = 1; id < names.size(); ++id) out->String(names.Get(static_cast<NameId>(id)));
}

void WriteDevices(const std::vector<DeviceInfo>& devices, Payload* out) {
  out->Unsigned(devices.size());
  for (const DeviceInfo& device : devices) {
    out->Signed(device.id);
    out->String(device.name);
    out->Signed(device.total_memory_bytes);
    out->Signed(device.compute_major);
    out->Signed(device.compute_minor);
    out->Signed(device.multiprocessors);
  }
}

void WriteGroups(const std::vector<ProcessGroup>& groups, Payload* out) {
  out->Unsigned(groups.size());
  for (const ProcessGroup& group : groups) {
    out->String(group.name);
    out->String(group.description);
    out->Unsigned(group.ranks.size());
    for (int32_t member : group.ranks) out->Signed(member);
  }
}

void WriteComms(const std::vector<CommInfo>& comms, Payload* out) {
  out->Unsigned(comms.size());
  for (const CommInfo& comm : comms) {
    out->Signed(comm.bytes);
    out->Signed(comm.peer);
    out->Signed(comm.group_size);
    out->OptionalIndex(comm.process_group);
    out->Unsigned(comm.collective);
    out->Unsigned(comm.dtype);
    out->Unsigned(static_cast<uint8_t>(comm.kind));
    out->Signed(comm.seq);
  }
}

// Intervals column by column (kinds, starts, durations, ...): each column's values look alike,
// which is what deflate compresses best.
void WriteIntervals(const std::vector<Interval>& intervals, Payload* out) {
  out->Unsigned(intervals.size());
  for (const Interval& interval : intervals) out->Unsigned(static_cast<uint8_t>(interval.kind));
  TimeNs previous_start = 0;
  for (const Interval& interval : intervals) {
    out->Delta(interval.start, previous_start);
    previous_start = interval.start;
  }
  for (const Interval& interval : intervals) out->Delta(interval.end, interval.start);
  int64_t previous_correlation = 0;
  for (const Interval& interval : intervals) {
    out->Delta(interval.correlation, previous_correlation);
    previous_correlation = interval.correlation;
  }
  for (const Interval& interval : intervals) out->Unsigned(interval.name);
  for (const Interval& interval : intervals) out->OptionalIndex(interval.comm);
}

void WriteTimelines(const std::vector<Timeline>& timelines, Payload* out) {
  out->Unsigned(timelines.size());
  for (const Timeline& timeline : timelines) {
    out->Unsigned(static_cast<uint8_t>(timeline.kind));
    out->Signed(timeline.device);
    out->Signed(timeline.pid);
    out->Signed(timeline.id);
    WriteIntervals(timeline.intervals, out);
  }
}

void WriteAnnotations(const std::vector<Annotation>& annotations, Payload* out) {
  out->Unsigned(annotations.size());
  TimeNs previous_start = 0;
  for (const Annotation& annotation : annotations) {
    out->Delta(annotation.start, previous_start);
    previous_start = annotation.start;
    out->Delta(annotation.end, annotation.start);
    out->Unsigned(annotation.name);
    out->Unsigned(static_cast<uint8_t>(annotation.scope));
    out->Signed(annotation.device);
    out->Signed(annotation.thread_or_stream);
  }
}

void WriteSteps(const std::vector<ProfilerStep>& steps, Payload* out) {
  out->Unsigned(steps.size());
  TimeNs previous_start = 0;
  for (const ProfilerStep& step : steps) {
    out->Signed(step.number);
    out->Delta(step.start, previous_start);
    previous_start = step.start;
    out->Delta(step.end, step.start);
  }
}

void WriteMemory(const std::vector<MemorySample>& samples, Payload* out) {
  out->Unsigned(samples.size());
  TimeNs previous_time = 0;
  for (const MemorySample& sample : samples) {
    out->Delta(sample.time, previous_time);
    previous_time = sample.time;
    out->Signed(sample.allocated_bytes);
    out->Signed(sample.reserved_bytes);
    out->Signed(sample.device);
    out->Unsigned(sample.host ? 1 : 0);
  }
}

void WriteStats(const ImportStats& stats, Payload* out) {
  out->Unsigned(kImportCounterCount);
  for (size_t c = 0; c < kImportCounterCount; ++c) {
    const auto counter = static_cast<ImportCounter>(c);
    out->Unsigned(stats.count(counter));
    out->Signed(stats.first_offset(counter));
  }
  out->String(stats.truncation_detail());
}

// The payload deflated as one zlib stream. Level 9: a digest is written once and read many
// times, and the payload is small beside the trace it came from.
std::string Deflate(const std::string& payload) {
  uLongf size = compressBound(static_cast<uLong>(payload.size()));
  std::string compressed(size, '\0');
  const int status = compress2(reinterpret_cast<Bytef*>(compressed.data()), &size,
                               reinterpret_cast<const Bytef*>(payload.data()),
                               static_cast<uLong>(payload.size()), Z_BEST_COMPRESSION);
  // compress2 into a compressBound buffer fails only when memory runs out.
  if (status == Z_MEM_ERROR) throw std::bad_alloc();
  compressed.resize(size);
  return compressed;
}

}  // namespace

std::string Encode(const Rank& rank) {
  Payload payload;
  WriteHeader(rank, &payload);
  WriteNames(rank.names, &payload);
  WriteDevices(rank.devices, &payload);
  WriteGroups(rank.process_groups, &payload);
  WriteComms(rank.comms, &payload);
  WriteTimelines(rank.timelines, &payload);
  WriteAnnotations(rank.annotations, &payload);
  WriteSteps(rank.steps, &payload);
  WriteMemory(rank.memory, &payload);
  WriteStats(rank.stats, &payload);
  std::string file(kMagic);
  PutVarint(kFormatVersion, &file);
  PutVarint(payload.bytes().size(), &file);
  file += Deflate(payload.bytes());
  return file;
}

}  // namespace bubblescope::digest
