// The digest file format (docs/digest.md), shared by its writer and its reader: the magic, the
// version, and the integer encodings the payload is made of.
//
// A digest file is the magic, the format version and the payload's inflated size as varints,
// then the payload as one zlib stream that ends the file. The payload is a sequence of unsigned
// LEB128 varints (7 bits a byte, low bits first), zigzag-mapped for signed values (so small
// negative deltas stay short), and strings as a varint length and the bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bubblescope::digest {

// PNG-style: a non-ASCII first byte (no text, no JSON), the format's name, and CR LF / ^Z, which
// a text-mode copy would mangle so the damage shows at once.
inline constexpr std::string_view kMagic =
    "\x89"
    "BSDG\r\n\x1a";
// Version 2 added what a rank's id and clock rest on (Rank::rank_source, time_base,
// time_evidence) to the header; version 1 digests are still read, those fields empty.
inline constexpr uint64_t kFormatVersion = 2;
inline constexpr uint64_t kOldestFormatVersion = 1;
// The suffix `bubblescope digest` gives its files; the loader tells digests by their magic.
inline constexpr std::string_view kFileSuffix = ".bsdigest";

inline uint64_t ZigZag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}
inline int64_t UnZigZag(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}

inline void PutVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Reads one varint at `*pos` of `data`, advancing `*pos`. False (and `*pos` unchanged) when the
// data ends inside it or it does not fit 64 bits.
inline bool GetVarint(std::string_view data, size_t* pos, uint64_t* value) {
  uint64_t result = 0;
  size_t at = *pos;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= data.size()) return false;
    const auto byte = static_cast<uint8_t>(data[at++]);
    if (shift == 63 && byte > 1) return false;  // bits past the 64th
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *pos = at;
      *value = result;
      return true;
    }
  }
  return false;
}

}  // namespace bubblescope::digest
