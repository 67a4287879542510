// The loader's reader seam: each file goes to the reader that claims it by its first bytes
// (gzip inflated), by its name only where no content tells; a file no reader claims is one line.
#include "loader/trace_readers.h"

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/file_source.h"
#include "loader/gzip_inflate.h"
#include "loader/trace_loader.h"
#include "readers/trace_reader.h"
#include "simdjson.h"
#include "support/test_files.h"
#include "writers/digest_writer.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::Gzip;
using ::bubblescope::testing::TempDir;

// One kernel of 5 µs at 1000 µs on stream 7, as Kineto writes it.
constexpr std::string_view kKinetoText =
    R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1000,)"
    R"("dur":5,"args":{"device":0,"stream":7}}]})";

Rank DigestRank(int32_t rank_id) {
  Rank rank;
  rank.rank = rank_id;
  rank.world_size = 8;
  rank.host = "node7";
  return rank;
}

// The name of the reader the loader gives `head` under `path`, or "" when none claims it.
std::string ClaimedBy(std::string_view head, std::string_view path) {
  const std::vector<std::unique_ptr<TraceReader>> readers = MakeTraceReaders();
  const TraceReader* reader = ClaimingReader(readers, head, path);
  return reader == nullptr ? "" : std::string(reader->format_name());
}

TEST(TraceReadersTest, EachFormatIsToldByItsContentWhateverItsName) {
  const std::string digest = digest::Encode(DigestRank(3));
  EXPECT_EQ(ClaimedBy(digest, "rank3.json"), "digest");
  EXPECT_EQ(ClaimedBy(digest, "rank3"), "digest");
  EXPECT_EQ(ClaimedBy(kKinetoText, "rank3.bsdigest"), "kineto");
  EXPECT_EQ(ClaimedBy(kKinetoText, "/dev/fd/63"), "kineto");
  EXPECT_EQ(ClaimedBy(" \n[{\"ph\":\"X\"}]", "trace"), "kineto");
  EXPECT_EQ(ClaimedBy("\xEF\xBB\xBF{}", "trace"), "kineto");           // UTF-8 byte-order mark
  EXPECT_EQ(ClaimedBy(std::string("\xFF\xFE{\0", 4), "t"), "kineto");  // UTF-16: its reader says so
}

// Damaged files are still their format's to describe, told by the name when content cannot.
TEST(TraceReadersTest, DamagedFilesAreClaimedByName) {
  EXPECT_EQ(ClaimedBy("", "rank0.json"), "kineto");
  EXPECT_EQ(ClaimedBy("garbage", "RANK0.JSON.GZ"), "kineto");
  EXPECT_EQ(ClaimedBy("garbage", "rank0.bsdigest"), "digest");
  EXPECT_EQ(ClaimedBy("garbage", "notes.txt"), "");
  EXPECT_EQ(ClaimedBy("", "notes"), "");
}

TEST(TraceReadersTest, ADigestNamedLikeJsonIsReadAsADigest) {
  TempDir dir;
  const std::string path = dir.Write("rank3.json", digest::Encode(DigestRank(3)));
  absl::StatusOr<Trace> trace = LoadTrace({path}, LoadOptions());
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 1u);
  EXPECT_EQ(trace->ranks[0].rank, 3);
  EXPECT_EQ(trace->ranks[0].host, "node7");
  EXPECT_EQ(trace->ranks[0].source_path, path);
}

// gzip is undone before the head is sniffed: a gzip Kineto file without a telling name.
TEST(TraceReadersTest, GzipIsInflatedBeforeSniffing) {
  TempDir dir;
  const std::string path = dir.Write("trace_rank1", Gzip(kKinetoText));
  absl::StatusOr<Trace> trace = LoadTrace({path}, LoadOptions());
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 1u);
  EXPECT_EQ(trace->ranks[0].rank, 1);  // from the name, as for any format
  EXPECT_TRUE(trace->ranks[0].HasGpuActivity());
}

TEST(TraceReadersTest, AFileNoReaderClaimsIsOneLineNamingTheFormats) {
  TempDir dir;
  const std::string path = dir.Write("notes.txt", "hello");
  absl::Status status = LoadTrace({path}, LoadOptions()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            path + ": not a trace of a format bubblescope reads (digest, nsys-sqlite, kineto)");
}

// A stream can be read once only: it is read whole, and sniffed from that text.
TEST(TraceReadersTest, APipeIsSniffedFromItsWholeText) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string digest = digest::Encode(DigestRank(5));
  ASSERT_EQ(write(fds[1], digest.data(), digest.size()), static_cast<ssize_t>(digest.size()));
  close(fds[1]);
  absl::StatusOr<Trace> trace =
      LoadTrace({"/proc/self/fd/" + std::to_string(fds[0])}, LoadOptions());
  close(fds[0]);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 1u);
  EXPECT_EQ(trace->ranks[0].rank, 5);
}

// The reader a format's name gives, from the loader's list.
TraceReader* ReaderNamed(const std::vector<std::unique_ptr<TraceReader>>& readers,
                         std::string_view name) {
  for (const std::unique_ptr<TraceReader>& reader : readers) {
    if (reader->format_name() == name) return reader.get();
  }
  return nullptr;
}

absl::StatusOr<FileRanks> ReadText(TraceReader& reader, const std::string& path,
                                   std::string_view text) {
  const simdjson::padded_string padded(text);
  ReaderOptions options;
  options.text = padded;
  return reader.Read(path, options);
}

// The seam gives back what the file held: its ranks, and whether it named them itself.
TEST(TraceReadersTest, EachReaderReturnsTheRanksOfItsFile) {
  const std::vector<std::unique_ptr<TraceReader>> readers = MakeTraceReaders();
  TraceReader* kineto = ReaderNamed(readers, "kineto");
  TraceReader* digest = ReaderNamed(readers, "digest");
  ASSERT_NE(kineto, nullptr);
  ASSERT_NE(digest, nullptr);

  absl::StatusOr<FileRanks> json = ReadText(*kineto, "rank0.json", kKinetoText);
  ASSERT_TRUE(json.ok()) << json.status();
  ASSERT_EQ(json->ranks.size(), 1u);
  EXPECT_FALSE(json->named_by_file);
  EXPECT_FALSE(json->bubblescope_merged);
  size_t kernels = 0;
  for (const Timeline& timeline : json->ranks[0].timelines) {
    for (const Interval& interval : timeline.intervals) {
      ++kernels;
      EXPECT_EQ(interval.end - interval.start, 5'000);  // 5 µs
    }
  }
  EXPECT_EQ(kernels, 1u);

  absl::StatusOr<FileRanks> encoded =
      ReadText(*digest, "rank3.bsdigest", digest::Encode(DigestRank(3)));
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  ASSERT_EQ(encoded->ranks.size(), 1u);
  EXPECT_EQ(encoded->ranks[0].rank, 3);
  EXPECT_EQ(encoded->ranks[0].world_size, 8);
  EXPECT_EQ(encoded->ranks[0].host, "node7");
  EXPECT_FALSE(encoded->named_by_file);
}

// A file that fails gives its error and no ranks; JSON of no trace at all is NotFound.
TEST(TraceReadersTest, AFailedReadIsAnErrorNamingTheFile) {
  const std::vector<std::unique_ptr<TraceReader>> readers = MakeTraceReaders();
  TraceReader* kineto = ReaderNamed(readers, "kineto");
  TraceReader* digest = ReaderNamed(readers, "digest");
  ASSERT_NE(kineto, nullptr);
  ASSERT_NE(digest, nullptr);

  absl::StatusOr<FileRanks> cut =
      ReadText(*kineto, "cut.json", kKinetoText.substr(0, kKinetoText.size() / 2));
  ASSERT_FALSE(cut.ok());
  EXPECT_TRUE(absl::StartsWith(cut.status().message(), "cut.json")) << cut.status();

  absl::StatusOr<FileRanks> other = ReadText(*kineto, "config.json", R"({"stages": 4})");
  EXPECT_TRUE(absl::IsNotFound(other.status())) << other.status();

  const std::string whole = digest::Encode(DigestRank(3));
  absl::StatusOr<FileRanks> damaged =
      ReadText(*digest, "rank3.bsdigest", whole.substr(0, whole.size() - 4));
  ASSERT_FALSE(damaged.ok());
  EXPECT_TRUE(absl::StartsWith(damaged.status().message(), "rank3.bsdigest")) << damaged.status();
}

// What the loader keeps of each file: a file that fails keeps no ranks, not the part of one its
// reader built before the error (a Kineto reader has begun its rank by then).
TEST(TraceReadersTest, AFailedFileKeepsNoRanks) {
  TempDir dir;
  const std::string whole = dir.Write("rank0.json", std::string(kKinetoText));
  const std::string cut =
      dir.Write("rank1.json", std::string(kKinetoText.substr(0, kKinetoText.size() / 2)));
  LoadOptions options;
  options.jobs = 1;
  const std::vector<FileRead> reads =
      ReadTraceFiles({TraceFile{whole, false}, TraceFile{cut, false}}, options);
  ASSERT_EQ(reads.size(), 2u);
  ASSERT_TRUE(reads[0].status.ok()) << reads[0].status;
  EXPECT_EQ(reads[0].ranks.size(), 1u);
  EXPECT_TRUE(reads[1].read);
  ASSERT_FALSE(reads[1].status.ok());
  EXPECT_TRUE(absl::StartsWith(reads[1].status.message(), cut)) << reads[1].status;
  EXPECT_TRUE(reads[1].ranks.empty());
  EXPECT_FALSE(reads[1].merged);
}

TEST(FileHeadTest, HeadIsTheFirstBytesOfTheText) {
  TempDir dir;
  std::string text(10000, 'x');
  text.replace(0, 6, "{\"a\":1");
  const std::string plain = dir.Write("plain.json", text);
  const std::string gzipped = dir.Write("packed.json.gz", Gzip(text));
  for (const std::string& path : {plain, gzipped}) {
    absl::StatusOr<FileHead> head = ReadFileHead(path, 4096);
    ASSERT_TRUE(head.ok()) << head.status();
    EXPECT_TRUE(head->regular);
    EXPECT_EQ(head->bytes, text.substr(0, 4096)) << path;
  }
  absl::StatusOr<FileHead> shorter = ReadFileHead(dir.Write("short.json", "[]"), 4096);
  ASSERT_TRUE(shorter.ok());
  EXPECT_EQ(shorter->bytes, "[]");
}

TEST(FileHeadTest, AStreamIsLeftUnreadAndADirectoryIsAnError) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "[]", 2), 2);
  close(fds[1]);
  absl::StatusOr<FileHead> head = ReadFileHead("/proc/self/fd/" + std::to_string(fds[0]), 4096);
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_FALSE(head->regular);
  EXPECT_EQ(head->bytes, "");
  char left[3] = {};
  EXPECT_EQ(read(fds[0], left, sizeof left), 2);  // nothing of the pipe was consumed
  close(fds[0]);
  TempDir dir;
  EXPECT_EQ(ReadFileHead(dir.path(), 4096).status().message(), dir.path() + ": Is a directory");
}

// Never an error: a head of damaged or cut-short gzip is what decodes before the damage.
TEST(GzipHeadTest, CutOrDamagedDataGivesWhatDecodesFirst) {
  const std::string text(50000, 'y');
  const std::string packed = Gzip(text, 0);  // stored blocks: bytes decode in order
  EXPECT_EQ(InflateGzipHead(packed, 100), text.substr(0, 100));
  const std::string cut = packed.substr(0, 1000);  // 10 header bytes, a 5-byte block header
  EXPECT_EQ(InflateGzipHead(cut, 4096), text.substr(0, 1000 - 15));
  EXPECT_EQ(InflateGzipHead(std::string("\x1f\x8b\xff\xff", 4), 4096), "");
}

}  // namespace
}  // namespace bubblescope
