// The digest reader against damaged and hostile files: every one is a one-line error naming the
// file and a byte offset, never a crash, a hang or an allocation the file cannot justify.
#include "readers/digest_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "common/digest_format.h"
#include "writers/digest_writer.h"

#define ZLIB_CONST
#include <zlib.h>

namespace bubblescope {
namespace {

// A digest file of format `version` around a hand-made payload, its header claiming
// `claimed_size` bytes.
std::string DigestOf(const std::string& payload, uint64_t claimed_size,
                     uint64_t version = digest::kFormatVersion) {
  uLongf size = compressBound(static_cast<uLong>(payload.size()));
  std::string compressed(size, '\0');
  compress2(reinterpret_cast<Bytef*>(compressed.data()), &size,
            reinterpret_cast<const Bytef*>(payload.data()), payload.size(), 6);
  compressed.resize(size);
  std::string file(digest::kMagic);
  digest::PutVarint(version, &file);
  digest::PutVarint(claimed_size, &file);
  return file + compressed;
}
std::string DigestOf(const std::string& payload) { return DigestOf(payload, payload.size()); }

// The payload of an empty rank up to (not including) its timelines.
std::string PayloadBeforeTimelines() {
  std::string p;
  for (int i = 0; i < 3; ++i) digest::PutVarint(0, &p);  // rank, world size, pid (zigzag 0)
  // host, backend, run id, rank source, time base, time evidence: empty
  for (int i = 0; i < 6; ++i) digest::PutVarint(0, &p);
  digest::PutVarint(1, &p);  // one name
  digest::PutVarint(1, &p);
  p += "k";
  for (int i = 0; i < 3; ++i) digest::PutVarint(0, &p);  // no devices, groups, comms
  return p;
}

// The rest after the timelines: no annotations, steps or memory, zero counters.
std::string PayloadAfterTimelines() {
  std::string p;
  for (int i = 0; i < 3; ++i) digest::PutVarint(0, &p);
  digest::PutVarint(kImportCounterCount, &p);
  for (size_t c = 0; c < kImportCounterCount; ++c) {
    digest::PutVarint(0, &p);
    digest::PutVarint(digest::ZigZag(-1), &p);
  }
  digest::PutVarint(0, &p);
  return p;
}

// One GPU stream with the given intervals' columns.
std::string OneTimeline(const std::string& columns, uint64_t count) {
  std::string p;
  digest::PutVarint(1, &p);  // one timeline
  digest::PutVarint(0, &p);  // GPU stream
  digest::PutVarint(0, &p);  // device 0
  digest::PutVarint(0, &p);  // pid
  digest::PutVarint(digest::ZigZag(7), &p);
  digest::PutVarint(count, &p);
  return p + columns;
}

std::string Columns(std::initializer_list<uint64_t> values) {
  std::string p;
  for (uint64_t v : values) digest::PutVarint(v, &p);
  return p;
}

void ExpectError(const std::string& bytes, const std::string& want) {
  absl::StatusOr<Rank> rank = digest::Decode(bytes, "bad.bsdigest");
  ASSERT_FALSE(rank.ok());
  const std::string message(rank.status().message());
  EXPECT_TRUE(absl::StartsWith(message, "bad.bsdigest: ")) << message;
  EXPECT_TRUE(absl::StrContains(message, "byte ")) << message;
  EXPECT_TRUE(absl::StrContains(message, want)) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(DigestReaderTest, HandMadePayloadReads) {
  // Two kernels: starts 100 and 250, durations 50 and 0, correlations 5 and 4, name 1.
  const std::string columns =
      Columns({0, 0, digest::ZigZag(100), digest::ZigZag(150), digest::ZigZag(50), 0,
               digest::ZigZag(5), digest::ZigZag(-1), 1, 1, 0, 0});
  absl::StatusOr<Rank> rank = digest::Decode(
      DigestOf(PayloadBeforeTimelines() + OneTimeline(columns, 2) + PayloadAfterTimelines()), "ok");
  ASSERT_TRUE(rank.ok()) << rank.status();
  ASSERT_EQ(rank->timelines.size(), 1u);
  const std::vector<Interval>& intervals = rank->timelines[0].intervals;
  ASSERT_EQ(intervals.size(), 2u);
  EXPECT_EQ(intervals[0].start, 100);
  EXPECT_EQ(intervals[0].end, 150);
  EXPECT_EQ(intervals[1].start, 250);
  EXPECT_EQ(intervals[1].end, 250);
  EXPECT_EQ(intervals[1].correlation, 4);
  EXPECT_EQ(rank->name(intervals[1].name), "k");
  EXPECT_EQ(rank->timelines[0].id, 7);
}

TEST(DigestReaderTest, HostileCountsAllocateNothing) {
  // 2^60 intervals in a few bytes: refused before any allocation.
  ExpectError(DigestOf(PayloadBeforeTimelines() + OneTimeline("", uint64_t{1} << 60)),
              "is more than the data holds");
  std::string names = Columns({0, 0, 0, 0, 0, 0, 0, 0, 0, uint64_t{1} << 62});
  ExpectError(DigestOf(names), "more than the data holds");
  std::string long_string = Columns({0, 0, 0, uint64_t{1} << 40});
  ExpectError(DigestOf(long_string), "more than the data holds");
}

TEST(DigestReaderTest, BadValuesAreRefused) {
  const std::string before = PayloadBeforeTimelines();
  const std::string after = PayloadAfterTimelines();
  // Kind 9 is no interval kind.
  ExpectError(DigestOf(before + OneTimeline(Columns({9, 0, 0, 0, 0, 0}), 1) + after),
              "unknown interval kind 9");
  // Name 5 of 2.
  ExpectError(DigestOf(before + OneTimeline(Columns({0, 0, 0, 0, 5, 0}), 1) + after),
              "name 5 out of range");
  // A communication record where the rank has none.
  ExpectError(DigestOf(before + OneTimeline(Columns({0, 0, 0, 0, 1, 1}), 1) + after),
              "communication record 0 out of range");
  // Second start before the first.
  ExpectError(DigestOf(before +
                       OneTimeline(Columns({0, 0, digest::ZigZag(100), digest::ZigZag(-1), 0, 0, 0,
                                            0, 1, 1, 0, 0}),
                                   2) +
                       after),
              "intervals out of order");
  // A time past the model's range, and a negative duration.
  ExpectError(
      DigestOf(before + OneTimeline(Columns({0, digest::ZigZag(kMaxTimeNs + 1), 0, 0, 1, 0}), 1) +
               after),
      "outside the model's range");
  ExpectError(
      DigestOf(before + OneTimeline(Columns({0, 0, digest::ZigZag(-3), 0, 1, 0}), 1) + after),
      "an end before its start");
  // The rank id past 32 bits.
  ExpectError(DigestOf(Columns({digest::ZigZag(int64_t{1} << 40)})), "does not fit 32 bits");
  // A name given twice would shift every later id.
  ExpectError(DigestOf(Columns({0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 'a', 1, 'a'})), "a name repeated");
  // Bytes after the last section.
  ExpectError(DigestOf(before + Columns({0}) + after + "x"), "data after the last section");
}

// A digest written before version 2 (no rank source, time base or time evidence in its header)
// still reads: the header's other fields where they were, those three empty.
TEST(DigestReaderTest, AVersionOneDigestStillReads) {
  std::string payload;
  digest::PutVarint(digest::ZigZag(3), &payload);   // rank 3
  digest::PutVarint(digest::ZigZag(8), &payload);   // of 8
  digest::PutVarint(digest::ZigZag(77), &payload);  // pid 77
  for (std::string text : {"node-a", "nccl", "run-1"}) {
    digest::PutVarint(text.size(), &payload);
    payload += text;
  }
  payload += PayloadBeforeTimelines().substr(9) + Columns({0}) + PayloadAfterTimelines();
  absl::StatusOr<Rank> rank = digest::Decode(DigestOf(payload, payload.size(), 1), "old.bsdigest");
  ASSERT_TRUE(rank.ok()) << rank.status();
  EXPECT_EQ(rank->rank, 3);
  EXPECT_EQ(rank->world_size, 8);
  EXPECT_EQ(rank->pid, 77);
  EXPECT_EQ(rank->host, "node-a");
  EXPECT_EQ(rank->backend, "nccl");
  EXPECT_EQ(rank->record_run_id, "run-1");
  EXPECT_EQ(rank->name(1), "k");
  EXPECT_EQ(rank->rank_source, "");
  EXPECT_EQ(rank->time_base, "");
  EXPECT_EQ(rank->time_evidence, "");
  // The same payload as version 2 lacks three strings: it ends early.
  ExpectError(DigestOf(payload, payload.size(), 2), "");
}

// A rank of -5 (or a world size of 0) is no id: it was passed on, and the loader, taking any
// negative rank for unknown, put the rank the file's name gives in its place in silence. It is
// left unknown and counted as a bad id at the rank's stream, as Kineto's reader counts one; -1,
// the unknown the writer writes, is no damage.
TEST(DigestReaderTest, AnIdOutsideItsRangeIsCountedAsABadId) {
  struct Case {
    int32_t rank;
    int32_t world_size;
    uint64_t bad_ids;
  };
  for (const Case& ids :
       {Case{-5, 4, 1}, Case{2, 0, 1}, Case{2, -3, 1}, Case{-1, -1, 0}, Case{3, 4, 0}}) {
    Rank written;
    written.rank = ids.rank;
    written.world_size = ids.world_size;
    const std::string bytes = digest::Encode(written);
    absl::StatusOr<Rank> rank = digest::Decode(bytes, "rank3.bsdigest");
    ASSERT_TRUE(rank.ok()) << rank.status();
    EXPECT_EQ(rank->rank, ids.rank >= -1 ? ids.rank : -1) << ids.rank;
    EXPECT_EQ(rank->world_size, ids.world_size == -1 || ids.world_size >= 1 ? ids.world_size : -1)
        << ids.world_size;
    EXPECT_EQ(rank->stats.count(ImportCounter::kBadId), ids.bad_ids) << ids.rank;
    if (ids.bad_ids > 0) {
      // The rank's compressed stream starts after the magic, the version and the payload size.
      EXPECT_GT(rank->stats.first_offset(ImportCounter::kBadId),
                static_cast<int64_t>(digest::kMagic.size()));
    }
  }
}

TEST(DigestReaderTest, HeaderAndStreamErrors) {
  const std::string good = digest::Encode(Rank{});
  ExpectError("{\"traceEvents\": []}", "not a bubblescope digest");
  std::string future = good;
  future[digest::kMagic.size()] = 3;
  ExpectError(future, "digest format version 3; this bubblescope reads 1 to 2");
  std::string before_any = good;
  before_any[digest::kMagic.size()] = 0;
  ExpectError(before_any, "digest format version 0; this bubblescope reads 1 to 2");
  ExpectError(good + "tail", "bytes after the digest's data");
  const std::string payload = PayloadBeforeTimelines() + Columns({0}) + PayloadAfterTimelines();
  ExpectError(DigestOf(payload, payload.size() + 1), "the payload holds");
  ExpectError(DigestOf(payload, payload.size() - 1), "more than the");
  ExpectError(DigestOf(payload, uint64_t{1} << 50), "cannot come from");
  absl::StatusOr<Rank> over_budget = digest::Decode(DigestOf(payload), "big", 10);
  ASSERT_FALSE(over_budget.ok());
  EXPECT_EQ(over_budget.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(over_budget.status().message(), "reading budget"));
}

// Every cut of a real digest, and every single byte changed, is an error or a rank: never a
// crash (ASan and UBSan builds run this too).
TEST(DigestReaderTest, EveryCutAndEveryByteFlip) {
  Rank rank;
  Timeline stream{TimelineKind::kGpuStream, 0, 0, 7, {}};
  for (int i = 0; i < 20; ++i) {
    stream.intervals.push_back({i * 100, i * 100 + 50, i + 1, rank.names.Intern("k"), kNoIndex,
                                IntervalKind::kComputeKernel});
  }
  rank.timelines.push_back(stream);
  rank.annotations.push_back({0, 500, rank.names.Intern("PP:0F0"), AnnotationScope::kCpu, -1, 1});
  const std::string good = digest::Encode(rank);
  for (size_t cut = 0; cut < good.size(); ++cut) {
    absl::StatusOr<Rank> read = digest::Decode(good.substr(0, cut), "cut");
    EXPECT_FALSE(read.ok()) << cut;
  }
  for (size_t at = 0; at < good.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = good;
      flipped[at] = static_cast<char>(flipped[at] ^ (1 << bit));
      absl::StatusOr<Rank> read = digest::Decode(flipped, "flip");
      if (!read.ok()) {
        EXPECT_TRUE(absl::StartsWith(read.status().message(), "flip: "));
      }
    }
  }
}

}  // namespace
}  // namespace bubblescope
