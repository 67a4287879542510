// Values in a trace that are well-formed JSON but not what they claim to be: never rounded,
// ignored or read as something else in silence (docs/input-errors.md).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reader_test_util.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::ReadJson;
using ::bubblescope::testing::ReadResult;
using ::testing::HasSubstr;

constexpr char kKernel[] = R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,)"
                           R"("args":{"device":0,"stream":7}})";

std::string WithDistributedInfo(const std::string& info) {
  return std::string(R"({"distributedInfo": )") + info + R"(, "traceEvents": [)" + kKernel + "]}";
}

// A rank id is a whole number from 0; a world size one from 1. -1 used to be ignored (the rank
// then came from the file name) and 1.5 became rank 2.
TEST(UntrustedValuesTest, ARankOrWorldSizeThatIsNotAWholeNumberInRangeIsABadId) {
  for (const char* rank : {"-1", "1.5", "1e12", "2147483648"}) {
    SCOPED_TRACE(rank);
    const ReadResult result =
        ReadJson(WithDistributedInfo(std::string(R"({"rank": )") + rank + "}"));
    ASSERT_TRUE(result.status.ok()) << result.status;
    EXPECT_EQ(result.rank.rank, -1);  // unknown, not rounded
    EXPECT_EQ(result.rank.stats.count(ImportCounter::kBadId), 1u);
    EXPECT_EQ(result.rank.stats.first_offset(ImportCounter::kBadId), 29);  // the value's byte
  }
  for (const char* size : {"0", "2.5"}) {
    const ReadResult result =
        ReadJson(WithDistributedInfo(std::string(R"({"world_size": )") + size + "}"));
    EXPECT_EQ(result.rank.world_size, -1);
    EXPECT_EQ(result.rank.stats.count(ImportCounter::kBadId), 1u);
  }
  const ReadResult fine = ReadJson(WithDistributedInfo(R"({"rank": 3.0, "world_size": 4})"));
  EXPECT_EQ(fine.rank.rank, 3);
  EXPECT_EQ(fine.rank.world_size, 4);
  EXPECT_EQ(fine.rank.stats.count(ImportCounter::kBadId), 0u);
}

// A rank or world size of null records none (it was counted as bad_number, a bad timestamp);
// a value that is no number at all is a field of the wrong type.
TEST(UntrustedValuesTest, ANullRankIsUnknownAndAWordIsTheWrongType) {
  const ReadResult null_rank =
      ReadJson(WithDistributedInfo(R"({"rank": null, "world_size": null})"));
  ASSERT_TRUE(null_rank.status.ok()) << null_rank.status;
  EXPECT_EQ(null_rank.rank.rank, -1);
  EXPECT_EQ(null_rank.rank.world_size, -1);
  EXPECT_FALSE(null_rank.rank.stats.HasAtLeast(Severity::kWarning));
  const ReadResult word = ReadJson(WithDistributedInfo(R"({"rank": true})"));
  ASSERT_TRUE(word.status.ok()) << word.status;
  EXPECT_EQ(word.rank.stats.count(ImportCounter::kBadNumber), 0u);
  EXPECT_EQ(word.rank.stats.count(ImportCounter::kWrongFieldType), 1u);
  EXPECT_EQ(word.rank.stats.first_offset(ImportCounter::kWrongFieldType), 29);
}

// Broken JSON inside a member the reader has no use for is found and counted like any other
// syntax error after the events (On-Demand would skip it unchecked).
TEST(UntrustedValuesTest, ASyntaxErrorInAnUnreadMemberAfterTheEventsIsCounted) {
  for (const char* member : {R"("x": [1,,2])", R"("x": {"a" 1})", R"("x": tru)", R"("x": [1 2])"}) {
    SCOPED_TRACE(member);
    const std::string json = std::string(R"({"traceEvents": [)") + kKernel + "], " + member + "}";
    const ReadResult result = ReadJson(json);
    ASSERT_TRUE(result.status.ok()) << result.status;
    EXPECT_EQ(result.rank.stats.count(ImportCounter::kTruncated), 1u);
    EXPECT_THAT(result.rank.stats.truncation_detail(), HasSubstr("syntax error at byte"));
  }
  // Well-formed unread members, however large their numbers, are no error.
  const ReadResult fine = ReadJson(std::string(R"({"traceEvents": [)") + kKernel +
                                   R"(], "x": [1, {"a": null, "b": [true, false]}, "s\n", )"
                                   R"(123456789012345678901234567890, -1.5e400]})");
  ASSERT_TRUE(fine.status.ok()) << fine.status;
  EXPECT_FALSE(fine.rank.stats.HasAtLeast(Severity::kWarning));
}

// UTF-16 (with or without its byte-order mark) is named, not called a file cut short.
TEST(UntrustedValuesTest, Utf16TextIsNamed) {
  const std::string ascii = std::string(R"({"traceEvents": [)") + kKernel + "]}";
  std::string little;
  std::string big;
  for (char c : ascii) {
    little += {c, '\0'};
    big += {'\0', c};
  }
  for (const std::string& text : {little, big, "\xFF\xFE" + little, "\xFE\xFF" + big}) {
    const ReadResult result = ReadJson(text);
    EXPECT_EQ(result.status.message(),
              "t.json: byte 0: UTF-16 text, not UTF-8 JSON (convert it: iconv -f UTF-16 -t UTF-8)");
  }
}

// UTF-32 (with or without its byte-order mark) is named as such, not called UTF-16.
TEST(UntrustedValuesTest, Utf32TextIsNamed) {
  const std::string ascii = std::string(R"({"traceEvents": [)") + kKernel + "]}";
  std::string little;
  std::string big;
  for (char c : ascii) {
    little += {c, '\0', '\0', '\0'};
    big += {'\0', '\0', '\0', c};
  }
  const std::string little_mark("\xFF\xFE\0\0", 4);
  const std::string big_mark("\0\0\xFE\xFF", 4);
  for (const std::string& text : {little, big, little_mark + little, big_mark + big}) {
    const ReadResult result = ReadJson(text);
    EXPECT_EQ(result.status.message(),
              "t.json: byte 0: UTF-32 text, not UTF-8 JSON (convert it: iconv -f UTF-32 -t UTF-8)");
  }
}

// A memory sample above 2^53 bytes (8 PiB) is no usable sample: 2^63 - 1 made a predicted peak
// of -2^63 bytes.
TEST(UntrustedValuesTest, AMemorySampleBeyond2To53BytesIsBad) {
  const ReadResult result = ReadJson(std::string(R"({"traceEvents":[)") + kKernel + R"(,
    {"ph":"i","cat":"[memory]","name":"[memory]","pid":1,"tid":1,"ts":20,"s":"t",
     "args":{"Device Type":1,"Device Id":0,"Total Allocated":9223372036854775807,
     "Total Reserved":9223372036854775807}},
    {"ph":"i","cat":"[memory]","name":"[memory]","pid":1,"tid":1,"ts":30,"s":"t",
     "args":{"Device Type":1,"Device Id":0,"Total Allocated":9007199254740992,
     "Total Reserved":9007199254740992}}]})");
  ASSERT_TRUE(result.status.ok()) << result.status;
  ASSERT_EQ(result.rank.memory.size(), 1u);  // 2^53 itself is the largest kept
  EXPECT_EQ(result.rank.memory[0].allocated_bytes, kMaxMemoryBytes);
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kBadMemorySample), 1u);
}

}  // namespace
}  // namespace bubblescope
