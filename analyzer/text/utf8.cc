#include "text/utf8.h"

namespace bubblescope::text {

size_t Utf8SequenceLength(std::string_view text, size_t i, bool* cut_short) {
  if (cut_short != nullptr) *cut_short = false;
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // overlong
    if (lead == 0xED) second_max = 0x9F;  // UTF-16 surrogate
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // overlong
    if (lead == 0xF4) second_max = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  for (size_t k = 1; k < length; ++k) {
    if (i + k >= text.size()) {
      if (cut_short != nullptr) *cut_short = true;
      return 0;
    }
    const unsigned char c = byte(i + k);
    const unsigned char min = k == 1 ? second_min : 0x80;
    const unsigned char max = k == 1 ? second_max : 0xBF;
    if (c < min || c > max) return 0;
  }
  return length;
}

}  // namespace bubblescope::text
