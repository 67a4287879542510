#include "job_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace bubblescope::bench {

KinetoWriteOptions WriteOptionsFor(const JobWriteOptions& options, int rank) {
  KinetoWriteOptions write;
  write.bulk_args = options.bulk_args;
  switch (options.layout) {
    case LayoutChoice::kRelative: write.layout = KinetoLayout::kRelativeWithBase; break;
    case LayoutChoice::kAbsolute: write.layout = KinetoLayout::kAbsoluteMicros; break;
    case LayoutChoice::kBareArray: write.layout = KinetoLayout::kBareArray; break;
    case LayoutChoice::kMixed: {
      constexpr KinetoLayout kCycle[] = {KinetoLayout::kRelativeWithBase,
                                         KinetoLayout::kAbsoluteMicros, KinetoLayout::kBareArray};
      write.layout = kCycle[rank % 3];
      break;
    }
  }
  return write;
}

absl::StatusOr<WrittenJob> WriteJob(GeneratedJob& job, const std::string& directory,
                                    const JobWriteOptions& options) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return absl::InternalError(absl::StrCat(directory, ": ", error.message()));
  WrittenJob written;
  for (Rank& rank : job.trace.ranks) {
    std::string name = absl::StrCat("rank", rank.rank, ".pt.trace.json", options.gzip ? ".gz" : "");
    std::string path = (std::filesystem::path(directory) / name).string();
    rank.source_path = name;
    absl::Status status = WriteKinetoFile(rank, WriteOptionsFor(options, rank.rank), path);
    if (!status.ok()) return status;
    auto size = std::filesystem::file_size(path, error);
    if (error) return absl::InternalError(absl::StrCat(path, ": ", error.message()));
    written.total_bytes += static_cast<int64_t>(size);
    written.files.push_back(path);
  }
  std::string truth_path = (std::filesystem::path(directory) / "truth.json").string();
  std::string truth = TruthJson(job.truth);
  std::FILE* file = std::fopen(truth_path.c_str(), "wb");
  if (file == nullptr) return absl::InternalError(absl::StrCat(truth_path, ": cannot open"));
  size_t put = std::fwrite(truth.data(), 1, truth.size(), file);
  if (std::fclose(file) != 0 || put != truth.size()) {
    return absl::InternalError(absl::StrCat(truth_path, ": write failed"));
  }
  return written;
}

absl::StatusOr<int> StepsForTargetBytes(const GeneratorOptions& options,
                                        const JobWriteOptions& write, double target_bytes) {
  GeneratorOptions one_step = options;
  one_step.steps = 1;
  absl::StatusOr<GeneratedJob> job = GenerateJob(one_step);
  if (!job.ok()) return job.status();
  int64_t bytes = 0;
  for (const Rank& rank : job->trace.ranks) {
    bytes += static_cast<int64_t>(KinetoJson(rank, WriteOptionsFor(write, rank.rank)).size());
  }
  // 1% headroom: besides its step the probe holds each file's fixed header and metadata, which
  // a longer job does not repeat per step.
  double steps = target_bytes * 1.01 / static_cast<double>(bytes);
  return std::max(1, static_cast<int>(std::ceil(steps)));
}

}  // namespace bubblescope::bench
