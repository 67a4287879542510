#include "loader/rank_assigner.h"

#include <filesystem>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "loader/rank_from_name.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;

bool SamePath(const std::string& a, const std::string& b) {
  return a == b || fs::path(a).lexically_normal() == fs::path(b).lexically_normal();
}

std::string FileName(const std::string& path) { return fs::path(path).filename().string(); }

// Index of the files an override names: by full path if any file matches it so, otherwise by
// file name (so `--rank a/x.json=1` does not also catch b/x.json).
std::vector<size_t> FilesNamedBy(const std::vector<std::string>& files,
                                 const std::string& override_path) {
  std::vector<size_t> matches;
  for (size_t i = 0; i < files.size(); ++i) {
    if (SamePath(files[i], override_path)) matches.push_back(i);
  }
  if (!matches.empty()) return matches;
  for (size_t i = 0; i < files.size(); ++i) {
    if (FileName(files[i]) == override_path) matches.push_back(i);
  }
  return matches;
}

}  // namespace

RankAssigner::RankAssigner(std::vector<std::string> files)
    : files_(std::move(files)), overridden_(files_.size(), -1) {}

absl::StatusOr<RankAssigner> RankAssigner::Create(std::vector<std::string> files,
                                                  const std::vector<RankOverride>& overrides) {
  RankAssigner assigner(std::move(files));
  for (const RankOverride& rank_override : overrides) {
    if (rank_override.rank < 0) {
      return absl::InvalidArgumentError(absl::StrCat("rank override ", rank_override.path, "=",
                                                     rank_override.rank, ": rank must be >= 0"));
    }
    const std::vector<size_t> matches = FilesNamedBy(assigner.files_, rank_override.path);
    if (matches.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("rank override ", rank_override.path, "=",
                                                     rank_override.rank, " names no trace file"));
    }
    for (size_t index : matches) {
      int32_t& rank = assigner.overridden_[index];
      if (rank >= 0 && rank != rank_override.rank) {
        return absl::InvalidArgumentError(absl::StrCat(assigner.files_[index],
                                                       ": conflicting rank overrides ", rank,
                                                       " and ", rank_override.rank));
      }
      rank = rank_override.rank;
    }
  }
  return assigner;
}

int32_t RankAssigner::Claimed(size_t index, int32_t reported_rank) const {
  int32_t rank = overridden_[index];
  if (rank < 0) rank = reported_rank;
  if (rank < 0) {
    if (std::optional<int32_t> from_name = RankFromFileName(files_[index])) rank = *from_name;
  }
  if (rank < 0 && files_.size() == 1) rank = 0;
  return rank;
}

std::string_view RankAssigner::ClaimSource(size_t index, int32_t reported_rank) const {
  if (overridden_[index] >= 0) return "override";
  if (reported_rank >= 0) return "file";
  if (RankFromFileName(files_[index]).has_value()) return "file_name";
  if (files_.size() == 1) return "only_file";
  return "";
}

absl::StatusOr<int32_t> RankAssigner::Assign(size_t index, int32_t reported_rank,
                                             std::string_view rank_carriers) {
  const std::string& path = files_[index];
  const int32_t rank = Claimed(index, reported_rank);
  if (rank < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": cannot tell which rank this is (no ",
        rank_carriers.empty() ? std::string("distributedInfo.rank") : std::string(rank_carriers),
        ", no rank/worker number in its name); pass --rank ", path, "=N"));
  }
  return Own(index, rank);
}

absl::StatusOr<int32_t> RankAssigner::AssignNamed(size_t index, int32_t named_rank) {
  if (overridden_[index] >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(files_[index],
                     ": a merged trace names its ranks itself; --rank cannot "
                     "renumber them"));
  }
  return Own(index, named_rank);
}

absl::StatusOr<int32_t> RankAssigner::Own(size_t index, int32_t rank) {
  const auto [it, inserted] = owner_.try_emplace(rank, index);
  if (!inserted) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", rank, " claimed by both ",
                                                   files_[it->second], " and ", files_[index]));
  }
  return rank;
}

}  // namespace bubblescope
