#include "loader/file_source.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::Gzip;
using ::bubblescope::testing::TempDir;
using ::testing::HasSubstr;

std::string_view View(simdjson::padded_string_view text) { return {text.data(), text.size()}; }

TEST(FileSourceTest, PlainFileIsReadAsIs) {
  TempDir dir;
  const std::string text = "{\"traceEvents\":[{\"name\":\"caf\\u00e9\"}]}";
  const std::string path = dir.Write("rank0.json", text);
  absl::StatusOr<FileContents> contents = ReadFileSource(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_FALSE(contents->gzip);
  EXPECT_FALSE(contents->truncated);
  EXPECT_TRUE(View(contents->text) == text);
}

TEST(FileSourceTest, EmptyFile) {
  TempDir dir;
  absl::StatusOr<FileContents> contents = ReadFileSource(dir.Write("empty.json", ""));
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->text.size(), 0u);
  EXPECT_FALSE(contents->gzip);
}

// gzip is told by the magic bytes: a gzip file named .json is inflated, a plain file named
// .json.gz is not.
TEST(FileSourceTest, GzipDetectedByContentNotName) {
  TempDir dir;
  const std::string text = "[{\"ph\":\"X\"}]";
  absl::StatusOr<FileContents> gz = ReadFileSource(dir.Write("looks_plain.json", Gzip(text)));
  ASSERT_TRUE(gz.ok()) << gz.status();
  EXPECT_TRUE(gz->gzip);
  EXPECT_TRUE(View(gz->text) == text);

  absl::StatusOr<FileContents> plain = ReadFileSource(dir.Write("looks_gzip.json.gz", text));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->gzip);
  EXPECT_TRUE(View(plain->text) == text);
}

TEST(FileSourceTest, TruncatedGzipFileIsNotAnError) {
  TempDir dir;
  const std::string text(5000, 'x');
  const std::string gz = Gzip(text, 0);
  const std::string path = dir.Write("cut.json.gz", gz.substr(0, 1015));
  absl::StatusOr<FileContents> contents = ReadFileSource(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_TRUE(contents->gzip);
  EXPECT_TRUE(contents->truncated);
  EXPECT_EQ(contents->truncated_at_compressed_byte, 1015);
  EXPECT_EQ(contents->text.size(), 1000u);  // 1015 minus the 15 header bytes of a stored block
}

TEST(FileSourceTest, CorruptGzipFileNamesThePath) {
  TempDir dir;
  std::string gz = Gzip("{}");
  gz[2] = '\x07';
  const std::string path = dir.Write("bad.json.gz", gz);
  absl::Status status = ReadFileSource(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), path + ": byte 4: bad gzip data: unknown compression method");
}

TEST(FileSourceTest, MissingFile) {
  TempDir dir;
  const std::string path = dir.path() + "/nope.json";
  absl::Status status = ReadFileSource(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), path + ": " + std::strerror(ENOENT));
}

TEST(FileSourceTest, DirectoryGivenAsFile) {
  TempDir dir;
  absl::Status status = ReadFileSource(dir.path()).status();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), dir.path() + ": " + std::strerror(EISDIR));
}

TEST(FileSourceTest, UnreadableFile) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  TempDir dir;
  const std::string path = dir.Write("secret.json", "{}");
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  absl::Status status = ReadFileSource(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(), path + ": " + std::strerror(EACCES));
}

TEST(FileSourceTest, PipeIsReadToItsEnd) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string text = "{\"traceEvents\":[]}";
  ASSERT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fds[1]);
  absl::StatusOr<FileContents> contents = ReadFileSource("/proc/self/fd/" + std::to_string(fds[0]));
  close(fds[0]);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_TRUE(View(contents->text) == text);
}

// Two bytes of gzip magic and nothing else: a file cut short, not an empty one.
TEST(FileSourceTest, AGzipStubIsCutShortNotEmpty) {
  TempDir dir;
  const std::string path = dir.Write("stub.json.gz", std::string("\x1f\x8b", 2));
  const absl::Status status = ReadFileSource(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), path + ": byte 2: gzip data cut short before any of its text");
}

// The reading budget: a regular file over it is refused before a byte is read, a stream when
// it passes it; exactly the budget is fine.
TEST(FileSourceTest, TextOverTheBudgetIsRefusedWithItsOffset) {
  TempDir dir;
  const std::string path = dir.Write("big.json", std::string(1000, ' '));
  EXPECT_TRUE(ReadFileSource(path, 1000).ok());
  absl::Status status = ReadFileSource(path, 999).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(), path +
                                  ": byte 999: more than 0 MiB of text, the reading "
                                  "budget per file");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string text(5000, ' ');
  ASSERT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fds[1]);
  status = ReadFileSource("/proc/self/fd/" + std::to_string(fds[0]), 4096).status();
  close(fds[0]);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr(": byte 4096: "));
}

// A worker's buffer serves file after file: each read gives that file's bytes exactly, with
// simdjson's padding zeroed after them (a shorter file is read over a longer one's bytes), and
// the buffer grows only for a larger file, by an eighth more than it needs.
TEST(FileSourceTest, OneBufferServesFileAfterFile) {
  TempDir dir;
  const std::string longer = "{\"traceEvents\":[{\"name\":\"a long first file\"}]}";
  const std::string shorter = "[]";
  const std::string gzipped = "{\"traceEvents\":[]}";
  ReadBuffer buffer;
  absl::StatusOr<FileContents> first = ReadFileSource(dir.Write("a.json", longer), 1000, &buffer);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(View(first->text), longer);
  EXPECT_EQ(buffer.capacity(), longer.size() + longer.size() / 8);
  const char* where = first->text.data();

  absl::StatusOr<FileContents> second = ReadFileSource(dir.Write("b.json", shorter), 1000, &buffer);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(View(second->text), shorter);
  EXPECT_EQ(second->text.data(), where);  // the same memory
  EXPECT_EQ(second->text.capacity(), shorter.size() + simdjson::SIMDJSON_PADDING);
  for (size_t i = 0; i < simdjson::SIMDJSON_PADDING; ++i) {
    ASSERT_EQ(second->text.data()[shorter.size() + i], '\0') << i;
  }
  EXPECT_EQ(buffer.capacity(), longer.size() + longer.size() / 8);

  // gzip text is inflated into memory of its own; the buffer held only the compressed bytes.
  absl::StatusOr<FileContents> third =
      ReadFileSource(dir.Write("c.json.gz", Gzip(gzipped)), 1000, &buffer);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->gzip);
  EXPECT_EQ(View(third->text), gzipped);
  EXPECT_EQ(third->text.data(), third->owned.data());
}

}  // namespace
}  // namespace bubblescope
