// What the file-level fuzz targets share: one file in a work directory of their own, rewritten
// for each input, so the bytes reach bubblescope through the same reader as a user's file.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "fuzz_checks.h"

namespace bubblescope::fuzz {

// A directory made once for the process (removed at exit), for the files a target writes.
inline const std::filesystem::path& WorkDirectory() {
  static const std::filesystem::path* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/bubblescope-fuzzer-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) Fail("cannot make a temporary directory");
    auto* made = new std::filesystem::path(pattern);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(*dir, ignored);
    });
    return made;
  }();
  return *dir;
}

// Empties WorkDirectory(), for a target that lays out a directory anew for each input.
inline void EmptyWorkDirectory() {
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(WorkDirectory(), ignored)) {
    std::filesystem::remove_all(entry, ignored);
  }
}

// The path of a file holding `contents` in WorkDirectory(); `name` is the file's name in it.
inline std::string WriteWorkFile(std::string_view name, std::string_view contents) {
  const std::string path = (WorkDirectory() / std::string(name)).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) Fail("cannot write the work file");
  return path;
}

// An error about `path` is one line that names it first.
inline void CheckOneLineAbout(const absl::Status& status, const std::string& path) {
  const std::string_view message(status.message().data(), status.message().size());
  if (message.substr(0, path.size()) != path) Fail("an error that does not name its file first");
  if (message.find('\n') != std::string_view::npos) Fail("an error of more than one line");
}

}  // namespace bubblescope::fuzz
