#include "record_format/record_run_id.h"

#include <string>

#include "gtest/gtest.h"

namespace bubblescope::record_format {
namespace {

TEST(RecordRunIdTest, ValidIds) {
  const std::string longest(64, 'x');
  for (const char* id :
       {"20261125-132801-a1b2", "baseline", "7", "job.4812_retry-2", longest.c_str()}) {
    EXPECT_TRUE(IsValidRecordRunId(id)) << id;
  }
}

TEST(RecordRunIdTest, InvalidIds) {
  const std::string too_long(65, 'x');
  for (const char* id : {"", "-leading-dash", ".hidden", "_x", "has space", "a/b", "tab\there",
                         "my-rank-run", "RANK7", "cRaNkY", "\xc3\xa9t\xc3\xa9", too_long.c_str()}) {
    EXPECT_FALSE(IsValidRecordRunId(id)) << id;
  }
}

TEST(RecordRunIdTest, MadeFromUtcTimeAndRandomBits) {
  // 1795613281 s after the epoch is 2026-11-25 13:28:01 UTC.
  EXPECT_EQ(MakeRecordRunId(1795613281, 0x1a1b2), "20261125-132801-a1b2");
  EXPECT_EQ(MakeRecordRunId(0, 0), "19700101-000000-0000");
  EXPECT_TRUE(IsValidRecordRunId(MakeRecordRunId(1795613281, 0xffff)));
  EXPECT_LT(MakeRecordRunId(1795613281, 0xffff), MakeRecordRunId(1795613282, 0));
}

}  // namespace
}  // namespace bubblescope::record_format
