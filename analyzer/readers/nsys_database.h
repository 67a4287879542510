// A read-only view of one SQLite file, as the Nsight Systems reader needs it: opened without
// trusting anything the file declares (no triggers, views or functions run), tables listed once,
// statements stepped row by row. Errors are values; nothing here throws or aborts on a damaged
// file (SQLite reports corruption as an error code).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace bubblescope::nsys {

class Statement;

// The longest string or blob one cell may hold: far above any kernel name or payload, and a
// bound on what one damaged cell can make the reader allocate. A query that would load a longer
// one fails; the reader asks for the sizes of cells that can be long before it loads them.
inline constexpr int kMaxCellBytes = 16 << 20;

class Database {
 public:
  // Opens `path` read-only and immutable (no journal, no lock files beside it). `max_bytes` caps
  // the memory SQLite may hold for it (its page cache). Error: one line naming the path.
  static absl::StatusOr<Database> Open(const std::string& path, int64_t max_bytes);

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Whether the table exists (tables exist only when they have rows; views and other objects a
  // file declares under a table's name do not count), under its documented name or a versioned
  // one: some exports name tables NAME_V2, NAME_V3 (the unversioned name wins, then the highest
  // version).
  bool HasTable(std::string_view name) const { return tables_.contains(std::string(name)); }
  // The table's name in this file, quoted for SQL; call only where HasTable(name).
  std::string Table(std::string_view name) const;
  // Whether `table` has a column `column` (columns come and go between export versions).
  bool HasColumn(std::string_view table, std::string_view column) const;

  // Prepares `sql`. Error: "<path>: <what SQLite said>".
  absl::StatusOr<Statement> Prepare(std::string_view sql) const;

  const std::string& path() const { return path_; }
  // "<path>: <what>" for an SQLite failure `code` met while reading.
  absl::Status Error(std::string_view what) const;

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  absl::Status ListTables();

  sqlite3* db_ = nullptr;
  std::string path_;
  // Documented name -> the name in this file.
  absl::flat_hash_map<std::string, std::string> tables_;
};

// One prepared statement. Step() until it returns false; then status() says whether the rows
// ended or reading failed.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  bool Step();
  const absl::Status& status() const { return status_; }

  bool IsNull(int column) const;
  // Whether the cell holds an integer (not NULL, text, a real or a blob).
  bool IsInteger(int column) const;
  // The cell's size in bytes, without converting it.
  int Bytes(int column) const;
  int64_t Int(int column) const;  // 0 for NULL; text or real columns converted as SQLite does
  double Real(int column) const;
  std::string_view Text(int column) const;  // empty for NULL
  std::string_view Blob(int column) const;  // the column's bytes, whatever its type

 private:
  friend class Database;
  Statement(sqlite3_stmt* statement, const Database* database)
      : statement_(statement), database_(database) {}

  sqlite3_stmt* statement_ = nullptr;
  const Database* database_ = nullptr;
  absl::Status status_;
};

}  // namespace bubblescope::nsys
