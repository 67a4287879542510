#include "writers/sqlite_file.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"

namespace bubblescope::nsys {

SqliteFile::SqliteFile(const std::string& path) {
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    Fail();
    return;
  }
  // The file is written under a temporary name and renamed when whole: no journal, and no
  // waiting for the disk after each statement, are needed for that.
  Exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF");
}

SqliteFile::~SqliteFile() {
  Close();
  sqlite3_close(db_);
}

void SqliteFile::Exec(std::string_view sql) {
  if (ok() && sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    Fail();
  }
}

void SqliteFile::Insert(std::string_view table,
                        std::initializer_list<std::pair<std::string_view, Value>> row) {
  if (!ok()) return;
  std::string columns;
  std::string marks;
  for (const auto& [column, value] : row) {
    absl::StrAppend(&columns, columns.empty() ? "" : ", ", "\"", std::string(column), "\"");
    absl::StrAppend(&marks, marks.empty() ? "?" : ", ?");
  }
  const std::string sql =
      absl::StrCat("INSERT INTO ", std::string(table), " (", columns, ") VALUES (", marks, ")");
  sqlite3_stmt*& statement = statements_[sql];
  if (statement == nullptr &&
      sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    return Fail();
  }
  int index = 1;
  for (const auto& [column, value] : row) {
    if (const int64_t* number = std::get_if<int64_t>(&value)) {
      sqlite3_bind_int64(statement, index, *number);
    } else if (const std::string* text = std::get_if<std::string>(&value)) {
      sqlite3_bind_text(statement, index, text->data(), static_cast<int>(text->size()),
                        SQLITE_TRANSIENT);
    } else if (const Bytes* bytes = std::get_if<Bytes>(&value)) {
      sqlite3_bind_blob(statement, index, bytes->data.data(), static_cast<int>(bytes->data.size()),
                        SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_null(statement, index);
    }
    ++index;
  }
  if (sqlite3_step(statement) != SQLITE_DONE) Fail();
  sqlite3_reset(statement);
}

void SqliteFile::DropIfEmpty(std::string_view table) {
  if (!ok()) return;
  sqlite3_stmt* statement = nullptr;
  const std::string query = absl::StrCat("SELECT 1 FROM ", std::string(table), " LIMIT 1");
  if (sqlite3_prepare_v2(db_, query.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    sqlite3_finalize(statement);
    return;  // no such table
  }
  const bool empty = sqlite3_step(statement) != SQLITE_ROW;
  sqlite3_finalize(statement);
  if (empty) Exec(absl::StrCat("DROP TABLE ", std::string(table)));
}

void SqliteFile::Close() {
  for (auto& [sql, statement] : statements_) sqlite3_finalize(statement);
  statements_.clear();
}

void SqliteFile::Fail() {
  if (error_.empty()) error_ = db_ != nullptr ? sqlite3_errmsg(db_) : "cannot open";
}

}  // namespace bubblescope::nsys
