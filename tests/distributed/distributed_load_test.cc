// analyze --mpi's loading without MPI: every process's bundle made in one process, assembled as
// process 0 does, against LoadTrace of the same files.
#include "distributed/distributed_load.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/digest_reduction.h"
#include "writers/digest_writer.h"

namespace bubblescope::distributed {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string& SampleJob() {
  static const auto* path =
      new std::string(absl::StrCat(BUBBLESCOPE_SOURCE_DIR, "/sample_traces/sim_1f1b_p4_m8"));
  return *path;
}

// Every process's share read in this one; `held` gets what each process keeps.
absl::StatusOr<AssembledJob> LoadOverProcesses(const std::vector<std::string>& paths, int processes,
                                               std::vector<HeldDigests>* held = nullptr) {
  LoadOptions options;
  options.jobs = 2;
  absl::StatusOr<TraceFileList> list = ListTraceFiles(paths, options);
  std::vector<std::string> bundles;
  for (int p = 0; p < processes; ++p) {
    Share share = ReadShare(list, p, processes, options, {});
    bundles.push_back(std::move(share.bundle));
    if (held != nullptr) held->push_back(std::move(share.held));
  }
  if (!list.ok()) return list.status();
  return AssembleShares(*list, std::move(bundles), options);
}

// Share's bundle alone.
std::string BundleOf(const absl::StatusOr<TraceFileList>& list, int process, int processes,
                     const LoadOptions& options) {
  return ReadShare(list, process, processes, options, {}).bundle;
}

TEST(DistributedLoadTest, AnyNumberOfProcessesGivesTheTraceOfOneLoad) {
  absl::StatusOr<Trace> whole = LoadTrace({SampleJob()}, LoadOptions{});
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->ranks.size(), 4u);
  // 5 processes for 4 rank files and a truth.json: every process has at most one file.
  for (int processes : {1, 2, 3, 5, 8}) {
    SCOPED_TRACE(processes);
    std::vector<HeldDigests> held;
    absl::StatusOr<AssembledJob> spread = LoadOverProcesses({SampleJob()}, processes, &held);
    ASSERT_TRUE(spread.ok()) << spread.status();
    ASSERT_EQ(spread->headers.ranks.size(), whole->ranks.size());
    ASSERT_EQ(spread->origins.size(), whole->ranks.size());
    ASSERT_EQ(spread->facts.size(), whole->ranks.size());
    std::vector<std::string> answers;
    for (const HeldDigests& digests : held) {
      absl::StatusOr<std::string> answer = AnswerRequest(digests, PackRequest(spread->origins));
      ASSERT_TRUE(answer.ok()) << answer.status();
      answers.push_back(*std::move(answer));
    }
    absl::StatusOr<std::vector<std::string>> digests =
        CollectAnswers(std::move(answers), spread->origins);
    ASSERT_TRUE(digests.ok()) << digests.status();
    for (size_t r = 0; r < whole->ranks.size(); ++r) {
      const Rank& header = spread->headers.ranks[r];
      EXPECT_EQ(header.rank, static_cast<int32_t>(r));
      EXPECT_EQ(header.source_path, whole->ranks[r].source_path);
      EXPECT_TRUE(header.timelines.empty());  // a header, not the rank
      // Each process keeps the rank reduced to what the analyses read (index/digest_reduction.h):
      // the same bytes as the whole load's rank reduced, so the same report.
      const Rank reduced = index::ReduceForDigest(whole->ranks[r]).rank;
      EXPECT_EQ((*digests)[r], digest::Encode(reduced));
      const job::RankFacts facts = job::FactsOf(reduced, {});
      EXPECT_TRUE(spread->facts[r].has_p2p);
      EXPECT_EQ(spread->facts[r].recorded_peers, facts.recorded_peers);
      EXPECT_EQ(spread->facts[r].own_steps.size(), whole->ranks[r].steps.size());
    }
    const auto& skipped = spread->headers.skipped_files;
    ASSERT_EQ(skipped.size(), 1u);  // truth.json
    EXPECT_EQ(skipped[0].path, whole->skipped_files[0].path);
  }
}

TEST(DistributedLoadTest, AListingErrorIsProcessZerosOwn) {
  const absl::Status status = LoadOverProcesses({"/nonexistent-dir/"}, 3).status();
  EXPECT_EQ(status, LoadTrace({"/nonexistent-dir/"}, LoadOptions{}).status());
}

TEST(DistributedLoadTest, AnotherProcessThatCouldNotListIsNamed) {
  LoadOptions options;
  absl::StatusOr<TraceFileList> list = ListTraceFiles({SampleJob()}, options);
  ASSERT_TRUE(list.ok());
  std::vector<std::string> bundles = {
      BundleOf(list, 0, 2, options),
      BundleOf(absl::PermissionDeniedError("traces/: Permission denied"), 1, 2, options)};
  const absl::Status status = AssembleShares(*list, std::move(bundles), options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(), "process 1 of 2: traces/: Permission denied");
}

// A process that saw other files (a filesystem not shared, or one written to meanwhile) would
// read the wrong share: refused, naming the process.
TEST(DistributedLoadTest, AProcessThatListedOtherFilesIsRefused) {
  LoadOptions options;
  absl::StatusOr<TraceFileList> list = ListTraceFiles({SampleJob()}, options);
  ASSERT_TRUE(list.ok());
  TraceFileList fewer = *list;
  fewer.files.pop_back();
  std::vector<std::string> bundles = {BundleOf(list, 0, 3, options), BundleOf(list, 1, 3, options),
                                      BundleOf(fewer, 2, 3, options)};
  const absl::Status status = AssembleShares(*list, std::move(bundles), options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), StartsWith("process 2 of 3 found other trace files"));
}

TEST(DistributedLoadTest, ABundleMissingIsAnErrorNotAPartialTrace) {
  LoadOptions options;
  absl::StatusOr<TraceFileList> list = ListTraceFiles({SampleJob()}, options);
  ASSERT_TRUE(list.ok());
  // Two processes' shares, but only process 0's bundle arrived.
  const absl::Status status =
      AssembleShares(*list, {BundleOf(list, 0, 2, options)}, options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()), HasSubstr("no outcome for the file"));
}

}  // namespace
}  // namespace bubblescope::distributed
