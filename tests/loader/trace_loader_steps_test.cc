// LoadTrace's three public steps (ListTraceFiles, ReadTraceFiles, AssembleTrace): files read in
// separate parts, as `analyze --mpi` reads them on separate processes, and put back in list order
// give the Trace, or the error, that one LoadTrace gives.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::TempDir;
using ::testing::StartsWith;

// One kernel at ts µs, rank id from distributedInfo when `rank` >= 0 (else from the file name).
std::string KinetoText(int rank, int ts_us) {
  const std::string distributed =
      rank >= 0 ? absl::StrCat(R"("distributedInfo":{"rank":)", rank, R"(,"world_size":4},)") : "";
  return absl::StrCat(R"({"schemaVersion":1,)", distributed, R"("traceEvents":[)",
                      R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":)", ts_us,
                      R"(,"dur":5,"args":{"device":0,"stream":7}}]})");
}

// Reads the list's files in `parts` (each a list of indices in list order) separately and puts
// every outcome back in its file's place, as process 0 of --mpi does with the gathered parts.
absl::StatusOr<Trace> LoadInParts(const std::vector<std::string>& paths,
                                  const std::vector<std::vector<size_t>>& parts) {
  LoadOptions options;
  options.jobs = 1;
  absl::StatusOr<TraceFileList> list = ListTraceFiles(paths, options);
  if (!list.ok()) return list.status();
  std::vector<FileRead> reads(list->files.size());
  for (const std::vector<size_t>& part : parts) {
    std::vector<TraceFile> files;
    for (size_t index : part) files.push_back(list->files[index]);
    std::vector<FileRead> part_reads = ReadTraceFiles(files, options);
    EXPECT_EQ(part_reads.size(), part.size());
    for (size_t k = 0; k < part.size(); ++k) reads[part[k]] = std::move(part_reads[k]);
  }
  return AssembleTrace(*list, std::move(reads), options);
}

TEST(TraceLoaderStepsTest, PartsReadApartGiveTheTraceOfOneLoad) {
  TempDir dir;
  // Name order (a, b, c, d) is not rank order; b's rank comes from its name.
  dir.Write("a.json", KinetoText(3, 40));
  dir.Write("b_rank0.json", KinetoText(-1, 10));
  dir.Write("c.json", KinetoText(2, 30));
  dir.Write("d.json", KinetoText(1, 20));
  absl::StatusOr<Trace> whole = LoadTrace({dir.path()}, LoadOptions{});
  ASSERT_TRUE(whole.ok()) << whole.status();
  absl::StatusOr<Trace> parts = LoadInParts({dir.path()}, {{0, 2}, {1}, {3}});
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->ranks.size(), 4u);
  for (size_t r = 0; r < 4; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(parts->ranks[r].rank, static_cast<int32_t>(r));
    EXPECT_EQ(parts->ranks[r].source_path, whole->ranks[r].source_path);
    ASSERT_EQ(parts->ranks[r].timelines.size(), 1u);
    ASSERT_EQ(parts->ranks[r].timelines[0].intervals.size(), 1u);
    // ts = 10 (r + 1) µs: each rank's own file, not a neighbour's.
    EXPECT_EQ(parts->ranks[r].timelines[0].intervals[0].start,
              static_cast<int64_t>(r + 1) * 10'000);
  }
}

// The first failing file in list order is reported, even when a later file of another part
// failed too and that part was read first.
TEST(TraceLoaderStepsTest, TheFirstFailureInListOrderWinsAcrossParts) {
  TempDir dir;
  const std::string a = dir.Write("a.json", KinetoText(0, 10));
  const std::string b = dir.Write("b.json", "this is not a trace");
  const std::string c = dir.Write("c.json", KinetoText(2, 30));
  const std::string d = dir.Write("d.json", "nor is this");
  const absl::Status whole = LoadTrace({dir.path()}, LoadOptions{}).status();
  ASSERT_FALSE(whole.ok());
  EXPECT_THAT(std::string(whole.message()), StartsWith(b + ": "));
  const absl::Status parts = LoadInParts({dir.path()}, {{2, 3}, {0, 1}}).status();
  EXPECT_EQ(parts, whole);
}

// Two files claiming one rank, each read by another part.
TEST(TraceLoaderStepsTest, ADuplicateRankAcrossPartsNamesBothFiles) {
  TempDir dir;
  const std::string a = dir.Write("a.json", KinetoText(1, 10));
  const std::string b = dir.Write("b.json", KinetoText(1, 20));
  EXPECT_EQ(LoadInParts({a, b}, {{1}, {0}}).status().message(),
            absl::StrCat("rank 1 claimed by both ", a, " and ", b));
}

TEST(TraceLoaderStepsTest, AnOutcomeMissingForAFileIsAnInternalError) {
  TempDir dir;
  const std::string a = dir.Write("a.json", KinetoText(0, 10));
  absl::StatusOr<TraceFileList> list = ListTraceFiles({a}, LoadOptions{});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(AssembleTrace(*list, {}, LoadOptions{}).status().code(), absl::StatusCode::kInternal);
  // A file left unread although nothing before it failed.
  std::vector<FileRead> unread(1);
  EXPECT_EQ(AssembleTrace(*list, std::move(unread), LoadOptions{}).status().code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace bubblescope
