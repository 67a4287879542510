#include "distributed/file_shares.h"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <numeric>
#include <string_view>
#include <system_error>
#include <utility>

namespace bubblescope::distributed {
namespace {

constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

void Mix(std::string_view bytes, uint64_t* hash) {
  for (const char c : bytes) {
    *hash ^= static_cast<unsigned char>(c);
    *hash *= kFnvPrime;
  }
}

void MixNumber(uint64_t number, uint64_t* hash) {
  for (int byte = 0; byte < 8; ++byte) {
    *hash ^= (number >> (8 * byte)) & 0xff;
    *hash *= kFnvPrime;
  }
}

}  // namespace

std::vector<uint64_t> FileSizes(const TraceFileList& list) {
  std::vector<uint64_t> sizes;
  sizes.reserve(list.files.size());
  for (const TraceFile& file : list.files) {
    std::error_code error;
    const uintmax_t size = std::filesystem::file_size(file.path, error);
    sizes.push_back(error ? 0 : static_cast<uint64_t>(size));
  }
  return sizes;
}

std::vector<std::vector<size_t>> SplitBySize(const std::vector<uint64_t>& sizes, int processes) {
  std::vector<std::vector<size_t>> shares(static_cast<size_t>(std::max(processes, 1)));
  std::vector<size_t> by_size(sizes.size());
  std::iota(by_size.begin(), by_size.end(), size_t{0});
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&sizes](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  // Per share: bytes, then files so far (so that empty or unsized files spread too).
  std::vector<std::pair<uint64_t, size_t>> load(shares.size(), {0, 0});
  for (const size_t file : by_size) {
    // The least loaded share; min_element keeps the first of equals, the lowest share.
    const size_t share =
        static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    shares[share].push_back(file);
    load[share].first += sizes[file];
    ++load[share].second;
  }
  for (std::vector<size_t>& share : shares) std::sort(share.begin(), share.end());
  return shares;
}

uint64_t ListFingerprint(const TraceFileList& list, const std::vector<uint64_t>& sizes) {
  uint64_t hash = kFnvOffset;
  MixNumber(list.files.size(), &hash);
  for (size_t i = 0; i < list.files.size(); ++i) {
    MixNumber(list.files[i].path.size(), &hash);
    Mix(list.files[i].path, &hash);
    MixNumber(list.files[i].from_directory ? 1 : 0, &hash);
    MixNumber(i < sizes.size() ? sizes[i] : 0, &hash);
  }
  return hash;
}

}  // namespace bubblescope::distributed
