#include "support/test_files.h"

#include <stdlib.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "gtest/gtest.h"

namespace bubblescope::testing {

TempDir::TempDir() {
  std::string pattern =
      (std::filesystem::path(::testing::TempDir()) / "bubblescope_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::Write(const std::string& name, std::string_view bytes) const {
  const std::filesystem::path file = std::filesystem::path(path_) / name;
  std::filesystem::create_directories(file.parent_path());
  WriteFile(file.string(), bytes);
  return file.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ADD_FAILURE() << "cannot read " << path;
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) ADD_FAILURE() << "cannot write " << path;
}

std::string Gzip(std::string_view text, int level) {
  z_stream stream{};
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    ADD_FAILURE() << "deflateInit2 failed";
    return "";
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::string Gunzip(std::string_view compressed) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 32) != Z_OK) {
    ADD_FAILURE() << "inflateInit2 failed";
    return "";
  }
  std::string out;
  char buffer[1 << 16];
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END || stream.avail_in > 0) {
    if (rc == Z_STREAM_END) inflateReset(&stream);  // the next gzip member
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    rc = inflate(&stream, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      ADD_FAILURE() << "gzip data does not inflate: " << rc;
      break;
    }
    out.append(buffer, sizeof(buffer) - stream.avail_out);
  }
  inflateEnd(&stream);
  return out;
}

std::string WithClockBaseFirst(const std::string& document) {
  const std::string key = "\"baseTimeNanoseconds\":";
  const size_t at = document.rfind(key);
  const size_t open = document.find('{');
  if (at == std::string::npos || open == std::string::npos || at < open) return document;
  size_t end = at + key.size();
  while (end < document.size() && document[end] != ',' && document[end] != '}') ++end;
  std::string member = document.substr(at, end - at);
  std::string moved = document;
  // The member and the comma before it (it was the last member) leave its place.
  size_t from = at;
  while (from > 0 && moved[from - 1] != ',') --from;
  moved.erase(from - 1, end - (from - 1));
  moved.insert(open + 1, member + ",");
  return moved;
}

}  // namespace bubblescope::testing
