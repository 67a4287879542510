// A read-only view of one SQLite file, as the Nsight Systems reader needs it: opened without
// trusting anything the file declares (no triggers, views or functions run), tables listed once,
// statements stepped row by row. Errors are values; nothing here throws or aborts on a damaged
// file (SQLite reports corruption as an error code).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
  //
  // A write-ahead log beside it (`path`-wal, with SQLite's header) holds changes committed and not
  // yet checkpointed into the file; SQLite applies them only to a file opened for writing, with
  // the log's index (-shm) beside it, which it writes. So such a file is copied with its log into
  // a private temporary folder, and the copy is opened (and removed when this is destroyed):
  // the user's three files are only read. Where the copy cannot be made, or the -wal is no log,
  // the file is read as it is and unread_wal() says why.
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

  // A statement over the rows of `table` (a name from Table()) that pass `where` (on columns
  // SQLite can test without loading a long cell: integers), in rowid order, selecting
  // `columns`. A row holding a cell longer than kMaxCellBytes, which SQLite refuses to load, is
  // stepped over instead of ending the rows: Statement::skipped_rows() has its rowid.
  absl::StatusOr<Statement> PrepareScan(std::string_view columns, std::string_view table,
                                        std::string_view where) const;

  const std::string& path() const { return path_; }
  // Why changes in a write-ahead log beside the file were not read; empty when there are none,
  // or they were (see Open).
  const std::string& unread_wal() const { return unread_wal_; }
  // Whether the file was read through a private copy that applied its write-ahead log.
  bool read_wal() const { return !copy_folder_.empty(); }
  // "<path>: <what>" for an SQLite failure `code` met while reading.
  absl::Status Error(std::string_view what) const;

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  absl::Status ListTables();
  void Close();

  sqlite3* db_ = nullptr;
  std::string path_;
  std::string unread_wal_;
  std::string copy_folder_;  // the private copy's folder, removed on Close; empty: none
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
  // The rowids of the rows a scan (Database::PrepareScan) stepped over, each holding a cell
  // longer than kMaxCellBytes; in rowid order.
  const std::vector<int64_t>& skipped_rows() const { return skipped_rows_; }

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
  // Past a row SQLite refused as too big: finds it (the first row after the last one stepped),
  // notes it and restarts the scan after it. False where that fails (status_ says why).
  bool SkipOversizedRow();

  sqlite3_stmt* statement_ = nullptr;
  const Database* database_ = nullptr;
  absl::Status status_;
  // A scan's: the SQL that finds the first row after a rowid (?1), the rowid column's index in
  // the results (-1: not a scan), the last row stepped and the rows stepped over.
  std::string next_row_sql_;
  int rowid_column_ = -1;
  int64_t last_rowid_ = 0;
  bool any_row_ = false;
  std::vector<int64_t> skipped_rows_;
};

}  // namespace bubblescope::nsys
