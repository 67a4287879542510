// How every fuzz target turns its bytes into a file's contents plus a few choices.
//
// Choices are read off the END of the input, as LLVM's FuzzedDataProvider reads its integers,
// and whatever no choice took is the contents, from the front. So a file copied into a corpus
// is a valid seed as it is: its first bytes ('{', '[', gzip's 1f 8b) still start the contents,
// and at worst its last byte or two (a newline, a closing bracket, which the reader takes as a
// file cut short) become choices. A seed written on purpose ends with the choice bytes it wants
// (docs/fuzzing.md, "Seeding"). This small header stands in for FuzzedDataProvider.h, which comes
// with clang only, because the replay binaries are built with gcc as well.
#pragma once

#include <string.h>  // memmem: libFuzzer intercepts it and learns the separator from it

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bubblescope::fuzz {

// Between the files of an input that holds several (one per rank, one per directory entry). A
// line no JSON document or gzip stream is likely to hold; tests/fuzz/trace.dict lists it.
inline constexpr std::string_view kFileSeparator = "\n--next-file--\n";

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size)
      : data_(reinterpret_cast<const char*>(data)), size_(size) {}

  // An integer in [min, max] from as few trailing bytes as the range needs (one byte for a range
  // of at most 256 values; the last byte is the most significant). `min` once nothing is left.
  template <typename T>
  T TakeInRange(T min, T max) {
    static_assert(std::is_integral_v<T> && sizeof(T) <= sizeof(uint64_t));
    const uint64_t range = static_cast<uint64_t>(max) - static_cast<uint64_t>(min);
    uint64_t value = 0;
    for (size_t bits = 0; bits < 64 && (range >> bits) > 0 && size_ > 0; bits += 8) {
      value = (value << 8) | static_cast<uint8_t>(data_[--size_]);
    }
    if (range != UINT64_MAX) value %= range + 1;
    return static_cast<T>(static_cast<uint64_t>(min) + value);
  }

  uint8_t TakeByte() { return TakeInRange<uint8_t>(0, 255); }
  bool TakeBool() { return (TakeByte() & 1) != 0; }
  // One byte as a fraction of `max`: 0 and `max` themselves are both reachable.
  double TakeFraction(double max) { return max * TakeByte() / 255.0; }

  // A length byte (at most `max_length`), then that many trailing bytes as they stand.
  std::string TakeString(size_t max_length) {
    size_t length = TakeInRange<size_t>(0, max_length);
    if (length > size_) length = size_;
    size_ -= length;
    return std::string(data_ + size_, length);
  }

  // What no choice has taken: the contents.
  std::string_view rest() const { return std::string_view(data_, size_); }

 private:
  const char* data_;
  size_t size_;
};

// `text` cut at each kFileSeparator into at most `max_files` files; the last file keeps any
// separators beyond that. Text without a separator is one file.
inline std::vector<std::string_view> SplitFiles(std::string_view text, size_t max_files) {
  std::vector<std::string_view> files;
  while (files.size() + 1 < max_files && text.size() >= kFileSeparator.size()) {
    const void* found =
        memmem(text.data(), text.size(), kFileSeparator.data(), kFileSeparator.size());
    if (found == nullptr) break;
    const size_t at = static_cast<size_t>(static_cast<const char*>(found) - text.data());
    files.push_back(text.substr(0, at));
    text.remove_prefix(at + kFileSeparator.size());
  }
  files.push_back(text);
  return files;
}

}  // namespace bubblescope::fuzz
