#include "distributed/distributed_load.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/out_of_memory.h"
#include "common/status_macros.h"
#include "distributed/file_shares.h"
#include "distributed/read_bundle.h"
#include "index/digest_reduction.h"
#include "readers/digest_reader.h"
#include "writers/digest_writer.h"

namespace bubblescope::distributed {
namespace {

std::string ProcessName(size_t process, size_t processes) {
  return absl::StrCat("process ", process, " of ", processes);
}

}  // namespace

Share ReadShare(const absl::StatusOr<TraceFileList>& list, int process, int processes,
                const LoadOptions& options, const iterations::Options& steps) {
  Share share;
  ReadBundle bundle;
  if (!list.ok()) {
    bundle.list_status = list.status();
    share.bundle = PackBundle(bundle);
    return share;
  }
  const std::vector<uint64_t> sizes = FileSizes(*list);
  bundle.list_fingerprint = ListFingerprint(*list, sizes);
  bundle.list_size = list->files.size();
  const std::vector<size_t> mine = SplitBySize(sizes, processes)[static_cast<size_t>(process)];
  std::vector<TraceFile> files;
  files.reserve(mine.size());
  for (const size_t index : mine) files.push_back(list->files[index]);
  bundle.reads.resize(mine.size());
  std::vector<std::vector<std::string>> digests(mine.size());
  // Each rank is reduced and encoded by the worker that read it, as soon as it has, and dropped
  // with its file's outcome: a process holds its share's digests, not its ranks. Memory running
  // out there is that file's error, as it is while reading.
  ReadTraceFiles(files, options, [&](size_t k, FileRead& read) {
    EncodedRead& encoded = bundle.reads[k];
    encoded.read = read.read;
    encoded.status = read.status;
    encoded.merged = read.merged;
    encoded.bubblescope_merged = read.bubblescope_merged;
    try {
      for (const Rank& rank : read.ranks) {
        const Rank reduced = index::ReduceForDigest(rank).rank;
        digests[k].push_back(digest::Encode(reduced));
        encoded.ranks.push_back(
            {digest::Encode(RankHeader(reduced)), job::FactsOf(reduced, steps)});
      }
    } catch (const std::bad_alloc&) {
      digests[k].clear();
      encoded.ranks.clear();
      encoded.status = OutOfMemoryReading(files[k].path);
    }
    read.ranks.clear();
  });
  // Every file keeps its place in the list, those left unread after a failure too.
  for (size_t k = 0; k < mine.size(); ++k) {
    bundle.reads[k].index = mine[k];
    if (!digests[k].empty()) share.held[mine[k]] = std::move(digests[k]);
  }
  share.bundle = PackBundle(bundle);
  return share;
}

absl::StatusOr<AssembledJob> AssembleShares(const TraceFileList& list,
                                            std::vector<std::string> bundles,
                                            const LoadOptions& options) {
  std::vector<FileRead> reads(list.files.size());
  std::vector<std::vector<job::RankFacts>> facts(list.files.size());
  std::vector<char> placed(list.files.size(), 0);
  uint64_t fingerprint = 0;
  for (size_t process = 0; process < bundles.size(); ++process) {
    absl::StatusOr<ReadBundle> bundle = UnpackBundle(bundles[process], static_cast<int>(process));
    std::string().swap(bundles[process]);
    BUBBLESCOPE_RETURN_IF_ERROR(bundle.status());
    const std::string name = ProcessName(process, bundles.size());
    if (!bundle->list_status.ok()) {
      return absl::Status(bundle->list_status.code(),
                          absl::StrCat(name, ": ", bundle->list_status.message()));
    }
    if (process == 0) fingerprint = bundle->list_fingerprint;
    if (bundle->list_fingerprint != fingerprint || bundle->list_size != list.files.size()) {
      return absl::FailedPreconditionError(absl::StrCat(
          name,
          " found other trace files, or other sizes, than process 0 under the same paths "
          "(every process must see the traces on one shared filesystem, unchanged while "
          "they are read)"));
    }
    for (EncodedRead& encoded : bundle->reads) {
      if (encoded.index >= list.files.size() || placed[encoded.index] != 0) {
        return absl::InternalError(
            absl::StrCat(name, ": an outcome for file ", encoded.index, " it was not given"));
      }
      placed[encoded.index] = 1;
      FileRead& read = reads[encoded.index];
      read.read = encoded.read;
      read.status = std::move(encoded.status);
      read.merged = encoded.merged;
      read.bubblescope_merged = encoded.bubblescope_merged;
      const std::string& path = list.files[encoded.index].path;
      for (EncodedRank& rank : encoded.ranks) {
        absl::StatusOr<Rank> header = digest::Decode(rank.header, path);
        if (!header.ok()) {
          return absl::InternalError(absl::StrCat(name, ": ", header.status().message()));
        }
        read.ranks.push_back(*std::move(header));
        facts[encoded.index].push_back(std::move(rank.facts));
      }
    }
  }
  AssembledJob job;
  BUBBLESCOPE_ASSIGN_OR_RETURN(Trace headers,
                               AssembleTrace(list, std::move(reads), options, &job.origins));
  job.headers = std::move(headers);
  for (const RankOrigin& origin : job.origins) {
    job.facts.push_back(std::move(facts[origin.file][origin.slot]));
  }
  return job;
}

}  // namespace bubblescope::distributed
