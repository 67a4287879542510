#include "record_format/record_run_id.h"

#include <time.h>

#include <cstdio>

namespace bubblescope::record_format {
namespace {

bool IsAlphanumeric(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool IsValidRecordRunId(std::string_view id) {
  if (id.empty() || id.size() > kMaxRecordRunIdLength || !IsAlphanumeric(id.front())) {
    return false;
  }
  for (size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    if (!IsAlphanumeric(c) && c != '.' && c != '_' && c != '-') return false;
    if (i + 4 <= id.size() && Lower(c) == 'r' && Lower(id[i + 1]) == 'a' &&
        Lower(id[i + 2]) == 'n' && Lower(id[i + 3]) == 'k') {
      return false;
    }
  }
  return true;
}

std::string MakeRecordRunId(long long unix_seconds, unsigned random) {
  const time_t seconds = static_cast<time_t>(unix_seconds);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char id[40];
  std::snprintf(id, sizeof id, "%04d%02d%02d-%02d%02d%02d-%04x", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, random & 0xffffu);
  return id;
}

}  // namespace bubblescope::record_format
