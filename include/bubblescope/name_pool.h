// Interned names: every distinct string (kernel name, op name, annotation) is stored once per
// rank and referred to by a 32-bit id, so intervals stay small and comparisons are integer ones.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace bubblescope {

using NameId = uint32_t;
// Id 0 is always the empty string, so a default-initialised NameId reads as "no name".
inline constexpr NameId kNoName = 0;

class NamePool {
 public:
  NamePool();
  NamePool(const NamePool&) = delete;
  NamePool& operator=(const NamePool&) = delete;
  // Moving keeps every string_view handed out valid: the character blocks move by pointer.
  NamePool(NamePool&&) noexcept = default;
  NamePool& operator=(NamePool&&) noexcept = default;

  // Returns the id of `name`, adding it on first sight.
  NameId Intern(std::string_view name);
  // Id of `name` if it was interned, kNoName otherwise (never adds).
  NameId Find(std::string_view name) const;
  std::string_view Get(NameId id) const { return names_[id]; }
  size_t size() const { return names_.size(); }
  // Bytes held by the stored characters and the index (for memory accounting).
  size_t MemoryBytes() const;

 private:
  std::string_view Store(std::string_view name);

  // Characters live in fixed blocks that never reallocate, so the views below stay valid.
  std::deque<std::string> blocks_;
  std::deque<std::string> long_names_;  // names too long to share a block
  size_t block_used_ = 0;
  std::vector<std::string_view> names_;
  // Keyed on absl::string_view: in this Abseil build it is not std::string_view, and only the
  // absl type gets Abseil's fast string hash (std::string_view falls back to std::hash).
  absl::flat_hash_map<absl::string_view, NameId> index_;
};

}  // namespace bubblescope
