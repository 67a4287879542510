// Number parsing, string unescaping, UTF-8 checking and the cut-short repair plan: every
// expected value below is worked out by hand from the input text.
#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "readers/json_number.h"
#include "readers/json_repair.h"
#include "readers/json_tokens.h"

namespace bubblescope::kineto {
namespace {

int64_t Nanos(std::string_view token) {
  int64_t out = -12345;
  EXPECT_EQ(MicrosToNanos(token, &out), NumberStatus::kOk) << token;
  return out;
}

int64_t Integer(std::string_view token) {
  int64_t out = -12345;
  EXPECT_EQ(ParseInteger(token, &out), NumberStatus::kOk) << token;
  return out;
}

NumberStatus NanosStatus(std::string_view token) {
  int64_t out = 0;
  return MicrosToNanos(token, &out);
}

TEST(JsonNumberTest, AbsoluteMicrosKeepEveryDigit) {
  EXPECT_EQ(Nanos("1682725898236567"), 1682725898236567000);
  EXPECT_EQ(Nanos("1682725898236567.123"), 1682725898236567123);
  EXPECT_EQ(Nanos("1682725898236567.25"), 1682725898236567250);
  EXPECT_EQ(Nanos("1682725898236567.1235"), 1682725898236567124);  // 4th digit 5 rounds up
  EXPECT_EQ(Nanos("1682725898236567.1234999"), 1682725898236567123);
}

TEST(JsonNumberTest, RelativeMicrosAndDurations) {
  EXPECT_EQ(Nanos("1234.567"), 1234567);
  EXPECT_EQ(Nanos("68.0"), 68000);
  EXPECT_EQ(Nanos("0.001"), 1);
  EXPECT_EQ(Nanos("0.0005"), 1);  // half away from zero
  EXPECT_EQ(Nanos("0.0004"), 0);
  EXPECT_EQ(Nanos("-1.0005"), -1001);
  EXPECT_EQ(Nanos("-1.0004"), -1000);
  EXPECT_EQ(Nanos("-0"), 0);
  EXPECT_EQ(Nanos("0.0000"), 0);
  EXPECT_EQ(Nanos("42 \n"), 42000);  // raw tokens carry trailing whitespace
}

TEST(JsonNumberTest, ExponentsAreExact) {
  EXPECT_EQ(Nanos("1.5e3"), 1500000);
  EXPECT_EQ(Nanos("1.5E-3"), 2);  // 1.5 ns rounds away from zero
  EXPECT_EQ(Nanos("12e-4"), 1);   // 1.2 ns
  EXPECT_EQ(Nanos("1.682725898236567123e15"), 1682725898236567123);
  EXPECT_EQ(Nanos("1e-400"), 0);
  EXPECT_EQ(NanosStatus("1e400"), NumberStatus::kOutOfRange);
  EXPECT_EQ(NanosStatus("1e999999999999999999999"), NumberStatus::kOutOfRange);
}

TEST(JsonNumberTest, Int64Limits) {
  EXPECT_EQ(Nanos("9223372036854775.807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(NanosStatus("9223372036854775.808"), NumberStatus::kOutOfRange);
  EXPECT_EQ(Nanos("-9223372036854775.808"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(NanosStatus("12345678901234567.8"), NumberStatus::kOutOfRange);
  EXPECT_EQ(Integer("9223372036854775807"), std::numeric_limits<int64_t>::max());
  int64_t out = 0;
  EXPECT_EQ(ParseInteger("9223372036854775808", &out), NumberStatus::kOutOfRange);
  EXPECT_EQ(Integer("00000000000000000000001"), 1);  // many digits, small value
  EXPECT_EQ(Integer("123456789012345678901234567890e-20"), 1234567890);
}

TEST(JsonNumberTest, IntegersRoundFractions) {
  EXPECT_EQ(Integer("3.0"), 3);
  EXPECT_EQ(Integer("2.5"), 3);
  EXPECT_EQ(Integer("-2.5"), -3);
  EXPECT_EQ(Integer("7"), 7);
}

TEST(JsonNumberTest, RejectsWhatIsNotANumber) {
  for (std::string_view token : {"", "abc", "1.", ".5", "-", "1e", "1e+", "1x", "--1", "+1",
                                 "\"12\"", "12 3", "0x10", "NaN"}) {
    EXPECT_EQ(NanosStatus(token), NumberStatus::kNotNumber) << token;
  }
}

TEST(JsonTextTest, StringTokenContent) {
  std::string_view content;
  ASSERT_TRUE(StringTokenContent("\"abc\"  \n", &content));
  EXPECT_EQ(content, "abc");
  ASSERT_TRUE(StringTokenContent("\"\"", &content));
  EXPECT_EQ(content, "");
  EXPECT_FALSE(StringTokenContent("abc", &content));
  EXPECT_FALSE(StringTokenContent("\"", &content));
  EXPECT_FALSE(StringTokenContent("12", &content));
}

TEST(JsonTextTest, KeyTextStopsAtTheUnescapedQuote) {
  EXPECT_EQ(KeyText("ph\": 1"), "ph");
  EXPECT_EQ(KeyText(R"(a\"b": 1)"), R"(a\"b)");
  EXPECT_EQ(KeyText(R"(a\\": 1)"), R"(a\\)");
}

TEST(JsonTextTest, UnescapeLeavesPlainTextInPlace) {
  std::string scratch;
  const std::string_view plain = "aten::mm";
  const std::string_view out = UnescapeJsonString(plain, &scratch);
  EXPECT_EQ(out.data(), plain.data());
  EXPECT_EQ(out, "aten::mm");
}

TEST(JsonTextTest, UnescapeEscapes) {
  std::string scratch;
  EXPECT_EQ(UnescapeJsonString(R"(caf\u00e9)", &scratch), "caf\xC3\xA9");
  EXPECT_EQ(UnescapeJsonString(R"(a\"b\\c\/d\n\t)", &scratch), "a\"b\\c/d\n\t");
  EXPECT_EQ(UnescapeJsonString(R"(\ud83d\ude00!)", &scratch), "\xF0\x9F\x98\x80!");
  EXPECT_EQ(UnescapeJsonString(R"(\u20ac)", &scratch), "\xE2\x82\xAC");
  EXPECT_EQ(UnescapeJsonString(R"(x\ud83dy)", &scratch), "x\xEF\xBF\xBDy");  // lone surrogate
  EXPECT_EQ(UnescapeJsonString(R"(\ude00)", &scratch), "\xEF\xBF\xBD");
}

TEST(JsonTextTest, FirstInvalidUtf8) {
  bool truncated = true;
  EXPECT_EQ(FirstInvalidUtf8("abc", &truncated), std::string_view::npos);
  EXPECT_EQ(FirstInvalidUtf8("a\xC3\xA9\xF0\x9F\x98\x80"
                             "b",
                             &truncated),
            std::string_view::npos);
  EXPECT_EQ(FirstInvalidUtf8("ab\xFF", &truncated), 2u);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(FirstInvalidUtf8("ab\xE2\x82", &truncated), 2u);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(FirstInvalidUtf8("\xC0\x80", &truncated), 0u);          // overlong
  EXPECT_EQ(FirstInvalidUtf8("x\xED\xA0\x80", &truncated), 1u);     // surrogate
  EXPECT_EQ(FirstInvalidUtf8("\xF4\x90\x80\x80", &truncated), 0u);  // above U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("ab\xC3(", &truncated), 2u);
  EXPECT_FALSE(truncated);
}

TEST(JsonRepairTest, ObjectFormCutMidEvent) {
  //                          0         1         2         3
  //                          0123456789012345678901234567890123456
  const RepairPlan plan = PlanRepair(R"({"traceEvents": [{"a":1},{"b":2},{"c")");
  ASSERT_TRUE(plan.repairable);
  EXPECT_FALSE(plan.only_missing_close);
  EXPECT_EQ(plan.keep_bytes, 32u);
  EXPECT_EQ(plan.closers, "]}");
  EXPECT_EQ(plan.complete_events, 2u);
  EXPECT_EQ(plan.damage_offset, 33u);
}

TEST(JsonRepairTest, ArrayMissingOnlyItsBracket) {
  const RepairPlan plan = PlanRepair("[{\"a\":1},{\"b\":2}, ");
  ASSERT_TRUE(plan.repairable);
  EXPECT_TRUE(plan.only_missing_close);
  EXPECT_EQ(plan.keep_bytes, 16u);
  EXPECT_EQ(plan.closers, "]");
  EXPECT_EQ(plan.complete_events, 2u);
  EXPECT_EQ(plan.damage_offset, 18u);
}

TEST(JsonRepairTest, ArrayCutMidEvent) {
  const RepairPlan plan = PlanRepair(R"([{"a":1},{"b")");
  ASSERT_TRUE(plan.repairable);
  EXPECT_FALSE(plan.only_missing_close);
  EXPECT_EQ(plan.keep_bytes, 8u);
  EXPECT_EQ(plan.complete_events, 1u);
  EXPECT_EQ(plan.damage_offset, 9u);
}

TEST(JsonRepairTest, StringsHideBracketsAndEscapedQuotes) {
  const RepairPlan plan = PlanRepair(R"({"traceEvents": [{"n":"a\"}"},{"n":"b\\"},{"n":"c)");
  ASSERT_TRUE(plan.repairable);
  EXPECT_EQ(plan.keep_bytes, 41u);
  EXPECT_EQ(plan.complete_events, 2u);
  EXPECT_EQ(plan.damage_offset, 42u);
}

TEST(JsonRepairTest, CutAfterTheEventsKeepsWholeMembers) {
  const RepairPlan plan = PlanRepair(R"({"traceEvents": [{"a":1}], "x": 1, "y": [1, 2)");
  ASSERT_TRUE(plan.repairable);
  EXPECT_EQ(plan.keep_bytes, 33u);
  EXPECT_EQ(plan.closers, "}");
  EXPECT_EQ(plan.complete_events, 1u);
  EXPECT_EQ(plan.damage_offset, 35u);
}

TEST(JsonRepairTest, OnlyTheTopLevelTraceEventsCounts) {
  const RepairPlan plan =
      PlanRepair(R"({"meta": {"traceEvents": [1]}, "traceEvents": [{"a":1},{"b")");
  ASSERT_TRUE(plan.repairable);
  EXPECT_EQ(plan.keep_bytes, 54u);
  EXPECT_EQ(plan.closers, "]}");
  EXPECT_EQ(plan.complete_events, 1u);
  EXPECT_EQ(plan.damage_offset, 55u);
}

TEST(JsonRepairTest, CompleteOrMismatchedDocumentsDoNotEndEarly) {
  for (std::string_view json : {R"({"traceEvents":[]})", R"({"traceEvents":[}})", "[1]"}) {
    const RepairPlan plan = PlanRepair(json);
    EXPECT_FALSE(plan.ends_early) << json;
    EXPECT_FALSE(plan.repairable) << json;
  }
}

TEST(JsonRepairTest, EndingEarlyWithNothingCompleteToKeep) {
  for (std::string_view json : {R"({"traceEvents":[{"a")", R"({"a": "b)", "[1", "{"}) {
    const RepairPlan plan = PlanRepair(json);
    EXPECT_TRUE(plan.ends_early) << json;
    EXPECT_FALSE(plan.repairable) << json;
  }
}

}  // namespace
}  // namespace bubblescope::kineto
