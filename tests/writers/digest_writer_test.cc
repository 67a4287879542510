// The digest codec round trip: Encode then Decode gives back every member of the Rank, and the
// same Rank always gives the same bytes.
#include "writers/digest_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "common/digest_format.h"
#include "readers/digest_reader.h"
#include "writers/digest_test_rank.h"
#include "writers/writer_test_rank.h"

namespace bubblescope {
namespace {

// The writer's test rank, with every member the Kineto writer leaves unset filled in too.
Rank FullRank() {
  Rank rank = testing::MakeWriterTestRank();
  rank.host = "node-07.cluster";
  rank.record_run_id = "run-5f3a";
  // What an Nsight export's rank rests on (version 2).
  rank.rank_source = "environment:RANK";
  rank.time_base = "session_start";
  rank.time_evidence = "CUDA activity at 0.264 s to 0.883 s lies inside the capture's 1.198 s";
  rank.process_groups.push_back(ProcessGroup{"1", {0, 1, 2, 3}, "TENSOR_MODEL_PARALLEL_GROUP"});
  rank.comms[1].seq = 41;
  rank.memory.push_back({testing::kBase + 9000, 4096, 8192, -1, true});
  rank.stats.Bump(ImportCounter::kTruncated, 123456);
  rank.stats.Add(ImportCounter::kUnknownPhase, 7, 99);
  rank.stats.set_truncation_detail("cut inside an event at byte 123456");
  // A name that is not ASCII, and one with a NUL: names are bytes.
  rank.annotations.push_back({testing::kBase + 8500, testing::kBase + 8500,
                              rank.names.Intern("PP:1F3 \xc3\xa9tape"), AnnotationScope::kCpu, -1,
                              4250});
  rank.names.Intern(std::string_view("with\0nul", 8));
  return rank;
}

TEST(DigestWriterTest, RoundTripKeepsEveryMember) {
  const Rank rank = FullRank();
  const std::string bytes = digest::Encode(rank);
  absl::StatusOr<Rank> back = digest::Decode(bytes, "rank3.bsdigest");
  ASSERT_TRUE(back.ok()) << back.status();
  testing::ExpectSameRank(rank, *back);
  EXPECT_EQ(back->source_path, "rank3.bsdigest");  // the file read, like a trace's
  EXPECT_EQ(back->stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(back->stats.first_offset(ImportCounter::kTruncated), 123456);
  EXPECT_EQ(back->stats.count(ImportCounter::kUnknownPhase), 7u);
}

TEST(DigestWriterTest, SameRankSameBytes) {
  const std::string first = digest::Encode(FullRank());
  EXPECT_EQ(first, digest::Encode(FullRank()));
  absl::StatusOr<Rank> back = digest::Decode(first, "x");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(digest::Encode(*back), first);  // decoding loses nothing the writer writes
}

TEST(DigestWriterTest, StartsWithMagicAndVersion) {
  const std::string bytes = digest::Encode(Rank{});
  EXPECT_TRUE(digest::LooksLikeDigest(bytes));
  ASSERT_GT(bytes.size(), digest::kMagic.size());
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89"
                                            "BSDG\r\n\x1a",
                                            8));
  EXPECT_EQ(bytes[8], 2);  // format version 2, one varint byte
  EXPECT_FALSE(digest::LooksLikeDigest("{\"traceEvents\": []}"));
  EXPECT_FALSE(
      digest::LooksLikeDigest(std::string_view("\x89"
                                               "BSD",
                                               4)));  // too short
}

TEST(DigestWriterTest, EmptyRankRoundTrips) {
  const Rank empty;
  absl::StatusOr<Rank> back = digest::Decode(digest::Encode(empty), "empty");
  ASSERT_TRUE(back.ok()) << back.status();
  testing::ExpectSameRank(empty, *back);
}

TEST(DigestWriterTest, ExtremeValuesRoundTrip) {
  Rank rank;
  rank.rank = std::numeric_limits<int32_t>::max();
  // The largest ids the model holds; a world size below -1 is no id and is counted on reading
  // (digest_reader_test).
  rank.world_size = std::numeric_limits<int32_t>::max();
  rank.pid = std::numeric_limits<int64_t>::min();
  Timeline thread{TimelineKind::kCpuThread, -1, -7, std::numeric_limits<int64_t>::max(), {}};
  // The whole time range, and correlation ids whose differences wrap around int64.
  thread.intervals.push_back({-kMaxTimeNs, kMaxTimeNs, std::numeric_limits<int64_t>::max(),
                              rank.names.Intern("a"), kNoIndex, IntervalKind::kRuntime});
  thread.intervals.push_back({kMaxTimeNs, kMaxTimeNs, std::numeric_limits<int64_t>::min(),
                              rank.names.Intern("b"), kNoIndex, IntervalKind::kCpuOp});
  rank.timelines.push_back(thread);
  rank.comms.push_back(CommInfo{std::numeric_limits<int64_t>::max(), INT32_MIN, INT32_MAX, kNoIndex,
                                kNoName, kNoName, CommKind::kBarrier, INT64_MIN});
  rank.memory.push_back({-kMaxTimeNs, kMaxMemoryBytes, 0, 3, false});
  rank.steps.push_back({std::numeric_limits<int64_t>::min(), -kMaxTimeNs, kMaxTimeNs});
  absl::StatusOr<Rank> back = digest::Decode(digest::Encode(rank), "extreme");
  ASSERT_TRUE(back.ok()) << back.status();
  testing::ExpectSameRank(rank, *back);
}

// Column-wise varints with small deltas: a thousand regular kernels take a few bytes each.
TEST(DigestWriterTest, RegularTimelineIsSmall) {
  Rank rank;
  Timeline stream{TimelineKind::kGpuStream, 0, 0, 7, {}};
  const NameId gemm = rank.names.Intern("sm90_xmma_gemm_bf16bf16_bf16f32");
  for (int i = 0; i < 1000; ++i) {
    stream.intervals.push_back({1'700'000'000'000'000'000 + i * 10'000,
                                1'700'000'000'000'000'000 + i * 10'000 + 7'000, 1000 + 3 * i, gemm,
                                kNoIndex, IntervalKind::kComputeKernel});
  }
  rank.timelines.push_back(stream);
  EXPECT_LT(digest::Encode(rank).size(), 300u);
}

}  // namespace
}  // namespace bubblescope
