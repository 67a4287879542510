// Whole-file errors (with their byte offsets counted by hand) and cut-short documents.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reader_test_util.h"

namespace bubblescope::testing {
namespace {

std::string ErrorOf(std::string_view json) {
  const ReadResult result = ReadJson(json);
  EXPECT_FALSE(result.status.ok()) << json;
  EXPECT_EQ(result.status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(result.status.message());
}

constexpr char kOp1[] = R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1})";
constexpr char kOp2[] = R"({"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":2,"dur":1})";

TEST(KinetoErrorsTest, EmptyAndNonJson) {
  EXPECT_EQ(ErrorOf(""), "t.json: byte 0: empty file");
  EXPECT_EQ(ErrorOf("  \n\t "), "t.json: byte 0: empty file");
  EXPECT_EQ(ErrorOf(std::string("\x1f\x8b\x08\x00garbage", 11)),
            "t.json: byte 0: not JSON: expected '{' or '['");
  EXPECT_EQ(ErrorOf("  hello"), "t.json: byte 2: not JSON: expected '{' or '['");
  EXPECT_EQ(ErrorOf("<html>"), "t.json: byte 0: not JSON: expected '{' or '['");
}

TEST(KinetoErrorsTest, TopLevelScalars) {
  EXPECT_EQ(ErrorOf("42"), "t.json: byte 0: top-level number, expected an object or array");
  EXPECT_EQ(ErrorOf("\n-1.5e3"), "t.json: byte 1: top-level number, expected an object or array");
  EXPECT_EQ(ErrorOf("\"trace\""), "t.json: byte 0: top-level string, expected an object or array");
  EXPECT_EQ(ErrorOf(" true"), "t.json: byte 1: top-level boolean, expected an object or array");
  EXPECT_EQ(ErrorOf("null"), "t.json: byte 0: top-level null, expected an object or array");
}

TEST(KinetoErrorsTest, TraceEventsMissingOrNotAnArray) {
  //                  0         1
  //                  0123456789012345678
  EXPECT_EQ(ErrorOf(R"({"traceEvents": "nope"})"),
            "t.json: byte 16: traceEvents is a string, expected an array");
  EXPECT_EQ(ErrorOf(R"({"traceEvents": {"a": 1}})"),
            "t.json: byte 16: traceEvents is an object, expected an array");
  EXPECT_EQ(ErrorOf(R"({"traceEvents": null})"),
            "t.json: byte 16: traceEvents is null, expected an array");
  // Well-formed JSON with no traceEvents key at all is other JSON, not a damaged trace: its own
  // status code lets the loader pass such files over when it finds them in a directory.
  const ReadResult other = ReadJson(R"(  {"schemaVersion": 1})");
  EXPECT_EQ(other.status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(other.status.message(), "t.json: byte 2: no traceEvents array");
}

TEST(KinetoErrorsTest, NoUsableEvents) {
  EXPECT_EQ(ErrorOf(R"({"traceEvents": []})"), "t.json: byte 16: no trace events");
  EXPECT_EQ(ErrorOf(R"({"traceEvents": [1, 2]})"),
            "t.json: byte 16: no usable trace events among 2");
  EXPECT_EQ(ErrorOf(R"([{"ph":"M","name":"process_name","pid":1,"args":{}}])"),
            "t.json: byte 0: no usable trace events among 1");
  EXPECT_EQ(ErrorOf("[]"), "t.json: byte 0: no trace events");
}

// A collector file written while another profiler held CUPTI: its metadata, the marker, and
// (here) no NCCL transfer. The error says who held CUPTI and what was lost, not a count.
TEST(KinetoErrorsTest, ACuptiHeldByAnotherProfilerIsTheReason) {
  const std::string process =
      R"({"ph":"M","name":"bubblescope_process","pid":7,"tid":0,"args":{"host":"h","pid":7}})";
  EXPECT_EQ(ErrorOf("[" + process + R"(,
{"ph":"M","name":"bubblescope_cupti_unavailable","pid":7,"tid":0,"args":{"held_by":"CUPTI for Nsight Systems","not_recorded":"kernel,memcpy,runtime","recorded":"nccl"}}])"),
            "t.json: byte 0: recorded while another profiler held CUPTI (CUPTI for Nsight "
            "Systems): kernel,memcpy,runtime not recorded, and no NCCL transfer took place; "
            "record again without torch.profiler or Nsight Systems in the job, or analyze "
            "that profiler's own trace");
  // CUDA 12's CUPTI does not name the holder; the nccl kind was off; a hostile name stays on
  // one line.
  EXPECT_EQ(ErrorOf(R"({"traceEvents": [)" + process + R"(,
{"ph":"M","name":"bubblescope_cupti_unavailable","pid":7,"tid":0,"args":{"held_by":"","not_recorded":"kernel","recorded":""}}]})"),
            "t.json: byte 16: recorded while another profiler held CUPTI: kernel not recorded; "
            "record again without torch.profiler or Nsight Systems in the job, or analyze "
            "that profiler's own trace");
  EXPECT_EQ(
      ErrorOf(
          R"([{"ph":"M","name":"bubblescope_cupti_unavailable","pid":7,"tid":0,"args":{"held_by":"a\nb\u001b[2J","not_recorded":7}}])"),
      "t.json: byte 0: recorded while another profiler held CUPTI (a b\\x1b[2J): kernels, "
      "copies and CUDA calls not recorded; record again without torch.profiler or Nsight "
      "Systems in the job, or analyze that profiler's own trace");
}

// The NCCL transfers recorded beside the marker are a trace of their own: no error.
TEST(KinetoErrorsTest, ACuptiMarkerBesideTransfersReads) {
  const ReadResult result = ReadJson(R"([
{"ph":"M","name":"bubblescope_cupti_unavailable","pid":7,"tid":0,"args":{"held_by":"x","not_recorded":"kernel","recorded":"nccl"}},
{"ph":"X","cat":"cpu_op","name":"nccl:send","pid":7,"tid":1000000000,"ts":1,"dur":2,"args":{"Collective name":"send","In msg nelems":4,"dtype":"Float","Group size":2,"Dst Rank":1}}])");
  EXPECT_TRUE(result.status.ok()) << result.status;
}

TEST(KinetoErrorsTest, InvalidUtf8) {
  //                                   0         1         2         3
  //                                   0123456789012345678901234567890123456
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [{\"ph\":\"X\",\"name\":\"a\xFF"
                    "b\"}]}"),
            "t.json: byte 36: invalid UTF-8");
}

// A raw control character in a string is named at its own byte: simdjson's position was the
// end of the file (byte 46 here).
TEST(KinetoErrorsTest, RawControlCharacterIsNamedWhereItIs) {
  //                                   0         1         2         3
  //                                   0123456789012345678901234567890123456
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [{\"ph\":\"X\",\"name\":\"a\x01"
                    "b\"}]}"),
            "t.json: byte 36: raw control character inside a string (JSON writes it escaped, as "
            "\\u00XX)");
}

TEST(KinetoErrorsTest, SyntaxErrorBeforeAnyEvent) {
  // The colon after "ph" is missing; the parser stops at the value it did not expect.
  //                  0         1         2
  //                  0123456789012345678901234567
  EXPECT_EQ(ErrorOf(R"({"traceEvents": [{"ph" "X"}]})"),
            "t.json: byte 23: malformed JSON (missing or extra comma, colon, bracket or key)");
}

TEST(KinetoErrorsTest, CutBeforeTheFirstEvent) {
  // 42 bytes: {"schemaVersion": 1, "traceEvents": [{"ph"
  EXPECT_EQ(ErrorOf(R"({"schemaVersion": 1, "traceEvents": [{"ph")"),
            "t.json: byte 42: file cut short before the first complete trace event");
  EXPECT_EQ(ErrorOf(R"({"deviceProperties": [{"id": 0, "na)"),
            "t.json: byte 35: file cut short before the first complete trace event");
}

TEST(KinetoErrorsTest, ObjectCutMidEventKeepsEverythingBefore) {
  const std::string head = R"({"distributedInfo": {"rank": 2, "world_size": 4}, "traceEvents": [)";
  const std::string json = head + kOp1 + ",\n" + kOp2 + ",\n" + R"({"ph": "X", "cat")";
  const int64_t third_event = static_cast<int64_t>(head.size() + 2 * (sizeof(kOp1) - 1) + 4);
  const int64_t kept_end = static_cast<int64_t>(head.size() + 2 * (sizeof(kOp1) - 1) + 2);
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.rank.rank, 2);
  EXPECT_EQ(result.rank.world_size, 4);
  EXPECT_EQ(IntervalCount(result.rank, IntervalKind::kCpuOp), 2u);
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(result.rank.stats.first_offset(ImportCounter::kTruncated), third_event);
  EXPECT_EQ(result.rank.stats.truncation_detail(), "cut at byte " + std::to_string(json.size()) +
                                                       "; read 2 events up to byte " +
                                                       std::to_string(kept_end));
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kUnterminatedArray), 0u);
}

TEST(KinetoErrorsTest, ArrayCutInsideAString) {
  const std::string json = std::string("[") + kOp1 + R"(,{"name":"unfinis)";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(IntervalCount(result.rank), 1u);
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(result.rank.stats.first_offset(ImportCounter::kTruncated),
            static_cast<int64_t>(sizeof(kOp1) - 1 + 2));
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kUnterminatedArray), 0u);
}

TEST(KinetoErrorsTest, CutInsideAMultiByteCharacter) {
  const std::string json = std::string("[") + kOp1 + ",{\"name\":\"caf\xC3";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(IntervalCount(result.rank), 1u);
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kTruncated), 1u);
}

TEST(KinetoErrorsTest, CutAfterTheEventsKeepsThemAll) {
  const std::string json =
      std::string(R"({"traceEvents": [)") + kOp1 + "," + kOp2 + R"(], "traceName": "./kin)";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(IntervalCount(result.rank), 2u);
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kTruncated), 1u);
}

TEST(KinetoErrorsTest, SyntaxErrorAfterSomeEventsKeepsThem) {
  const std::string head = std::string("[") + kOp1 + ", ";
  const std::string json = head + R"({"ph" "X"}, )" + kOp2 + "]";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(IntervalCount(result.rank), 1u);
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(result.rank.stats.first_offset(ImportCounter::kTruncated),
            static_cast<int64_t>(head.size()));
  EXPECT_THAT(result.rank.stats.truncation_detail(), ::testing::StartsWith("syntax error at byte"));
}

TEST(KinetoErrorsTest, ByteOrderMarkIsSkipped) {
  const std::string json = std::string("\xEF\xBB\xBF[") + kOp1 + "]";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(IntervalCount(result.rank), 1u);
  // Offsets stay file offsets: the BOM counts.
  const ReadResult bad = ReadJson("\xEF\xBB\xBF[42]");
  EXPECT_EQ(bad.status.message(), "t.json: byte 3: no usable trace events among 1");
}

// Whatever follows a complete document is trailing content, the one documented rule: every
// event of the document read and `trailing_content` counted where the rest begins. A `]`, `,`
// or `"x"` was "byte 0: document ends inside an object or array"; `garbage`, `42`, `{` or NUL
// bytes read as a file cut short and lost the last event.
TEST(KinetoErrorsTest, AnyTextAfterACompleteDocumentIsTrailingContent) {
  for (const std::string& document :
       {std::string(R"({"traceEvents": [)") + kOp1 + "," + kOp2 + "]}",
        std::string("[") + kOp1 + "," + kOp2 + "]"}) {
    for (const std::string& rest :
         {std::string("]"), std::string(","), std::string("\"x\""), std::string("garbage"),
          std::string("42"), std::string("{"), std::string("}"), std::string(4, '\0'),
          std::string(R"({"traceEvents": []})")}) {
      const std::string json = document + "\n " + rest + "\n";
      const ReadResult result = ReadJson(json);
      ASSERT_TRUE(result.status.ok()) << result.status << " after " << rest;
      EXPECT_EQ(IntervalCount(result.rank), 2u) << rest;
      EXPECT_EQ(result.rank.stats.count(ImportCounter::kTrailingContent), 1u) << rest;
      EXPECT_EQ(result.rank.stats.first_offset(ImportCounter::kTrailingContent),
                static_cast<int64_t>(document.size() + 2))
          << rest;
      EXPECT_EQ(result.rank.stats.count(ImportCounter::kTruncated), 0u) << rest;
    }
  }
  // A document cut short is no complete document: still a cut, not trailing content.
  const ReadResult cut = ReadJson(std::string(R"({"traceEvents": [)") + kOp1 + "," + kOp2);
  ASSERT_TRUE(cut.status.ok()) << cut.status;
  EXPECT_EQ(cut.rank.stats.count(ImportCounter::kTrailingContent), 0u);
  EXPECT_EQ(cut.rank.stats.count(ImportCounter::kTruncated), 1u);
}

// Kineto writes baseTimeNanoseconds after the events: a file cut before it holds times relative
// to a base it lost, so its clock is unknown (an error the loader acts on). A file with its
// base, a cut bare array (no base in that form) and a cut file of epoch times (older Kineto)
// lost none.
TEST(KinetoErrorsTest, AFileCutBeforeItsBaseTimeHasAnUnknownClock) {
  const std::string events = std::string(R"({"traceEvents": [)") + kOp1 + "," + kOp2;
  const ReadResult lost = ReadJson(events + R"(], "traceName": "x", "baseTim)");
  ASSERT_TRUE(lost.status.ok()) << lost.status;
  EXPECT_EQ(lost.rank.stats.count(ImportCounter::kUnknownClockBase), 1u);
  EXPECT_EQ(CounterSpec(ImportCounter::kUnknownClockBase).severity, Severity::kError);
  const ReadResult cut_mid_event = ReadJson(events + R"(, {"ph": "X", "na)");
  EXPECT_EQ(cut_mid_event.rank.stats.count(ImportCounter::kUnknownClockBase), 1u);

  const ReadResult whole = ReadJson(events + R"(], "baseTimeNanoseconds": 1700000000000000000})");
  EXPECT_EQ(whole.rank.stats.count(ImportCounter::kUnknownClockBase), 0u);
  const ReadResult array = ReadJson(std::string("[") + kOp1 + "," + kOp2 + ", {");
  EXPECT_EQ(array.rank.stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(array.rank.stats.count(ImportCounter::kUnknownClockBase), 0u);
  const ReadResult epoch =
      ReadJson(R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,)"
               R"("ts":1700000000000000,"dur":1}, {"ph")");
  EXPECT_EQ(epoch.rank.stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(epoch.rank.stats.count(ImportCounter::kUnknownClockBase), 0u);
}

}  // namespace
}  // namespace bubblescope::testing
