#include "bubblescope/name_pool.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace bubblescope {

// Keyed on absl::string_view: in this Abseil build it is not std::string_view, and only the absl
// type gets Abseil's fast string hash (std::string_view falls back to std::hash). A std table,
// not Abseil's flat one: a trace decides how many names there are, and Abseil's growth does not
// unwind when memory runs out (common/unwinding_hash.h, which this layer cannot include).
class NamePool::Index
    : public std::unordered_map<absl::string_view, NameId, absl::Hash<absl::string_view>> {};

namespace {
// Most names are short op names; a few kernel names run to hundreds of bytes.
constexpr size_t kBlockBytes = 64 * 1024;
// The first block is small and each next one twice the last, up to kBlockBytes: a rank with a
// handful of names (one of 40,000 tiny rank files) holds a few hundred bytes of them, not 64 KiB.
constexpr size_t kFirstBlockBytes = 256;
}  // namespace

NamePool::NamePool() : index_(new Index()) {
  names_.push_back(std::string_view());
  index_->emplace(absl::string_view(), kNoName);
}

NamePool::~NamePool() { delete index_; }

NamePool::NamePool(NamePool&& other) noexcept
    : blocks_(std::move(other.blocks_)),
      long_names_(std::move(other.long_names_)),
      block_used_(other.block_used_),
      names_(std::move(other.names_)),
      index_(std::exchange(other.index_, nullptr)) {}

NamePool& NamePool::operator=(NamePool&& other) noexcept {
  if (this != &other) {
    delete index_;
    blocks_ = std::move(other.blocks_);
    long_names_ = std::move(other.long_names_);
    block_used_ = other.block_used_;
    names_ = std::move(other.names_);
    index_ = std::exchange(other.index_, nullptr);
  }
  return *this;
}

std::string_view NamePool::Store(std::string_view name) {
  if (name.size() > kBlockBytes / 4) {
    // A very long name gets a block of its own so it does not waste the shared one.
    long_names_.emplace_back(name);
    return long_names_.back();
  }
  if (blocks_.empty() || block_used_ + name.size() > blocks_.back().size()) {
    const size_t next =
        blocks_.empty() ? kFirstBlockBytes : std::min(2 * blocks_.back().size(), kBlockBytes);
    blocks_.emplace_back(std::max(next, name.size()), '\0');
    block_used_ = 0;
  }
  char* dst = blocks_.back().data() + block_used_;
  std::memcpy(dst, name.data(), name.size());
  block_used_ += name.size();
  return std::string_view(dst, name.size());
}

namespace {
absl::string_view AsAbsl(std::string_view view) { return {view.data(), view.size()}; }
}  // namespace

NameId NamePool::Intern(std::string_view name) {
  if (index_ == nullptr) *this = NamePool();  // moved from: start again
  auto it = index_->find(AsAbsl(name));
  if (it != index_->end()) return it->second;
  std::string_view stored = Store(name);
  auto id = static_cast<NameId>(names_.size());
  names_.push_back(stored);
  index_->emplace(AsAbsl(stored), id);
  return id;
}

NameId NamePool::Find(std::string_view name) const {
  if (index_ == nullptr) return kNoName;
  auto it = index_->find(AsAbsl(name));
  return it == index_->end() ? kNoName : it->second;
}

size_t NamePool::MemoryBytes() const {
  size_t bytes = 0;
  for (const std::string& block : blocks_) bytes += block.capacity();
  for (const std::string& name : long_names_) bytes += name.capacity();
  bytes += names_.capacity() * sizeof(std::string_view);
  if (index_ != nullptr) {
    // A bucket is a pointer; a node holds the entry, its link and (libstdc++, for a hash that is
    // not trivially fast) the cached hash.
    bytes += index_->bucket_count() * sizeof(void*) +
             index_->size() * (sizeof(Index::value_type) + sizeof(void*) + sizeof(size_t));
  }
  return bytes;
}

}  // namespace bubblescope
