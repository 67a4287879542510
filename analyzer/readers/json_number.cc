#include "readers/json_number.h"

#include <cstddef>
#include <cstring>
#include <limits>

#include "text/json_space.h"

namespace bubblescope::kineto {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The significant digits of a number: its integer digits followed by its fraction digits, read as
// one sequence without copying.
class DigitSequence {
 public:
  DigitSequence(std::string_view integer, std::string_view fraction)
      : integer_(integer), fraction_(fraction) {}
  int64_t size() const { return static_cast<int64_t>(integer_.size() + fraction_.size()); }
  // Digit `i`, or 0 past the end (the value continues with zeros).
  int at(int64_t i) const {
    const auto n = static_cast<int64_t>(integer_.size());
    if (i < n) return integer_[static_cast<size_t>(i)] - '0';
    if (i < size()) return fraction_[static_cast<size_t>(i - n)] - '0';
    return 0;
  }

 private:
  std::string_view integer_;
  std::string_view fraction_;
};

// Eight ASCII digits at p as a number, or false if they are not all digits (SWAR, as in
// fast_float / simdjson).
bool ReadEightDigits(const char* p, uint64_t* value) {
  uint64_t chunk = 0;
  std::memcpy(&chunk, p, sizeof(chunk));
  if ((((chunk & 0xF0F0F0F0F0F0F0F0) |
        (((chunk + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) >> 4)) != 0x3333333333333333)) {
    return false;
  }
  chunk -= 0x3030303030303030;
  chunk = (chunk * 10) + (chunk >> 8);
  chunk = (((chunk & 0x000000FF000000FF) * (100 + (1000000ULL << 32))) +
           (((chunk >> 16) & 0x000000FF000000FF) * (1 + (10000ULL << 32)))) >>
          32;
  *value = chunk;
  return true;
}

constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

NumberStatus Finish(bool negative, uint64_t magnitude, int64_t* out) {
  if (negative) {
    if (magnitude > kMaxPositive + 1) return NumberStatus::kOutOfRange;
    *out = magnitude == kMaxPositive + 1 ? std::numeric_limits<int64_t>::min()
                                         : -static_cast<int64_t>(magnitude);
  } else {
    if (magnitude > kMaxPositive) return NumberStatus::kOutOfRange;
    *out = static_cast<int64_t>(magnitude);
  }
  return NumberStatus::kOk;
}

// The common shape, [-]digits[.digits] with no exponent and few enough integer digits that the
// scaled value fits 19 digits, in one loop. Returns false to hand anything else to the general
// path.
bool ParseSimple(const char* p, const char* end, int scale_digits, NumberStatus* status,
                 int64_t* out) {
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  const char* const integer_begin = p;
  uint64_t magnitude = 0;
  uint64_t eight = 0;
  // Wrap-around past 19 digits is harmless: such numbers are rejected below.
  while (end - p >= 8 && ReadEightDigits(p, &eight)) {
    magnitude = magnitude * 100000000 + eight;
    p += 8;
  }
  while (p < end && IsDigit(*p)) magnitude = magnitude * 10 + static_cast<uint64_t>(*p++ - '0');
  const int64_t integer_digits = p - integer_begin;
  if (integer_digits == 0 || integer_digits + scale_digits > 19) return false;
  int used = 0;
  int rounding_digit = 0;
  if (p < end && *p == '.') {
    const char* const fraction_begin = ++p;
    while (p < end && IsDigit(*p)) {
      const int digit = *p - '0';
      if (used < scale_digits) {
        magnitude = magnitude * 10 + static_cast<uint64_t>(digit);
        ++used;
      } else if (p - fraction_begin == scale_digits) {
        rounding_digit = digit;
      }
      ++p;
    }
    if (p == fraction_begin) return false;
  }
  if (p != end) return false;
  for (; used < scale_digits; ++used) magnitude *= 10;
  if (rounding_digit >= 5) ++magnitude;
  *status = Finish(negative, magnitude, out);
  return true;
}

}  // namespace

NumberStatus ParseScaledDecimal(std::string_view token, int scale_digits, int64_t* out) {
  size_t length = token.size();
  while (length > 0 && text::IsJsonSpace(token[length - 1])) --length;
  const char* p = token.data();
  const char* const end = p + length;
  NumberStatus status = NumberStatus::kNotNumber;
  if (scale_digits >= 0 && ParseSimple(p, end, scale_digits, &status, out)) return status;

  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  const char* const integer_begin = p;
  while (p < end && IsDigit(*p)) ++p;
  if (p == integer_begin) return NumberStatus::kNotNumber;
  const std::string_view integer(integer_begin, static_cast<size_t>(p - integer_begin));

  std::string_view fraction;
  if (p < end && *p == '.') {
    const char* const fraction_begin = ++p;
    while (p < end && IsDigit(*p)) ++p;
    if (p == fraction_begin) return NumberStatus::kNotNumber;
    fraction = std::string_view(fraction_begin, static_cast<size_t>(p - fraction_begin));
  }

  // Exponents beyond this bound make any non-zero value overflow or vanish; capping keeps the
  // arithmetic below in range.
  constexpr int64_t kExponentCap = 100000;
  int64_t exponent = 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool exponent_negative = false;
    if (p < end && (*p == '+' || *p == '-')) exponent_negative = *p++ == '-';
    const char* const exponent_begin = p;
    while (p < end && IsDigit(*p)) {
      if (exponent < kExponentCap) exponent = exponent * 10 + (*p - '0');
      ++p;
    }
    if (p == exponent_begin) return NumberStatus::kNotNumber;
    if (exponent_negative) exponent = -exponent;
  }
  if (p != end) return NumberStatus::kNotNumber;

  // value = digits x 10^(exponent - fraction digits + scale): the first `whole` digits form the
  // integer result and the digit after them decides the rounding.
  const DigitSequence digits(integer, fraction);
  int64_t first_nonzero = 0;
  while (first_nonzero < digits.size() && digits.at(first_nonzero) == 0) ++first_nonzero;
  if (first_nonzero == digits.size()) {
    *out = 0;
    return NumberStatus::kOk;
  }
  const int64_t whole =
      static_cast<int64_t>(integer.size()) + exponent + scale_digits - first_nonzero;
  constexpr int64_t kMaxDigits = 19;  // 10^19 > 2^63: more whole digits cannot fit
  if (whole > kMaxDigits) return NumberStatus::kOutOfRange;

  uint64_t magnitude = 0;
  for (int64_t i = 0; i < whole; ++i) {
    magnitude = magnitude * 10 + static_cast<uint64_t>(digits.at(first_nonzero + i));
  }
  const int rounding_digit = whole >= 0 ? digits.at(first_nonzero + whole) : 0;
  if (rounding_digit >= 5) ++magnitude;

  return Finish(negative, magnitude, out);
}

}  // namespace bubblescope::kineto
