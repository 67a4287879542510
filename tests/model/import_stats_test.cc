#include "bubblescope/import_stats.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

TEST(ImportStatsTest, CountsAndKeepsFirstOffset) {
  ImportStats stats;
  EXPECT_FALSE(stats.HasAtLeast(Severity::kInfo));
  stats.Bump(ImportCounter::kNegativeDuration, 120);
  stats.Bump(ImportCounter::kNegativeDuration, 80);
  EXPECT_EQ(stats.count(ImportCounter::kNegativeDuration), 2u);
  EXPECT_EQ(stats.first_offset(ImportCounter::kNegativeDuration), 120);
  EXPECT_EQ(stats.first_offset(ImportCounter::kTruncated), -1);
  EXPECT_TRUE(stats.HasAtLeast(Severity::kError));
}

TEST(ImportStatsTest, SeverityThreshold) {
  ImportStats stats;
  stats.Bump(ImportCounter::kUnknownPhase, 5);
  EXPECT_TRUE(stats.HasAtLeast(Severity::kInfo));
  EXPECT_FALSE(stats.HasAtLeast(Severity::kWarning));
  stats.Bump(ImportCounter::kTruncated, 9);
  EXPECT_TRUE(stats.HasAtLeast(Severity::kWarning));
  EXPECT_FALSE(stats.HasAtLeast(Severity::kError));
}

TEST(ImportStatsTest, MergeAddsCountsAndKeepsEarliestKnownOffset) {
  ImportStats a;
  ImportStats b;
  a.Bump(ImportCounter::kWrongFieldType, 10);
  b.Bump(ImportCounter::kWrongFieldType, 3);
  b.Bump(ImportCounter::kEventNotObject, 7);
  b.set_truncation_detail("cut");
  a.Merge(b);
  EXPECT_EQ(a.count(ImportCounter::kWrongFieldType), 2u);
  EXPECT_EQ(a.first_offset(ImportCounter::kWrongFieldType), 10);
  EXPECT_EQ(a.count(ImportCounter::kEventNotObject), 1u);
  EXPECT_EQ(a.first_offset(ImportCounter::kEventNotObject), 7);
  EXPECT_EQ(a.truncation_detail(), "cut");
}

// Counts taken from the input (a collector's dropped totals) can be huge; sums stop at the
// largest count instead of wrapping to a small one.
TEST(ImportStatsTest, SumsSaturateInsteadOfWrapping) {
  ImportStats a;
  a.Add(ImportCounter::kCollectorDroppedRecords, UINT64_MAX - 5, 10);
  a.Add(ImportCounter::kCollectorDroppedRecords, 100, 20);
  EXPECT_EQ(a.count(ImportCounter::kCollectorDroppedRecords), UINT64_MAX);
  ImportStats b;
  b.Add(ImportCounter::kCollectorDroppedRecords, uint64_t{1} << 63, 5);
  ImportStats c;
  c.Add(ImportCounter::kCollectorDroppedRecords, uint64_t{1} << 63, 7);
  b.Merge(c);
  EXPECT_EQ(b.count(ImportCounter::kCollectorDroppedRecords), UINT64_MAX);
  EXPECT_EQ(b.first_offset(ImportCounter::kCollectorDroppedRecords), 5);
}

TEST(ImportStatsTest, EveryCounterHasASpec) {
  for (size_t i = 0; i < kImportCounterCount; ++i) {
    const ImportCounterSpec& spec = CounterSpec(static_cast<ImportCounter>(i));
    EXPECT_FALSE(spec.name.empty());
    EXPECT_FALSE(spec.description.empty());
  }
  EXPECT_EQ(CounterSpec(ImportCounter::kTruncated).name, "truncated");
  EXPECT_EQ(CounterSpec(ImportCounter::kNegativeDuration).severity, Severity::kError);
}

}  // namespace
}  // namespace bubblescope
