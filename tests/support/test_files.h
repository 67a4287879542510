// Files for tests: throwaway directories, reading and writing whole files, gzip'd text.
#pragma once

#include <string>
#include <string_view>

namespace bubblescope::testing {

// A fresh directory under the test temp dir, deleted with everything in it when this goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `bytes` to `name` (relative to this directory; parent directories are created) and
  // returns the full path.
  std::string Write(const std::string& name, std::string_view bytes) const;

 private:
  std::string path_;
};

// Whole-file helpers; a failure is a test failure (ADD_FAILURE), never a crash.
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, std::string_view bytes);

// One gzip member holding `text`, at deflate `level` (0 = stored blocks, no compression).
std::string Gzip(std::string_view text, int level = 6);
// The text inside gzip data (all members); a failure is a test failure.
std::string Gunzip(std::string_view compressed);

// A Kineto document with its `"baseTimeNanoseconds": N` member (which Kineto writes last) moved
// to the front, as a writer that put it first would: cutting the text then loses events, never
// the clock base (a cut that loses the base leaves the rank's clock unknown). The text as it is
// when it holds no such member.
std::string WithClockBaseFirst(const std::string& document);

}  // namespace bubblescope::testing
