// Interned names: every distinct string (kernel name, op name, annotation) is stored once per
// rank and referred to by a 32-bit id, so intervals stay small and comparisons are integer ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bubblescope {

using NameId = uint32_t;
// Id 0 is always the empty string, so a default-initialised NameId reads as "no name".
inline constexpr NameId kNoName = 0;

class NamePool {
 public:
  NamePool();
  ~NamePool();
  NamePool(const NamePool&) = delete;
  NamePool& operator=(const NamePool&) = delete;
  // Moving keeps every string_view handed out valid: the character blocks move by pointer. A
  // pool moved from holds nothing, and starts again empty on its next Intern. Moving allocates
  // nothing, so it cannot throw (a Rank is moved while memory may be running out).
  NamePool(NamePool&&) noexcept;
  NamePool& operator=(NamePool&&) noexcept;

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

  // Characters live in fixed blocks that never reallocate, so the views below stay valid. The
  // vectors may move the strings, but never their characters: every block is at least 256 bytes
  // and every long name 16 KiB, far past any small-string buffer, so a string's move hands its
  // heap buffer over. (A std::deque would move nothing, but its move allocates, which noexcept
  // turns into an abort when memory runs out.)
  std::vector<std::string> blocks_;
  std::vector<std::string> long_names_;  // names too long to share a block
  size_t block_used_ = 0;
  std::vector<std::string_view> names_;
  // Name -> id, an Abseil hash map defined in name_pool.cc only: this header is in every
  // translation unit of the analyzer (through trace.h), and the map's header (with <memory>,
  // which a std::unique_ptr here would bring) was most of what it pulled in. Owned: made by the
  // constructor, deleted by the destructor, handed over by a move (null in the pool moved from).
  class Index;
  Index* index_ = nullptr;
};

}  // namespace bubblescope
