#include "text/micros.h"

#include <charconv>
#include <cstddef>

namespace bubblescope::text {
namespace {

// Magnitude of a signed value as unsigned, correct for INT64_MIN too.
uint64_t Magnitude(int64_t value) {
  return value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
}

void AppendUnsigned(uint64_t value, std::string* out) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

void AppendMicros(int64_t ns, bool always_fraction, std::string* out) {
  uint64_t magnitude = Magnitude(ns);
  uint64_t fraction = magnitude % 1000;
  if (ns < 0) out->push_back('-');
  AppendUnsigned(magnitude / 1000, out);
  if (fraction == 0 && !always_fraction) return;
  out->push_back('.');
  out->push_back(static_cast<char>('0' + fraction / 100));
  out->push_back(static_cast<char>('0' + fraction / 10 % 10));
  out->push_back(static_cast<char>('0' + fraction % 10));
}

}  // namespace

void AppendInt(int64_t value, std::string* out) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

void AppendMicrosFixed3(int64_t ns, std::string* out) { AppendMicros(ns, true, out); }

void AppendMicrosCompact(int64_t ns, std::string* out) { AppendMicros(ns, false, out); }

}  // namespace bubblescope::text
