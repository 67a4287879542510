// How the text reports spell figures: one helper per unit, shared by every report.
#pragma once

#include <cstdint>
#include <string>

namespace bubblescope {

// Nanoseconds as milliseconds with three decimals, rounded to the nearest microsecond (halves
// away from zero): 1234500 -> "1.235".
std::string Millis(double ns);

// A count of nanoseconds (a TimeNs), spelt the same way.
std::string Millis(int64_t ns);

// Millis with its unit, for prose and tooltips: 1234500 -> "1.235 ms".
std::string MillisWithUnit(double ns);

// Nanoseconds as microseconds with three decimals: 1234 -> "1.234".
std::string Micros(double ns);

// A bandwidth in Gbit/s with two decimals: 12.346 -> "12.35".
std::string Gbps(double gbit_per_second);

// A fraction as a percentage with one decimal, without the sign: 0.1234 -> "12.3".
std::string Percent(double fraction);

// Bytes in the largest binary unit that keeps the number at or above 1, two decimals
// ("512 B", "1.50 KiB", "3.00 GiB"); "-" when negative (unknown).
std::string BinaryBytes(int64_t bytes);

// A figure in bytes that is not a count (a median or mean over replicas) rounded to whole bytes
// and spelt as BinaryBytes spells it.
std::string RoundedBinaryBytes(double bytes);

// Bytes as GiB with two decimals ("0.25 GiB"); "-" when negative (unknown).
std::string GiB(int64_t bytes);

// Bytes as MiB with two decimals and no unit, for a table column headed MiB: 1572864 -> "1.50".
std::string Mebibytes(int64_t bytes);

}  // namespace bubblescope
