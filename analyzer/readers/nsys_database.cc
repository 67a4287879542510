#include "readers/nsys_database.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "text/one_line.h"

namespace bubblescope::nsys {
namespace {

// The page cache's share of the reading budget: SQLite reads pages on demand, so the file's
// size is no bound on memory; this is.
constexpr int64_t kMaxCacheBytes = int64_t{64} << 20;
// The most of SQLite's own message an error quotes.
constexpr size_t kMaxDetailBytes = 200;

// `path` as the path part of an SQLite URI: '?', '#' and '%' in the name itself would end or
// escape it.
std::string UriPath(const std::string& path) {
  std::string escaped = "file:";
  for (char c : path) {
    if (c == '?') {
      escaped += "%3f";
    } else if (c == '#') {
      escaped += "%23";
    } else if (c == '%') {
      escaped += "%25";
    } else {
      escaped.push_back(c);
    }
  }
  return escaped;
}

// Whether `file` starts as an SQLite write-ahead log does (its magic, either byte order of the
// checksums).
bool IsWriteAheadLog(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char magic[4] = {};
  if (!in.read(reinterpret_cast<char*>(magic), sizeof(magic))) return false;
  return magic[0] == 0x37 && magic[1] == 0x7f && magic[2] == 0x06 &&
         (magic[3] == 0x82 || magic[3] == 0x83);
}

// A private folder holding a copy of `path` and its write-ahead log, SQLite's names kept
// together ("export.sqlite", "export.sqlite-wal"); empty, with `why`, where it cannot be made.
std::string CopyWithLog(const std::string& path, std::string* why) {
  namespace fs = std::filesystem;
  const char* tmp = std::getenv("TMPDIR");
  std::string folder =
      absl::StrCat(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp", "/bubblescope-nsys-XXXXXX");
  if (mkdtemp(folder.data()) == nullptr) {
    *why = absl::StrCat("cannot make a folder to apply them in: ", std::strerror(errno));
    return "";
  }
  std::error_code error;
  const fs::path copy = fs::path(folder) / "export.sqlite";
  if (fs::copy_file(path, copy, error) &&
      fs::copy_file(path + "-wal", copy.string() + "-wal", error)) {
    return folder;
  }
  *why = absl::StrCat("cannot copy them to apply them: ", error.message());
  fs::remove_all(folder, error);
  return "";
}

}  // namespace

absl::StatusOr<Database> Database::Open(const std::string& path, int64_t max_bytes) {
  // The file is read as it is (immutable=1: without locks, journals or an index beside it; a
  // reader must not leave files next to it), unless a write-ahead log beside it holds changes
  // (see the header): then a private copy with the log is opened for writing, which is what
  // makes SQLite apply the log.
  std::string unread_wal;
  std::string copy_folder;
  const std::string wal = path + "-wal";
  struct stat wal_status {};
  if (stat(wal.c_str(), &wal_status) == 0 && S_ISREG(wal_status.st_mode) &&
      wal_status.st_size > 0) {
    const std::string held =
        absl::StrCat(wal, " holds ", static_cast<int64_t>(wal_status.st_size), " bytes");
    std::string why;
    if (!IsWriteAheadLog(wal)) {
      unread_wal = absl::StrCat(held, " that are no SQLite write-ahead log, not read");
    } else if (copy_folder = CopyWithLog(path, &why); copy_folder.empty()) {
      unread_wal = absl::StrCat(held, " of changes not checkpointed into the file, not read (", why,
                                "; sqlite3 ", path,
                                " 'PRAGMA wal_checkpoint(TRUNCATE)' writes them into it)");
    }
  }
  const std::string uri = copy_folder.empty() ? UriPath(path) + "?immutable=1"
                                              : UriPath(copy_folder + "/export.sqlite");
  const int flags = (copy_folder.empty() ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
                    SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(uri.c_str(), &db, flags, nullptr);
  Database database(db, path);
  database.unread_wal_ = std::move(unread_wal);
  database.copy_folder_ = std::move(copy_folder);
  if (rc != SQLITE_OK) {
    std::string what = text::OneLine(db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open as SQLite: ", what));
  }
  // Nothing the file declares runs: no triggers, no functions in its schema, no writes.
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxCellBytes);
  const int64_t cache_kib = std::max<int64_t>(1024, std::min(max_bytes, kMaxCacheBytes) / 1024);
  sqlite3_exec(db, absl::StrCat("PRAGMA cache_size = -", cache_kib).c_str(), nullptr, nullptr,
               nullptr);
  BUBBLESCOPE_RETURN_IF_ERROR(database.ListTables());
  return database;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      unread_wal_(std::move(other.unread_wal_)),
      copy_folder_(std::exchange(other.copy_folder_, "")),
      tables_(std::move(other.tables_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    Close();
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    unread_wal_ = std::move(other.unread_wal_);
    copy_folder_ = std::exchange(other.copy_folder_, "");
    tables_ = std::move(other.tables_);
  }
  return *this;
}

Database::~Database() { Close(); }

void Database::Close() {
  sqlite3_close(db_);
  db_ = nullptr;
  if (!copy_folder_.empty()) {
    std::error_code error;
    std::filesystem::remove_all(copy_folder_, error);
    copy_folder_.clear();
  }
}

absl::Status Database::Error(std::string_view what) const {
  // SQLite's message may quote the file's own schema text: one line, and not all of it.
  std::string detail = db_ != nullptr ? text::OneLine(sqlite3_errmsg(db_)) : "";
  if (detail.size() > kMaxDetailBytes) detail = detail.substr(0, kMaxDetailBytes) + "...";
  return absl::InvalidArgumentError(
      absl::StrCat(path_, ": ", std::string(what), detail.empty() ? "" : ": ", detail));
}

absl::Status Database::ListTables() {
  // Fails on a file that is not a database at all (SQLITE_NOTADB shows here, on the first read),
  // or a damaged one.
  BUBBLESCOPE_ASSIGN_OR_RETURN(Statement tables,
                               Prepare("SELECT name FROM sqlite_master WHERE type = 'table'"));
  // Documented name -> (version, name in the file); version 0 for the unversioned name.
  absl::flat_hash_map<std::string, std::pair<int64_t, std::string>> best;
  while (tables.Step()) {
    const std::string name(tables.Text(0));
    std::string base = name;
    int64_t version = 0;
    const size_t mark = name.rfind("_V");
    if (mark != std::string::npos && mark + 2 < name.size() && name.size() - mark <= 6 &&
        std::all_of(name.begin() + static_cast<std::ptrdiff_t>(mark + 2), name.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
      base = name.substr(0, mark);
      version = std::stoll(name.substr(mark + 2));
    }
    auto [it, added] = best.try_emplace(base, version, name);
    const bool better = it->second.first != 0 && (version == 0 || version > it->second.first);
    if (!added && better) it->second = {version, name};
  }
  for (auto& [base, choice] : best) tables_.try_emplace(base, std::move(choice.second));
  return tables.status();
}

std::string Database::Table(std::string_view name) const {
  auto it = tables_.find(std::string(name));
  return absl::StrCat("\"", it != tables_.end() ? it->second : std::string(name), "\"");
}

bool Database::HasColumn(std::string_view table, std::string_view column) const {
  if (!HasTable(table)) return false;
  // The names are the reader's own constants, never the file's: safe to splice.
  absl::StatusOr<Statement> info = Prepare(absl::StrCat("PRAGMA table_info(", Table(table), ")"));
  if (!info.ok()) return false;
  while (info->Step()) {
    if (info->Text(1) == column) return true;
  }
  return false;
}

absl::StatusOr<Statement> Database::Prepare(std::string_view sql) const {
  sqlite3_stmt* statement = nullptr;
  const int rc =
      sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(statement);
    return Error(rc == SQLITE_NOTADB ? "not an SQLite database" : "unreadable");
  }
  return Statement(statement, this);
}

absl::StatusOr<Statement> Database::PrepareScan(std::string_view columns, std::string_view table,
                                                std::string_view where) const {
  // NOT INDEXED: the table's own b-tree, in rowid order, so that no sorter loads the rows and
  // "after the last rowid stepped" is where the scan stands.
  const std::string rows = absl::StrCat(" FROM ", std::string(table), " NOT INDEXED WHERE (",
                                        std::string(where), ") AND rowid >= ?1");
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      Statement scan,
      Prepare(absl::StrCat("SELECT ", std::string(columns), ", rowid", rows, " ORDER BY rowid")));
  sqlite3_bind_int64(scan.statement_, 1, std::numeric_limits<int64_t>::min());
  scan.rowid_column_ = sqlite3_column_count(scan.statement_) - 1;
  scan.next_row_sql_ = absl::StrCat("SELECT min(rowid)", rows);
  return scan;
}

Statement::Statement(Statement&& other) noexcept
    : statement_(std::exchange(other.statement_, nullptr)),
      database_(other.database_),
      status_(std::move(other.status_)),
      next_row_sql_(std::move(other.next_row_sql_)),
      rowid_column_(other.rowid_column_),
      last_rowid_(other.last_rowid_),
      any_row_(other.any_row_),
      skipped_rows_(std::move(other.skipped_rows_)) {}

Statement::~Statement() { sqlite3_finalize(statement_); }

bool Statement::Step() {
  if (statement_ == nullptr || !status_.ok()) return false;
  while (true) {
    const int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) {
      if (rowid_column_ >= 0) {
        last_rowid_ = sqlite3_column_int64(statement_, rowid_column_);
        any_row_ = true;
      }
      return true;
    }
    if (rc == SQLITE_TOOBIG && rowid_column_ >= 0) {
      if (SkipOversizedRow()) continue;
      return false;  // status_ says why, or the scan ended on the last rowid there can be
    }
    if (rc != SQLITE_DONE) {
      status_ = database_->Error(rc == SQLITE_NOTADB ? "not an SQLite database" : "damaged");
    }
    return false;
  }
}

bool Statement::SkipOversizedRow() {
  // The row refused is the first the scan had not yet stepped.
  const int64_t from = any_row_ ? last_rowid_ + 1 : std::numeric_limits<int64_t>::min();
  absl::StatusOr<Statement> next = database_->Prepare(next_row_sql_);
  if (!next.ok()) {
    status_ = next.status();
    return false;
  }
  sqlite3_bind_int64(next->statement_, 1, from);
  if (!next->Step() || next->IsNull(0)) {
    status_ = next->status().ok() ? database_->Error("damaged") : next->status();
    return false;
  }
  const int64_t refused = next->Int(0);
  skipped_rows_.push_back(refused);
  sqlite3_reset(statement_);
  if (refused == std::numeric_limits<int64_t>::max()) {
    // Nothing can follow the last rowid there is: the scan ends here.
    sqlite3_finalize(statement_);
    statement_ = nullptr;
    return false;
  }
  sqlite3_bind_int64(statement_, 1, refused + 1);
  // Stepping on from after the refused row counts as having stepped it.
  last_rowid_ = refused;
  any_row_ = true;
  return true;
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

bool Statement::IsInteger(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_INTEGER;
}

int Statement::Bytes(int column) const { return sqlite3_column_bytes(statement_, column); }

int64_t Statement::Int(int column) const { return sqlite3_column_int64(statement_, column); }

double Statement::Real(int column) const { return sqlite3_column_double(statement_, column); }

std::string_view Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text),
          static_cast<size_t>(sqlite3_column_bytes(statement_, column))};
}

std::string_view Statement::Blob(int column) const {
  const void* blob = sqlite3_column_blob(statement_, column);
  if (blob == nullptr) return {};
  return {static_cast<const char*>(blob),
          static_cast<size_t>(sqlite3_column_bytes(statement_, column))};
}

}  // namespace bubblescope::nsys
