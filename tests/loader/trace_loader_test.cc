#include "loader/trace_loader.h"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/shared_traces.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::Gzip;
using ::bubblescope::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// One kernel named gemm_<tag> at ts µs for 5 µs, and one CPU op, in Kineto's object form.
std::string KinetoText(int rank_in_file, int tag, int ts_us) {
  const std::string distributed =
      rank_in_file >= 0 ? absl::StrCat(R"("distributedInfo":{"backend":"nccl","rank":)",
                                       rank_in_file, R"(,"world_size":6},)")
                        : "";
  return absl::StrCat(R"({"schemaVersion":1,)", distributed, R"("traceEvents":[)",
                      R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":100,"tid":100,"ts":)",
                      ts_us - 50, R"(,"dur":20},)", R"({"ph":"X","cat":"kernel","name":"gemm_)",
                      tag, R"(","pid":0,"tid":7,"ts":)", ts_us,
                      R"(,"dur":5,"args":{"device":0,"stream":7,"correlation":11}}]})");
}

// A trace as bubblescope's collector writes it for record run `run_id`: the rank and the run id
// in its process metadata.
std::string CollectorText(const std::string& run_id, int rank, int tag) {
  return absl::StrCat(R"({"traceEvents":[{"ph":"M","name":"bubblescope_process","pid":0,)",
                      R"("tid":0,"args":{"distributedInfo":{"rank":)", rank,
                      R"(,"world_size":2},"run_id":")", run_id, R"("}},)",
                      R"({"ph":"X","cat":"kernel","name":"gemm_)", tag,
                      R"(","pid":0,"tid":7,"ts":1000,"dur":5,"args":{"device":0,"stream":7}}]})");
}

// The same content in the bare array form (no distributedInfo possible).
std::string BareArrayText(int tag, int ts_us) {
  return absl::StrCat(R"([{"ph":"X","cat":"kernel","name":"gemm_)", tag,
                      R"(","pid":0,"tid":7,"ts":)", ts_us,
                      R"(,"dur":5,"args":{"device":0,"stream":7,"correlation":11}}])");
}

LoadOptions Jobs(int jobs) {
  LoadOptions options;
  options.jobs = jobs;
  return options;
}

LoadOptions WithOverrides(std::vector<RankOverride> overrides) {
  LoadOptions options;
  options.rank_overrides = std::move(overrides);
  return options;
}

int KernelTs(int rank) { return 1000 + 10 * rank; }

// Six files whose name order is not their rank order, mixing every way a rank id is found.
struct SixRanks {
  TempDir dir;
  std::vector<std::string> paths_by_rank = std::vector<std::string>(6);

  SixRanks() {
    paths_by_rank[4] = dir.Write("a.json", KinetoText(4, 4, KernelTs(4)));
    paths_by_rank[2] = dir.Write("b_rank2.json.gz", Gzip(KinetoText(-1, 2, KernelTs(2))));
    paths_by_rank[0] = dir.Write("c_worker9.json", KinetoText(0, 0, KernelTs(0)));
    paths_by_rank[5] = dir.Write("d.pt.trace.json.gz", Gzip(KinetoText(5, 5, KernelTs(5))));
    paths_by_rank[1] = dir.Write("e.json", BareArrayText(1, KernelTs(1)));
    paths_by_rank[3] = dir.Write("f_rank3.json", KinetoText(3, 3, KernelTs(3)));
  }
  LoadOptions Options(int jobs) const {
    LoadOptions options = Jobs(jobs);
    options.rank_overrides = {{"e.json", 1}};
    return options;
  }
};

const Interval* FindInterval(const Rank& rank, std::string_view name) {
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      if (rank.name(interval.name) == name) return &interval;
    }
  }
  return nullptr;
}

TEST(TraceLoaderTest, SixFilesGetTheirRanksInRankOrder) {
  SixRanks six;
  absl::StatusOr<Trace> trace = LoadTrace({six.dir.path()}, six.Options(2));
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 6u);
  for (int r = 0; r < 6; ++r) {
    SCOPED_TRACE(r);
    const Rank& rank = trace->ranks[static_cast<size_t>(r)];
    EXPECT_EQ(rank.rank, r);
    EXPECT_EQ(rank.source_path, six.paths_by_rank[static_cast<size_t>(r)]);
    const Interval* kernel = FindInterval(rank, absl::StrCat("gemm_", r));
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ(kernel->start, int64_t{KernelTs(r)} * 1000);
    EXPECT_EQ(kernel->end, int64_t{KernelTs(r)} * 1000 + 5000);
  }
}

void ExpectSameRank(const Rank& a, const Rank& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.source_path, b.source_path);
  EXPECT_EQ(a.backend, b.backend);
  ASSERT_EQ(a.timelines.size(), b.timelines.size());
  for (size_t t = 0; t < a.timelines.size(); ++t) {
    const Timeline& x = a.timelines[t];
    const Timeline& y = b.timelines[t];
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.pid, y.pid);
    EXPECT_EQ(x.id, y.id);
    ASSERT_EQ(x.intervals.size(), y.intervals.size());
    for (size_t i = 0; i < x.intervals.size(); ++i) {
      EXPECT_EQ(x.intervals[i].start, y.intervals[i].start);
      EXPECT_EQ(x.intervals[i].end, y.intervals[i].end);
      EXPECT_EQ(x.intervals[i].kind, y.intervals[i].kind);
      EXPECT_EQ(x.intervals[i].correlation, y.intervals[i].correlation);
      EXPECT_EQ(a.name(x.intervals[i].name), b.name(y.intervals[i].name));
    }
  }
  EXPECT_EQ(a.annotations.size(), b.annotations.size());
  EXPECT_EQ(a.steps.size(), b.steps.size());
  EXPECT_EQ(a.memory.size(), b.memory.size());
  EXPECT_EQ(a.comms.size(), b.comms.size());
  for (size_t c = 0; c < kImportCounterCount; ++c) {
    const auto counter = static_cast<ImportCounter>(c);
    EXPECT_EQ(a.stats.count(counter), b.stats.count(counter));
    EXPECT_EQ(a.stats.first_offset(counter), b.stats.first_offset(counter));
  }
}

TEST(TraceLoaderTest, OneJobAndFourJobsGiveTheSameTrace) {
  SixRanks six;
  absl::StatusOr<Trace> serial = LoadTrace({six.dir.path()}, six.Options(1));
  ASSERT_TRUE(serial.ok()) << serial.status();
  absl::StatusOr<Trace> parallel = LoadTrace({six.dir.path()}, six.Options(4));
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  ASSERT_EQ(serial->ranks.size(), 6u);
  ASSERT_EQ(parallel->ranks.size(), 6u);
  for (size_t r = 0; r < 6; ++r) {
    SCOPED_TRACE(r);
    ExpectSameRank(serial->ranks[r], parallel->ranks[r]);
  }
}

TEST(TraceLoaderTest, FilesAndDirectoriesMix) {
  SixRanks six;
  TempDir other;
  const std::string extra = other.Write("x.json", KinetoText(6, 6, KernelTs(6)));
  absl::StatusOr<Trace> trace = LoadTrace({extra, six.dir.path()}, six.Options(0));
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 7u);
  EXPECT_EQ(trace->ranks[6].source_path, extra);
}

TEST(TraceLoaderTest, OtherJsonInADirectoryIsPassedOverNamedItIsAnError) {
  TempDir dir;
  dir.Write("rank0.json", KinetoText(0, 0, 100));
  dir.Write("rank1.json", KinetoText(1, 1, 100));
  const std::string truth = dir.Write("truth.json", R"({"schedule": "1f1b", "p": 2})");
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, {});
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->ranks.size(), 2u);
  ASSERT_EQ(trace->skipped_files.size(), 1u);
  EXPECT_EQ(trace->skipped_files[0].path, truth);

  // Named on the command line, the same file is an error; so is a damaged trace in a directory.
  EXPECT_EQ(LoadTrace({truth}, {}).status().message(), truth + ": byte 0: no traceEvents array");
  dir.Write("rank2.json", R"({"traceEvents": 5})");
  EXPECT_THAT(std::string(LoadTrace({dir.path()}, {}).status().message()),
              HasSubstr("rank2.json: byte 16: traceEvents is a number"));
}

TEST(TraceLoaderTest, DirectoryOfOnlyOtherJsonIsAnError) {
  TempDir dir;
  const std::string config = dir.Write("config.json", R"({"lr": 0.1})");
  EXPECT_EQ(LoadTrace({dir.path()}, {}).status().message(),
            config + ": byte 0: no traceEvents array");
}

// sample_traces/gpu_h100_collector/: a provenance.json beside one subfolder per trace set. The
// sets come first: naming one is what the user meant.
TEST(TraceLoaderTest, OnlyOtherJsonBesideTraceSetsNamesTheSets) {
  TempDir dir;
  const std::string provenance = dir.Write("provenance.json", R"({"gpu": "H100"})");
  dir.Write("training_loop/rank0.json", KinetoText(0, 0, 100));
  EXPECT_EQ(LoadTrace({dir.path()}, {}).status().message(),
            dir.path() +
                " holds 1 trace set in subfolders (training_loop); name one: "
                "bubblescope analyze " +
                dir.path() + "/training_loop; beside them, no trace: " + provenance +
                ": byte 0: no traceEvents array");
}

TEST(TraceLoaderTest, SingleFileWithoutRankIsRankZero) {
  TempDir dir;
  const std::string path = dir.Write("trace.json", KinetoText(-1, 0, 100));
  absl::StatusOr<Trace> trace = LoadTrace({path}, {});
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 1u);
  EXPECT_EQ(trace->ranks[0].rank, 0);
}

TEST(TraceLoaderTest, UnknownRankAmongSeveralIsAnError) {
  TempDir dir;
  const std::string a = dir.Write("a.json", KinetoText(-1, 0, 100));
  dir.Write("b.json", KinetoText(-1, 1, 100));
  absl::Status status = LoadTrace({dir.path()}, {}).status();
  EXPECT_EQ(status.message(), absl::StrCat(a,
                                           ": cannot tell which rank this is (no "
                                           "distributedInfo.rank, no rank/worker number in its "
                                           "name); pass --rank ",
                                           a, "=N"));
}

TEST(TraceLoaderTest, DuplicateRankNamesBothFiles) {
  TempDir dir;
  const std::string a = dir.Write("a.json", KinetoText(3, 0, 100));
  const std::string b = dir.Write("b_rank3.json", KinetoText(-1, 1, 100));
  absl::Status status = LoadTrace({dir.path()}, Jobs(2)).status();
  EXPECT_EQ(status.message(), absl::StrCat("rank 3 claimed by both ", a, " and ", b));
}

TEST(TraceLoaderTest, OverrideResolvesADuplicate) {
  TempDir dir;
  dir.Write("a.json", KinetoText(3, 0, 100));
  const std::string b = dir.Write("b_rank3.json", KinetoText(-1, 1, 100));
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, WithOverrides({{b, 7}}));
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 2u);
  EXPECT_EQ(trace->ranks[0].rank, 3);
  EXPECT_EQ(trace->ranks[1].rank, 7);
  EXPECT_EQ(trace->ranks[1].source_path, b);
}

TEST(TraceLoaderTest, MissingFile) {
  TempDir dir;
  const std::string missing = dir.path() + "/rank1.json";
  absl::Status status =
      LoadTrace({dir.Write("rank0.json", KinetoText(0, 0, 1)), missing}, {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), StartsWith(missing + ": "));
}

TEST(TraceLoaderTest, EmptyDirectoryIsAnError) {
  TempDir dir;
  EXPECT_EQ(LoadTrace({dir.path()}, {}).status().message(),
            dir.path() + ": no trace files (*.json, *.json.gz, *.bsdigest, *.sqlite)");
}

// The error reported is the first failing file's in path order, whatever the number of workers
// and however they happen to be scheduled.
TEST(TraceLoaderTest, FirstFailingFileInPathOrderIsReported) {
  TempDir dir;
  std::string corrupt_gzip = Gzip(KinetoText(-1, 4, 1));
  corrupt_gzip[2] = '\x07';
  std::vector<std::string> paths;
  for (int r = 0; r < 8; ++r) {
    const std::string name = absl::StrCat("rank", r, ".json");
    if (r == 2) {
      paths.push_back(dir.Write(name, "this is not a trace"));
    } else if (r == 4) {
      paths.push_back(dir.Write(name + ".gz", corrupt_gzip));
    } else if (r == 6) {
      paths.push_back(dir.path() + "/missing_rank6.json");
    } else {
      paths.push_back(dir.Write(name, KinetoText(-1, r, 10)));
    }
  }
  for (int jobs : {1, 2, 3, 8}) {
    for (int repeat = 0; repeat < 4; ++repeat) {
      SCOPED_TRACE(absl::StrCat("jobs ", jobs, " repeat ", repeat));
      absl::Status status = LoadTrace(paths, Jobs(jobs)).status();
      ASSERT_FALSE(status.ok());
      EXPECT_THAT(std::string(status.message()), StartsWith(paths[2] + ": "));
    }
  }
  // Without the bad text, the corrupt gzip file is first.
  paths.erase(paths.begin() + 2);
  absl::Status status = LoadTrace(paths, Jobs(3)).status();
  EXPECT_EQ(status.message(), paths[3] + ": byte 4: bad gzip data: unknown compression method");
}

// A rank clash between earlier files is reported before a later unreadable file.
TEST(TraceLoaderTest, RankErrorsAndReadErrorsInterleaveInPathOrder) {
  TempDir dir;
  const std::string a = dir.Write("a.json", KinetoText(1, 0, 10));
  const std::string b = dir.Write("b.json", KinetoText(1, 1, 10));
  const std::string c = dir.Write("c.json", "not a trace");
  EXPECT_EQ(LoadTrace({a, b, c}, Jobs(3)).status().message(),
            absl::StrCat("rank 1 claimed by both ", a, " and ", b));
  EXPECT_THAT(std::string(LoadTrace({a, c, b}, Jobs(3)).status().message()), StartsWith(c + ": "));
}

// The record-run defect: a directory recorded into twice holds two runs' rank 0 and rank 1.
TEST(TraceLoaderTest, TwoRecordRunsAreRefusedUnlessOneIsChosen) {
  TempDir dir;
  const std::string old0 =
      dir.Write("bubblescope-r1-rank0-world2-h-1.json", CollectorText("r1", 0, 1));
  const std::string old1 =
      dir.Write("bubblescope-r1-rank1-world2-h-2.json", CollectorText("r1", 1, 2));
  dir.Write("bubblescope-r2-rank0-world2-h-3.json", CollectorText("r2", 0, 3));
  dir.Write("bubblescope-r2-rank1-world2-h-4.json", CollectorText("r2", 1, 4));
  absl::Status mixed = LoadTrace({dir.path()}, Jobs(2)).status();
  EXPECT_EQ(mixed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(mixed.message()),
              StartsWith("the traces come from 2 different record runs: r2 (2 files), r1 (2 "
                         "files); analyze one with --run ID"));

  LoadOptions options = Jobs(2);
  options.record_run.run_id = "r2";
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, options);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(trace->ranks[r].rank, r);
    EXPECT_EQ(trace->ranks[r].record_run_id, "r2");
    EXPECT_EQ(trace->ranks[r].name(trace->ranks[r].timelines[0].intervals[0].name),
              absl::StrCat("gemm_", r + 3));
  }
  ASSERT_EQ(trace->skipped_files.size(), 2u);
  EXPECT_EQ(trace->skipped_files[0].path, old0);
  EXPECT_EQ(trace->skipped_files[0].reason, "from record run r1, not the one chosen (--run)");
  EXPECT_EQ(trace->skipped_files[1].path, old1);

  // A --rank override may name a file of the run left out.
  options.rank_overrides = {{old0, 5}};
  EXPECT_TRUE(LoadTrace({dir.path()}, options).ok());

  options = Jobs(2);
  options.record_run.mix = true;
  EXPECT_EQ(LoadTrace({dir.path()}, options).status().message(),
            absl::StrCat("rank 0 claimed by both ", old0, " and ", dir.path(),
                         "/bubblescope-r2-rank0-world2-h-3.json"));
}

// A run id not of record's form is damage: counted, and the file treated as from no run.
TEST(TraceLoaderTest, AMalformedRunIdIsCountedNotTrusted) {
  TempDir dir;
  const std::string path = dir.Write("rank0.json", CollectorText("bad id\\u001b", 0, 1));
  absl::StatusOr<Trace> trace = LoadTrace({path}, {});
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->ranks[0].record_run_id, "");
  EXPECT_EQ(trace->ranks[0].stats.count(ImportCounter::kBadId), 1u);
}

// gzip data cut inside its 8-byte trailer: the JSON is whole, but the file is flagged.
// Two whole traces in one file, as `cat a.json b.json` makes, or in two gzip members: the first
// is read, and the second is a counted warning at the byte where it starts, never dropped in
// silence.
TEST(TraceLoaderTest, ASecondDocumentInOneFileIsCountedNotDroppedSilently) {
  TempDir dir;
  const std::string first = KinetoText(0, 0, 100);
  const std::string second = KinetoText(0, 1, 200);
  const std::string plain = dir.Write("rank0.json", first + "\n" + second);
  const std::string members = dir.Write("rank1.json.gz", Gzip(first) + Gzip(second));
  for (const std::string& path : {plain, members}) {
    SCOPED_TRACE(path);
    absl::StatusOr<Trace> trace = LoadTrace({path}, {});
    ASSERT_TRUE(trace.ok()) << trace.status();
    const ImportStats& stats = trace->ranks[0].stats;
    EXPECT_EQ(stats.count(ImportCounter::kTrailingContent), 1u);
    EXPECT_EQ(stats.first_offset(ImportCounter::kTrailingContent),
              static_cast<int64_t>(first.size() + (path == plain ? 1 : 0)));
    EXPECT_NE(FindInterval(trace->ranks[0], "gemm_0"), nullptr);
  }
  // Whitespace after the document is nothing.
  const std::string spaced = dir.Write("rank2.json", first + "\n \n\t");
  absl::StatusOr<Trace> trace = LoadTrace({spaced}, {});
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->ranks[0].stats.count(ImportCounter::kTrailingContent), 0u);
}

TEST(TraceLoaderTest, TruncatedGzipIsCountedWithItsCompressedOffset) {
  TempDir dir;
  const std::string gz = Gzip(KinetoText(0, 0, 100));
  const size_t cut = gz.size() - 3;
  const std::string path = dir.Write("rank0.json.gz", gz.substr(0, cut));
  absl::StatusOr<Trace> trace = LoadTrace({path}, {});
  ASSERT_TRUE(trace.ok()) << trace.status();
  const ImportStats& stats = trace->ranks[0].stats;
  EXPECT_EQ(stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(stats.first_offset(ImportCounter::kTruncated), static_cast<int64_t>(cut));
  EXPECT_THAT(stats.truncation_detail(), HasSubstr(absl::StrCat("compressed byte ", cut)));
  EXPECT_NE(FindInterval(trace->ranks[0], "gemm_0"), nullptr);
}

// gzip data cut in the middle of the JSON: the reader reports the cut JSON and the loader the
// cut gzip stream; still one truncation, described from both sides.
TEST(TraceLoaderTest, TruncatedGzipInsideTheJsonIsCountedOnce) {
  TempDir dir;
  std::string text = R"({"distributedInfo":{"rank":0},"traceEvents":[)";
  for (int i = 0; i < 200; ++i) {
    absl::StrAppend(&text, R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":)", i * 10,
                    R"(,"dur":5,"args":{"device":0,"stream":7}},)");
  }
  text += "{}]}";
  const std::string gz = Gzip(text, 0);  // stored: a cut at k keeps the first k - 15 bytes
  const size_t cut = 15 + text.size() / 2;
  const std::string path = dir.Write("rank0.json.gz", gz.substr(0, cut));
  absl::StatusOr<Trace> trace = LoadTrace({path}, {});
  ASSERT_TRUE(trace.ok()) << trace.status();
  const ImportStats& stats = trace->ranks[0].stats;
  EXPECT_EQ(stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_THAT(stats.truncation_detail(),
              StartsWith(absl::StrCat("gzip data ends early, at compressed byte ", cut, " (",
                                      cut - 15, " bytes decompressed); ")));
}

TEST(TraceLoaderTest, NegativeJobsIsAnError) {
  EXPECT_EQ(LoadTrace({"x.json"}, Jobs(-1)).status().code(), absl::StatusCode::kInvalidArgument);
}

// Real files recorded by others: ranks come from distributedInfo and match the file names.
TEST(TraceLoaderTest, RealEightRankDirectory) {
  const std::string dir = BUBBLESCOPE_SHARED_DIR "/traces/param_dlrm_8rank";
  BUBBLESCOPE_NEED_SHARED(dir);
  absl::StatusOr<Trace> trace = LoadTrace({dir}, Jobs(2));
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 8u);
  for (int r = 0; r < 8; ++r) {
    SCOPED_TRACE(r);
    const Rank& rank = trace->ranks[static_cast<size_t>(r)];
    EXPECT_EQ(rank.rank, r);
    EXPECT_EQ(rank.world_size, 8);
    EXPECT_THAT(std::filesystem::path(rank.source_path).filename().string(),
                StartsWith(absl::StrCat("worker", r, "_step_12.")));
    EXPECT_TRUE(rank.HasGpuActivity());
  }
}

}  // namespace
}  // namespace bubblescope

namespace bubblescope {
namespace {

// One rule for what follows a whole document, in JSON text or after gzip data: it is not read,
// the trace before it is, and trailing_content says where it starts (bytes after gzip data used
// to refuse the whole file).
TEST(TraceLoaderTrailingTest, BytesAfterGzipDataAreTrailingContentNotAnError) {
  ::bubblescope::testing::TempDir dir;
  const std::string trace =
      R"({"traceEvents": [{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,)"
      R"("args":{"device":0,"stream":7}}]})";
  const std::string compressed = ::bubblescope::testing::Gzip(trace);
  const std::string path = dir.Write("rank0.json.gz", compressed + "garbage after the data");
  absl::StatusOr<Trace> loaded = LoadTrace({path}, LoadOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->ranks.size(), 1u);
  const ImportStats& stats = loaded->ranks[0].stats;
  EXPECT_EQ(stats.count(ImportCounter::kTrailingContent), 1u);
  EXPECT_EQ(stats.first_offset(ImportCounter::kTrailingContent),
            static_cast<int64_t>(compressed.size()));
  EXPECT_EQ(loaded->ranks[0].timelines.size(), 1u);
}

}  // namespace
}  // namespace bubblescope
