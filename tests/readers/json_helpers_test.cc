// Number parsing and the cut-short repair plan: every
// expected value below is worked out by hand from the input text.
#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "readers/json_number.h"
#include "readers/json_repair.h"

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
