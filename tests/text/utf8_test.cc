#include "text/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace bubblescope::text {
namespace {

size_t LengthAt0(const std::string& bytes, bool* cut_short = nullptr) {
  return Utf8SequenceLength(bytes, 0, cut_short);
}

TEST(Utf8Test, WellFormedSequencesOfEachLength) {
  EXPECT_EQ(LengthAt0("A"), 1u);
  EXPECT_EQ(LengthAt0("\xC3\xA9"), 2u);               // é
  EXPECT_EQ(LengthAt0("\xE2\x86\x92"), 3u);           // →
  EXPECT_EQ(LengthAt0("\xF0\x9F\x98\x80"), 4u);       // 😀
  EXPECT_EQ(LengthAt0("\xF4\x8F\xBF\xBF"), 4u);       // U+10FFFF, the last code point
  EXPECT_EQ(Utf8SequenceLength("a\xC3\xA9", 1), 2u);  // not only at the start
}

TEST(Utf8Test, IllFormedSequences) {
  EXPECT_EQ(LengthAt0("\x80"), 0u);              // lone continuation byte
  EXPECT_EQ(LengthAt0("\xC0\xAF"), 0u);          // overlong '/'
  EXPECT_EQ(LengthAt0("\xE0\x80\xAF"), 0u);      // overlong, 3 bytes
  EXPECT_EQ(LengthAt0("\xED\xA0\x80"), 0u);      // UTF-16 surrogate D800
  EXPECT_EQ(LengthAt0("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(LengthAt0("\xF5\x80\x80\x80"), 0u);  // lead byte never used
  EXPECT_EQ(LengthAt0("\xFF"), 0u);
  EXPECT_EQ(LengthAt0("\xE2\x28\xA1"), 0u);  // second byte not a continuation
}

TEST(Utf8Test, CutShortIsToldApartFromIllFormed) {
  bool cut_short = false;
  EXPECT_EQ(LengthAt0("\xE2\x86", &cut_short), 0u);
  EXPECT_TRUE(cut_short);
  EXPECT_EQ(LengthAt0("\xE2\x28", &cut_short), 0u);
  EXPECT_FALSE(cut_short);
  EXPECT_EQ(LengthAt0("\xC3\xA9", &cut_short), 2u);
  EXPECT_FALSE(cut_short);
}

}  // namespace
}  // namespace bubblescope::text
