#include "loader/gzip_inflate.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::Gzip;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string_view View(const simdjson::padded_string& text) { return {text.data(), text.size()}; }

// Kineto-like text with varying numbers, so it compresses like a real trace (not to nothing).
std::string SampleText(size_t events) {
  std::string text = "{\"traceEvents\":[";
  uint64_t state = 12345;
  for (size_t i = 0; i < events; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    text += "{\"ph\":\"X\",\"name\":\"k" + std::to_string(state >> 50) +
            "\",\"ts\":" + std::to_string(i * 17 + (state >> 60)) +
            ",\"dur\":" + std::to_string(state >> 54) + "},";
  }
  text += "{}]}";
  return text;
}

TEST(GzipInflateTest, MagicBytes) {
  EXPECT_TRUE(LooksLikeGzip("\x1f\x8b\x08"));
  EXPECT_FALSE(LooksLikeGzip("\x1f"));
  EXPECT_FALSE(LooksLikeGzip("{\"traceEvents\":[]}"));
  EXPECT_FALSE(LooksLikeGzip(""));
}

TEST(GzipInflateTest, SingleMember) {
  const std::string text = SampleText(2000);
  absl::StatusOr<InflatedText> inflated = InflateGzip("a.json.gz", Gzip(text));
  ASSERT_TRUE(inflated.ok()) << inflated.status();
  EXPECT_FALSE(inflated->truncated);
  EXPECT_EQ(inflated->truncated_at_compressed_byte, -1);
  EXPECT_TRUE(View(inflated->text) == text);
}

// A gzip bomb stops at the budget, at the compressed byte where the budget ran out.
TEST(GzipInflateTest, TextOverTheBudgetStopsInflating) {
  const std::string gz = Gzip(std::string(size_t{4} << 20, 'x'), 9);
  EXPECT_TRUE(InflateGzip("ok.gz", gz, int64_t{4} << 20).ok());
  absl::Status status = InflateGzip("bomb.gz", gz, int64_t{1} << 20).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), ::testing::StartsWith("bomb.gz: byte "));
  EXPECT_THAT(std::string(status.message()),
              ::testing::EndsWith(": more than 1 MiB of text, the reading budget per file"));
}

TEST(GzipInflateTest, EmptyText) {
  absl::StatusOr<InflatedText> inflated = InflateGzip("e.gz", Gzip(""));
  ASSERT_TRUE(inflated.ok()) << inflated.status();
  EXPECT_EQ(inflated->text.size(), 0u);
  EXPECT_FALSE(inflated->truncated);
}

TEST(GzipInflateTest, MultiMemberIsConcatenated) {
  const std::string a = SampleText(3000);
  const std::string b = "tail";
  const std::string c = SampleText(10);
  absl::StatusOr<InflatedText> inflated =
      InflateGzip("m.gz", Gzip(a) + Gzip(b) + Gzip("") + Gzip(c, 0));
  ASSERT_TRUE(inflated.ok()) << inflated.status();
  EXPECT_FALSE(inflated->truncated);
  EXPECT_TRUE(View(inflated->text) == a + b + c);
}

// The footer of the last member (4 bytes) says nothing about the 2+ MB before it, so the output
// must grow well past the size hint, over many chunks.
TEST(GzipInflateTest, GrowsFarPastTheSizeHint) {
  const std::string big = SampleText(60000);
  ASSERT_GT(big.size(), 2'000'000u);
  absl::StatusOr<InflatedText> inflated = InflateGzip("g.gz", Gzip(big) + Gzip("0123"));
  ASSERT_TRUE(inflated.ok()) << inflated.status();
  ASSERT_EQ(inflated->text.size(), big.size() + 4);
  EXPECT_TRUE(View(inflated->text) == big + "0123");
}

TEST(GzipInflateTest, ZeroPaddingAfterLastMemberIsIgnored) {
  const std::string text = SampleText(50);
  absl::StatusOr<InflatedText> inflated = InflateGzip("p.gz", Gzip(text) + std::string(512, '\0'));
  ASSERT_TRUE(inflated.ok()) << inflated.status();
  EXPECT_FALSE(inflated->truncated);
  EXPECT_TRUE(View(inflated->text) == text);
}

// Bytes after the last member follow the rule for text after a JSON document: the text read is
// kept and where the rest starts is said (the loader counts trailing_content), not the file
// refused.
TEST(GzipInflateTest, TrailingGarbageEndsTheTextAndSaysWhereItStarts) {
  const std::string member = Gzip("{}");
  absl::StatusOr<InflatedText> inflated = InflateGzip("t.gz", member + "garbage");
  ASSERT_TRUE(inflated.ok()) << inflated.status();
  EXPECT_TRUE(View(inflated->text) == "{}");
  EXPECT_FALSE(inflated->truncated);
  EXPECT_EQ(inflated->trailing_at_compressed_byte, static_cast<int64_t>(member.size()));
  // Padding and a second member are no trailing content.
  inflated = InflateGzip("t.gz", member + member + std::string(8, '\0'));
  ASSERT_TRUE(inflated.ok()) << inflated.status();
  EXPECT_EQ(inflated->trailing_at_compressed_byte, -1);
}

// With level 0 the layout is known byte for byte: a 10-byte header, one final stored block
// (1 header byte, LEN, NLEN), the text verbatim, then CRC32 and ISIZE. A cut at offset k inside
// the text must yield exactly its first k - 15 bytes.
TEST(GzipInflateTest, TruncatedStoredDataKeepsEveryByteBeforeTheCut) {
  const std::string text = SampleText(100);
  const std::string gz = Gzip(text, 0);
  ASSERT_EQ(gz.size(), 10 + 5 + text.size() + 8);
  ASSERT_EQ(gz[10], '\x01');  // BFINAL=1, BTYPE=stored
  constexpr size_t kDataStart = 15;
  for (size_t cut : {size_t{0}, size_t{1}, size_t{2}, size_t{9}, size_t{12}, kDataStart,
                     kDataStart + 1, kDataStart + 777, kDataStart + text.size() - 1}) {
    SCOPED_TRACE(cut);
    absl::StatusOr<InflatedText> inflated =
        InflateGzip("cut.gz", std::string_view(gz).substr(0, cut));
    ASSERT_TRUE(inflated.ok()) << inflated.status();
    EXPECT_TRUE(inflated->truncated);
    EXPECT_EQ(inflated->truncated_at_compressed_byte, static_cast<int64_t>(cut));
    const size_t kept = cut > kDataStart ? cut - kDataStart : 0;
    ASSERT_EQ(inflated->text.size(), kept);
    EXPECT_TRUE(View(inflated->text) == std::string_view(text).substr(0, kept));
  }
}

// A cut inside the 8-byte trailer loses no text, but the file is still flagged: its CRC and
// length could not be checked.
TEST(GzipInflateTest, CutInsideTrailerKeepsAllTextAndIsFlagged) {
  const std::string text = SampleText(300);
  const std::string gz = Gzip(text);
  for (size_t missing : {1, 4, 8}) {
    SCOPED_TRACE(missing);
    const size_t cut = gz.size() - missing;
    absl::StatusOr<InflatedText> inflated =
        InflateGzip("t.gz", std::string_view(gz).substr(0, cut));
    ASSERT_TRUE(inflated.ok()) << inflated.status();
    EXPECT_TRUE(inflated->truncated);
    EXPECT_EQ(inflated->truncated_at_compressed_byte, static_cast<int64_t>(cut));
    EXPECT_TRUE(View(inflated->text) == text);
  }
}

// Compressed data cut anywhere yields a prefix of the text; its last four bytes (read as a size
// hint) are arbitrary here.
TEST(GzipInflateTest, TruncatedCompressedDataYieldsAPrefix) {
  const std::string text = SampleText(5000);
  const std::string gz = Gzip(text);
  for (size_t cut : {gz.size() / 7, gz.size() / 2, gz.size() - 20}) {
    SCOPED_TRACE(cut);
    absl::StatusOr<InflatedText> inflated =
        InflateGzip("c.gz", std::string_view(gz).substr(0, cut));
    ASSERT_TRUE(inflated.ok()) << inflated.status();
    EXPECT_TRUE(inflated->truncated);
    EXPECT_EQ(inflated->truncated_at_compressed_byte, static_cast<int64_t>(cut));
    EXPECT_GT(inflated->text.size(), 0u);
    EXPECT_LT(inflated->text.size(), text.size());
    EXPECT_TRUE(View(inflated->text) == std::string_view(text).substr(0, inflated->text.size()));
  }
}

TEST(GzipInflateTest, TruncatedSecondMemberKeepsTheFirst) {
  const std::string first = SampleText(40);
  const std::string joined = Gzip(first) + Gzip("second", 0);
  const size_t cut = joined.size() - 12;  // the second member is 29 bytes: cut 17 bytes in
  absl::StatusOr<InflatedText> inflated =
      InflateGzip("s.gz", std::string_view(joined).substr(0, cut));
  ASSERT_TRUE(inflated.ok()) << inflated.status();
  EXPECT_TRUE(inflated->truncated);
  EXPECT_EQ(inflated->truncated_at_compressed_byte, static_cast<int64_t>(cut));
  EXPECT_TRUE(View(inflated->text) == first + "se");  // 17 bytes in: 15 of headers, 2 of text
}

// The CRC32 field is bytes [size-8, size-4); it is checked once all four are read.
TEST(GzipInflateTest, CorruptCrcIsAnErrorAfterTheCrcField) {
  std::string gz = Gzip(SampleText(100));
  gz[gz.size() - 8] = static_cast<char>(gz[gz.size() - 8] ^ 0x5a);
  absl::Status status = InflateGzip("crc.gz", gz).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "crc.gz: byte " + std::to_string(gz.size() - 4) +
                                  ": bad gzip data: incorrect data check");
}

// The ISIZE field (the last four bytes) must match the decoded length.
TEST(GzipInflateTest, CorruptLengthFieldIsAnError) {
  std::string gz = Gzip(SampleText(100));
  gz[gz.size() - 1] = '\x7f';
  absl::Status status = InflateGzip("len.gz", gz).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "len.gz: byte " + std::to_string(gz.size()) +
                                  ": bad gzip data: incorrect length check");
}

// Bytes 2 and 3 are CM (8 = deflate) and FLG; a bad CM is found once that pair is read.
TEST(GzipInflateTest, CorruptHeaderIsAnError) {
  std::string gz = Gzip("{}");
  gz[2] = '\x07';
  absl::Status status = InflateGzip("hdr.gz", gz).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "hdr.gz: byte 4: bad gzip data: unknown compression method");
}

// The first deflate block header is byte 10; BTYPE 11 is reserved.
TEST(GzipInflateTest, InvalidDeflateBlockIsAnError) {
  std::string gz = Gzip(SampleText(10), 0);
  gz[10] = '\x07';  // BFINAL=1, BTYPE=11
  absl::Status status = InflateGzip("blk.gz", gz).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), StartsWith("blk.gz: byte 11: bad gzip data: "));
  EXPECT_THAT(std::string(status.message()), HasSubstr("invalid block type"));
}

TEST(GzipInflateTest, DataThatIsNotGzipIsAnError) {
  absl::Status status = InflateGzip("plain.json", "{\"traceEvents\":[]}").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), StartsWith("plain.json: byte "));
  EXPECT_THAT(std::string(status.message()), HasSubstr(": bad gzip data: incorrect header check"));
}

}  // namespace
}  // namespace bubblescope
