// A document's events as written (readers/raw_events.h): every event's fields handed over as
// their exact text, and a document broken anywhere, even inside a value nothing reads (an args
// object, a string's escapes, a number, after the root), refused before any event is handed over.
#include "readers/raw_events.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope::kineto {
namespace {

struct Streamed {
  absl::Status status;
  std::vector<std::string> events;  // each as "key=value;..." of its raw fields
  RawMembers members;
};

Streamed Stream(const std::string& text) {
  Streamed streamed;
  const simdjson::padded_string json(text);
  streamed.status = StreamRawEvents("t.json", json, &streamed.members, [&](const RawEvent& event) {
    std::string fields;
    for (const RawField& field : event.fields) {
      fields += std::string(field.key) + "=" + std::string(field.value) + ";";
    }
    streamed.events.push_back(fields);
  });
  return streamed;
}

constexpr char kBroken[] =
    "t.json: its JSON is broken before its end (read up to there), so its events cannot be "
    "written again";

TEST(RawEventsTest, FieldsComeAsWritten) {
  const Streamed streamed =
      Stream(R"({"baseTimeNanoseconds": 1000, "traceEvents": [)"
             R"({"ph":"X","name":"a\"b\u00e9","ts":1.500,"dur":2,"args":{"n":[1,-2.5e3,true,null],)"
             R"("big":123456789012345678901234567890}},)"
             R"({"ph":"i","ts":3}]})");
  ASSERT_TRUE(streamed.status.ok()) << streamed.status;
  EXPECT_EQ(streamed.members.base_time, "1000");
  ASSERT_EQ(streamed.events.size(), 2u);
  EXPECT_EQ(streamed.events[0],
            R"(ph="X";name="a\"b\u00e9";ts=1.500;dur=2;)"
            R"(args={"n":[1,-2.5e3,true,null],"big":123456789012345678901234567890};)");
  EXPECT_EQ(streamed.events[1], R"(ph="i";ts=3;)");
}

TEST(RawEventsTest, ABreakAnywhereIsFoundBeforeAnyEvent) {
  const std::string before = R"({"traceEvents": [{"ph":"X","ts":1,"dur":1,"args":)";
  const std::string after = R"(},{"ph":"i","ts":2}]})";
  for (const std::string args :
       {R"({"a": tru})", R"({"a": "x\qy"})", R"({"a": 1.e})", R"({"a": [1 2]})", R"({"a\q": 1})",
        R"({"a": nul})", R"({"a": -})"}) {
    SCOPED_TRACE(args);
    const Streamed streamed = Stream(before + args + after);
    EXPECT_EQ(streamed.status.message(), kBroken);
    EXPECT_TRUE(streamed.events.empty());
  }
  // Tokens after the document's end.
  const Streamed trailing = Stream(before + "{}" + after + " {}");
  EXPECT_EQ(trailing.status.message(), kBroken);
  EXPECT_TRUE(trailing.events.empty());
}

}  // namespace
}  // namespace bubblescope::kineto
