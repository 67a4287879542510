// Decides which rank each trace file is, and rejects two files claiming the same rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/unwinding_hash.h"
#include "loader/trace_loader.h"

namespace bubblescope {

// Precedence, per file: an explicit override (matched against the path as given, then against
// its file name) > the rank the file itself reports (distributedInfo.rank) > a rank/worker
// number in its file name > rank 0 when it is the only file.
class RankAssigner {
 public:
  // `files` are the expanded paths, in the order they are reported in. Fails if an override has
  // a negative rank, matches none of `files`, or two overrides give one file different ranks.
  static absl::StatusOr<RankAssigner> Create(std::vector<std::string> files,
                                             const std::vector<RankOverride>& overrides);

  // Rank id of files[index]; `reported_rank` is what the file said (-1 when nothing). Call in
  // index order: a rank already taken by an earlier file is an error naming both files. A file
  // that names no rank is an error saying what its format could have named it with
  // (`rank_carriers`; empty: Kineto's distributedInfo.rank).
  absl::StatusOr<int32_t> Assign(size_t index, int32_t reported_rank,
                                 std::string_view rank_carriers = {});

  // What the rank Claimed gives rests on: "override", "file" (what the file reports),
  // "file_name" or "only_file"; empty when nothing says.
  std::string_view ClaimSource(size_t index, int32_t reported_rank) const;

  // The rank Assign would give files[index] by the precedence above, without taking it; -1 when
  // nothing says (not even the single-file rule).
  int32_t Claimed(size_t index, int32_t reported_rank) const;

  // The same for one of the ranks of a merged trace (readers/merged_trace.h), which names each
  // of its ranks itself: an override of the file is an error, as is a rank already taken.
  absl::StatusOr<int32_t> AssignNamed(size_t index, int32_t named_rank);

 private:
  explicit RankAssigner(std::vector<std::string> files);
  // Gives `rank` to files[index]; an error naming both files when another has it.
  absl::StatusOr<int32_t> Own(size_t index, int32_t rank);

  std::vector<std::string> files_;
  std::vector<int32_t> overridden_;          // per file, -1 when no override applies
  UnwindingHashMap<int32_t, size_t> owner_;  // rank id -> index of the file that has it
};

}  // namespace bubblescope
