// The form of a `bubblescope record` run id, shared by those who write it (record, the collector)
// and those who read it (the trace reader, record's listing of a run's files).
#pragma once

#include <string>
#include <string_view>

namespace bubblescope::record_format {

inline constexpr size_t kMaxRecordRunIdLength = 64;

// 1 to 64 characters of [A-Za-z0-9._-], beginning with a letter or digit, and without "rank" in
// any case: the id is part of the collector's file names ("bubblescope-{id}-rank3-..."), which
// are read back by name, and rank numbers are guessed from the word "rank" in a name.
bool IsValidRecordRunId(std::string_view id);

// A new run id from a UTC time (seconds since the epoch) and a random number:
// "YYYYMMDD-HHMMSS-xxxx", xxxx the low 16 bits of `random` in hex. Ids made this way sort by
// time, so the newest run's files are easy to tell.
std::string MakeRecordRunId(long long unix_seconds, unsigned random);

}  // namespace bubblescope::record_format
