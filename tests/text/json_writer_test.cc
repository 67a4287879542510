#include "text/json_writer.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "simdjson.h"

namespace bubblescope {
namespace {

std::string FinishOrDie(JsonWriter& json) {
  absl::StatusOr<std::string> out = json.Finish();
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::string();
}

TEST(JsonWriterTest, WritesCompactNestedDocument) {
  JsonWriter json;
  json.BeginObject();
  json.Key("a");
  json.Int(1);
  json.Key("b");
  json.BeginArray();
  json.Bool(true);
  json.Null();
  json.String("x");
  json.BeginArray();
  json.EndArray();
  json.EndArray();
  json.Key("c");
  json.BeginObject();
  json.EndObject();
  json.EndObject();
  EXPECT_EQ(FinishOrDie(json), R"({"a":1,"b":[true,null,"x",[]],"c":{}})");
}

TEST(JsonWriterTest, IndentsNestedContainers) {
  JsonWriter json(JsonWriterOptions{.indent = 2});
  json.BeginObject();
  json.Key("a");
  json.BeginArray();
  json.Int(1);
  json.Int(2);
  json.EndArray();
  json.Key("e");
  json.BeginObject();
  json.EndObject();
  json.EndObject();
  EXPECT_EQ(FinishOrDie(json), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": {}\n}");
}

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControlCharacters) {
  JsonWriter json;
  json.String(std::string("q\"b\\s/\n\t\r\b\f\x01\x1f\x7f e\xC3\xA9 \xF0\x9F\x98\x80") + '\0');
  EXPECT_EQ(FinishOrDie(json),
            "\"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f\x7f e\xC3\xA9 \xF0\x9F\x98\x80\\u0000\"");
}

TEST(JsonWriterTest, ReplacesInvalidUtf8SoTheOutputParses) {
  // Lone 0xFF; overlong "/" (C0 AF); a 3-byte sequence cut short (E2 82); a UTF-16 surrogate
  // (ED A0 80). Each byte that starts no valid sequence becomes U+FFFD.
  const std::string input =
      "a\xFF"
      "b\xC0\xAF"
      "c\xED\xA0\x80"
      "d\xE2\x82";
  const std::string r = "\xEF\xBF\xBD";
  JsonWriter json;
  json.BeginArray();
  json.String(input);
  json.EndArray();
  std::string out = FinishOrDie(json);
  std::string expected_text = "a" + r + "b" + r + r + "c" + r + r + r + "d" + r + r;
  EXPECT_EQ(out, "[\"" + expected_text + "\"]");

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS);
  std::string_view parsed;
  ASSERT_EQ(doc.at(0).get(parsed), simdjson::SUCCESS);
  EXPECT_EQ(parsed, expected_text);
}

TEST(JsonWriterTest, EscapedStringsRoundTripThroughAParser) {
  const std::string tricky = "name \"with\" \\back\\slashes\n and caf\xC3\xA9 \x02";
  JsonWriter json;
  json.BeginObject();
  json.Key(tricky);
  json.String(tricky);
  json.EndObject();
  std::string out = FinishOrDie(json);
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  ASSERT_EQ(parser.parse(out).get(object), simdjson::SUCCESS);
  std::string_view value;
  ASSERT_EQ(object[tricky].get(value), simdjson::SUCCESS);
  EXPECT_EQ(value, tricky);
}

// A double past 2^53 is written in exponent form: its shortest plain form (1.2e20 prints as
// 119999999999999967232) is an integer too big for simdjson, and the project's own reader
// refused a report the project wrote.
TEST(JsonWriterTest, LargeDoublesAreWrittenSoAParserReadsThemBack) {
  const double values[] = {1.1999999999999997e20, -9.3e18, 9007199254740992.0, 1.7e308,
                           9007199254740991.0};
  JsonWriter json;
  json.BeginArray();
  for (double value : values) json.Double(value);
  json.EndArray();
  const std::string out = FinishOrDie(json);
  EXPECT_EQ(out,
            "[1.1999999999999997e+20,-9.3e+18,9.007199254740992e+15,1.7e+308,"
            "9007199254740991]");
  simdjson::ondemand::parser parser;
  const simdjson::padded_string padded(out);
  simdjson::ondemand::document doc;
  ASSERT_EQ(parser.iterate(padded).get(doc), simdjson::SUCCESS);
  size_t i = 0;
  for (auto element : doc.get_array()) {
    double read = 0.0;
    ASSERT_EQ(element.get_double().get(read), simdjson::SUCCESS) << i;
    EXPECT_EQ(read, values[i]);
    ++i;
  }
  EXPECT_EQ(i, std::size(values));
}

TEST(JsonWriterTest, WritesIntegerExtremes) {
  JsonWriter json;
  json.BeginArray();
  json.Int(std::numeric_limits<int64_t>::min());
  json.Int(0);
  json.UInt(std::numeric_limits<uint64_t>::max());
  json.EndArray();
  EXPECT_EQ(FinishOrDie(json), "[-9223372036854775808,0,18446744073709551615]");
}

TEST(JsonWriterTest, DecimalIsExactFixedPointWithoutTrailingZeros) {
  JsonWriter json;
  json.BeginArray();
  json.Decimal(1234567, 3);
  json.Decimal(1500, 3);
  json.Decimal(2000, 3);
  json.Decimal(-5, 3);
  json.Decimal(0, 3);
  json.Decimal(7, 0);
  json.Decimal(5, 18);
  json.Decimal(9007199254740993, 3);  // 2^53 + 1 ns: a double would lose the last digit
  json.Decimal(std::numeric_limits<int64_t>::min(), 3);
  json.EndArray();
  EXPECT_EQ(FinishOrDie(json),
            "[1234.567,1.5,2,-0.005,0,7,0.000000000000000005,9007199254740.993,"
            "-9223372036854775.808]");
}

TEST(JsonWriterTest, DoublesUseTheShortestRoundTripForm) {
  JsonWriter json;
  json.BeginArray();
  json.Double(0.1);
  json.Double(-2.5);
  json.Double(1e21);
  json.Double(3.0);
  json.EndArray();
  std::string out = FinishOrDie(json);
  EXPECT_EQ(out, "[0.1,-2.5,1e+21,3]");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS);
  double third = 0;
  ASSERT_EQ(doc.at(2).get(third), simdjson::SUCCESS);
  EXPECT_EQ(third, 1e21);
}

TEST(JsonWriterTest, ScalarRootIsAValidDocument) {
  JsonWriter json;
  json.String("only");
  EXPECT_EQ(FinishOrDie(json), "\"only\"");
}

// Each misuse must surface from Finish() and never as a returned document.
TEST(JsonWriterTest, ValueWithoutKeyInObjectFails) {
  JsonWriter json;
  json.BeginObject();
  json.Int(1);
  json.EndObject();
  EXPECT_FALSE(json.Finish().ok());
}

TEST(JsonWriterTest, KeyInsideArrayFails) {
  JsonWriter json;
  json.BeginArray();
  json.Key("k");
  json.EndArray();
  EXPECT_FALSE(json.Finish().ok());
}

TEST(JsonWriterTest, TwoKeysInARowFail) {
  JsonWriter json;
  json.BeginObject();
  json.Key("a");
  json.Key("b");
  json.Int(1);
  json.EndObject();
  EXPECT_FALSE(json.Finish().ok());
}

TEST(JsonWriterTest, KeyWithoutValueFails) {
  JsonWriter json;
  json.BeginObject();
  json.Key("a");
  json.EndObject();
  EXPECT_FALSE(json.Finish().ok());
}

TEST(JsonWriterTest, MismatchedEndFails) {
  JsonWriter json;
  json.BeginObject();
  json.EndArray();
  EXPECT_FALSE(json.Finish().ok());
}

TEST(JsonWriterTest, UnclosedContainerFails) {
  JsonWriter json;
  json.BeginArray();
  json.Int(1);
  EXPECT_FALSE(json.Finish().ok());
}

TEST(JsonWriterTest, SecondRootValueFails) {
  JsonWriter json;
  json.Int(1);
  json.Int(2);
  EXPECT_FALSE(json.Finish().ok());
}

TEST(JsonWriterTest, EmptyDocumentFails) {
  JsonWriter json;
  EXPECT_FALSE(json.Finish().ok());
}

TEST(JsonWriterTest, NonFiniteDoubleFails) {
  JsonWriter nan;
  nan.Double(std::nan(""));
  EXPECT_FALSE(nan.Finish().ok());
  JsonWriter inf;
  inf.BeginArray();
  inf.Double(std::numeric_limits<double>::infinity());
  inf.EndArray();
  EXPECT_FALSE(inf.Finish().ok());
}

TEST(JsonWriterTest, BadDecimalScaleFails) {
  JsonWriter json;
  json.Decimal(1, 19);
  EXPECT_FALSE(json.Finish().ok());
}

TEST(JsonWriterTest, FirstMisuseIsKept) {
  JsonWriter json;
  json.BeginArray();
  json.Key("first");
  json.EndObject();  // a second misuse that must not replace the first message
  absl::StatusOr<std::string> out = json.Finish();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("first"), std::string::npos);
}

}  // namespace
}  // namespace bubblescope
