// Outputs written piece by piece (common/output_file.h OutputStream, ScratchFile) and outputs
// whose head comes last (common/spooled_output.h), plain and gzip-compressed
// (common/gzip_segment.h): the file appears whole at the end or not at all, no scratch or
// temporary file outlives the write, and the gzip data is one member that zlib inflates back to
// exactly the bytes written.
#include "common/spooled_output.h"

#include <zlib.h>

#include <filesystem>
#include <string>

#include "common/gzip_segment.h"
#include "common/output_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;
using ::bubblescope::testing::ReadFile;
using ::bubblescope::testing::TempDir;
using ::testing::HasSubstr;

size_t EntryCount(const fs::path& dir) {
  size_t count = 0;
  for ([[maybe_unused]] const fs::directory_entry& entry : fs::directory_iterator(dir)) ++count;
  return count;
}

// Inflates the first gzip member of `data`; *consumed says how many bytes it took, so that a
// caller can tell one member from several.
std::string InflateOneMember(const std::string& data, size_t* consumed) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string text;
  int result = Z_OK;
  while (result == Z_OK) {
    char buffer[1 << 16];
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    result = inflate(&stream, Z_NO_FLUSH);
    text.append(buffer, sizeof(buffer) - stream.avail_out);
  }
  EXPECT_EQ(result, Z_STREAM_END);  // checks the trailer's CRC and size too
  *consumed = data.size() - stream.avail_in;
  inflateEnd(&stream);
  return text;
}

// Text that does not compress to nothing: a counter spelled out, several MiB of it.
std::string Body(size_t bytes) {
  std::string text;
  for (int64_t i = 0; text.size() < bytes; ++i) {
    text += "{\"ts\":" + std::to_string(i * 7919) + "},\n";
  }
  return text;
}

TEST(OutputStreamTest, TheFileAppearsOnlyWhenCommitted) {
  TempDir dir;
  const std::string path = dir.path() + "/out.txt";
  testing::WriteFile(path, "old");
  absl::StatusOr<std::unique_ptr<OutputStream>> stream = OutputStream::Open(path);
  ASSERT_TRUE(stream.ok()) << stream.status();
  ASSERT_TRUE((*stream)->Append("new ").ok());
  ASSERT_TRUE((*stream)->Append("bytes").ok());
  EXPECT_EQ(ReadFile(path), "old");  // a reader sees the old file until the commit
  ASSERT_TRUE((*stream)->Commit().ok());
  EXPECT_EQ(ReadFile(path), "new bytes");
  EXPECT_EQ(EntryCount(dir.path()), 1u);
  EXPECT_THAT((*stream)->Append("more").message(), HasSubstr("written already"));
}

TEST(OutputStreamTest, AStreamDroppedUncommittedLeavesNothing) {
  TempDir dir;
  const std::string path = dir.path() + "/out.txt";
  testing::WriteFile(path, "old");
  {
    absl::StatusOr<std::unique_ptr<OutputStream>> stream = OutputStream::Open(path);
    ASSERT_TRUE(stream.ok()) << stream.status();
    ASSERT_TRUE((*stream)->Append("half").ok());
    EXPECT_EQ(EntryCount(dir.path()), 2u);  // the file and its temporary file
  }
  EXPECT_EQ(ReadFile(path), "old");
  EXPECT_EQ(EntryCount(dir.path()), 1u);
  // A new file that is never committed is never created.
  { ASSERT_TRUE(OutputStream::Open(dir.path() + "/never.txt").ok()); }
  EXPECT_FALSE(fs::exists(dir.path() + "/never.txt"));
}

TEST(OutputStreamTest, AScratchFileHasNoNameAndIsCopiedWhole) {
  TempDir dir;
  const std::string path = dir.path() + "/out.txt";
  absl::StatusOr<std::unique_ptr<OutputStream>> stream = OutputStream::Open(path);
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<std::unique_ptr<ScratchFile>> scratch = (*stream)->NewScratch();
  ASSERT_TRUE(scratch.ok()) << scratch.status();
  const std::string body = Body(3 << 20);
  ASSERT_TRUE((*scratch)->Append(body).ok());
  EXPECT_EQ((*scratch)->size(), static_cast<int64_t>(body.size()));
  EXPECT_EQ(EntryCount(dir.path()), 1u);  // only the output's temporary file has a name
  ASSERT_TRUE((*stream)->Append("head:").ok());
  ASSERT_TRUE((*stream)->AppendScratch(**scratch).ok());
  ASSERT_TRUE((*stream)->Append(":tail").ok());
  ASSERT_TRUE((*stream)->Commit().ok());
  EXPECT_EQ(ReadFile(path), "head:" + body + ":tail");
}

TEST(OutputStreamTest, AScratchFileIsCopiedIntoADeviceByHand) {
  // /dev/null takes no copy_file_range: the copy falls back to reading and writing.
  absl::StatusOr<std::unique_ptr<OutputStream>> stream = OutputStream::Open("/dev/null");
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<std::unique_ptr<ScratchFile>> scratch = (*stream)->NewScratch();
  ASSERT_TRUE(scratch.ok()) << scratch.status();
  ASSERT_TRUE((*scratch)->Append(Body(100000)).ok());
  EXPECT_TRUE((*stream)->AppendScratch(**scratch).ok());
  EXPECT_TRUE((*stream)->Commit().ok());
}

TEST(SpooledOutputTest, PlainIsHeadBodyTail) {
  TempDir dir;
  const std::string path = dir.path() + "/doc.json";
  absl::StatusOr<std::unique_ptr<SpooledOutput>> output =
      SpooledOutput::Open(path, {}, /*gzip=*/false);
  ASSERT_TRUE(output.ok()) << output.status();
  const std::string body = Body(2 << 20);
  ASSERT_TRUE((*output)->body().Append(body.substr(0, 1000)).ok());
  ASSERT_TRUE((*output)->body().Append(body.substr(1000)).ok());
  EXPECT_FALSE(fs::exists(path));
  ASSERT_TRUE((*output)->Finish("[head]", "[tail]").ok());
  EXPECT_EQ(ReadFile(path), "[head]" + body + "[tail]");
  EXPECT_EQ(EntryCount(dir.path()), 1u);
}

TEST(SpooledOutputTest, GzipIsOneMemberOfHeadBodyTail) {
  for (const size_t body_bytes : {size_t{0}, size_t{10}, size_t{5} << 20}) {
    SCOPED_TRACE(body_bytes);
    TempDir dir;
    const std::string path = dir.path() + "/doc.json.gz";
    absl::StatusOr<std::unique_ptr<SpooledOutput>> output =
        SpooledOutput::Open(path, {}, /*gzip=*/true);
    ASSERT_TRUE(output.ok()) << output.status();
    const std::string body = Body(body_bytes).substr(0, body_bytes);
    for (size_t at = 0; at < body.size(); at += 300000) {
      ASSERT_TRUE((*output)->body().Append(body.substr(at, 300000)).ok());
    }
    const std::string head = "{\"layout\":[1,2,3],\n\"events\":[\n";
    ASSERT_TRUE((*output)->Finish(head, "\n]}\n").ok());
    const std::string compressed = ReadFile(path);
    size_t consumed = 0;
    EXPECT_EQ(InflateOneMember(compressed, &consumed), head + body + "\n]}\n");
    EXPECT_EQ(consumed, compressed.size());  // one member, nothing after it
    if (body_bytes > 1000) {                 // too short to shrink: headers and flushes outweigh it
      EXPECT_LT(compressed.size(), body.size() / 3);
    }
    EXPECT_EQ(EntryCount(dir.path()), 1u);
  }
}

TEST(GzipSegmentTest, OneLastSegmentIsWhatZlibItselfWrites) {
  // zlib's own gzip wrapper is the reference: header, deflate data and trailer byte for byte.
  const std::string text = Body(200000);
  for (const int level : {1, 6, 9}) {
    SCOPED_TRACE(level);
    std::string written = GzipHeader(level);
    StringSink sink(&written);
    DeflateSegment segment(&sink, level);
    ASSERT_TRUE(segment.Append(text).ok());
    ASSERT_TRUE(segment.End(/*last=*/true).ok());
    written += GzipTrailer(segment.crc(), segment.size());
    EXPECT_EQ(written, testing::Gzip(text, level));
  }
}

TEST(GzipSegmentTest, CrcsCombineAsIfComputedOverTheWhole) {
  const std::string a = "first part, ";
  const std::string b = Body(70000);
  const auto crc = [](const std::string& text) {
    return static_cast<uint32_t>(
        crc32(0L, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
  };
  EXPECT_EQ(CombineCrc(crc(a), crc(b), b.size()), crc(a + b));
  // The trailer keeps the size mod 2^32, little-endian.
  EXPECT_EQ(GzipTrailer(0x01020304u, (uint64_t{1} << 32) + 5),
            std::string("\x04\x03\x02\x01\x05\x00\x00\x00", 8));
}

}  // namespace
}  // namespace bubblescope
