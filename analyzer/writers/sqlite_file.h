// A small writer of SQLite files for the Nsight Systems writer: statements run in order, rows
// inserted through prepared statements kept per table and column list, the first error kept
// (every call after it does nothing) and reported by error().
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"

struct sqlite3;
struct sqlite3_stmt;

namespace bubblescope::nsys {

// A cell bound as a BLOB (NVTX_EVENTS.binaryData, as nsys writes it).
struct Bytes {
  std::string data;
};

class SqliteFile {
 public:
  // Opens (creates) `path` for writing.
  explicit SqliteFile(const std::string& path);
  ~SqliteFile();
  SqliteFile(const SqliteFile&) = delete;
  SqliteFile& operator=(const SqliteFile&) = delete;

  void Exec(std::string_view sql);
  // Inserts one row; values are integers, text, bytes or NULL (nullopt).
  using Value = std::variant<std::nullopt_t, int64_t, std::string, Bytes>;
  void Insert(std::string_view table,
              std::initializer_list<std::pair<std::string_view, Value>> row);
  // Drops `table` when it holds no row (an export holds only tables with rows).
  void DropIfEmpty(std::string_view table);
  // Finalizes the kept statements; call before the file goes.
  void Close();

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  void Fail();

  sqlite3* db_ = nullptr;
  absl::flat_hash_map<std::string, sqlite3_stmt*> statements_;
  std::string error_;
};

}  // namespace bubblescope::nsys
