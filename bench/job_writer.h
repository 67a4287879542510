// Writes a generated job as one Kineto file per rank plus truth.json, as a real multi-rank
// profiler run leaves them in a directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trace_generator.h"
#include "writers/kineto_writer.h"

namespace bubblescope::bench {

enum class LayoutChoice { kRelative, kAbsolute, kBareArray, kMixed /* rank r uses layout r % 3 */ };

struct JobWriteOptions {
  LayoutChoice layout = LayoutChoice::kRelative;
  bool gzip = false;
  bool bulk_args = true;
};

struct WrittenJob {
  std::vector<std::string> files;  // in rank order
  int64_t total_bytes = 0;         // bytes written (compressed size for .gz)
};

absl::StatusOr<WrittenJob> WriteJob(GeneratedJob& job, const std::string& directory,
                                    const JobWriteOptions& options);

// The step count at which all ranks' files together reach `target_bytes` (uncompressed), from
// the size of a one-step job with the same options.
absl::StatusOr<int> StepsForTargetBytes(const GeneratorOptions& options,
                                        const JobWriteOptions& write, double target_bytes);

KinetoWriteOptions WriteOptionsFor(const JobWriteOptions& options, int rank);

}  // namespace bubblescope::bench
