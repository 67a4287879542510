#include "readers/nsys_database.h"

#include <sqlite3.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "text/one_line.h"

namespace bubblescope::nsys {
namespace {

// The page cache's share of the reading budget: SQLite reads pages on demand, so the file's
// size is no bound on memory; this is.
constexpr int64_t kMaxCacheBytes = int64_t{64} << 20;
// The most of SQLite's own message an error quotes.
constexpr size_t kMaxDetailBytes = 200;

}  // namespace

absl::StatusOr<Database> Database::Open(const std::string& path, int64_t max_bytes) {
  sqlite3* db = nullptr;
  // immutable=1: the file is read as it is, without locks, journals or a -wal beside it (an
  // export is never written while it is read; a reader must not leave files next to it).
  // '?', '#' and '%' in the name itself would end or escape the URI's path part.
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
  escaped += "?immutable=1";
  const int rc = sqlite3_open_v2(escaped.c_str(), &db,
                                 SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    std::string what = text::OneLine(db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open as SQLite: ", what));
  }
  Database database(db, path);
  // Nothing the file declares runs: no triggers, no functions in its schema, no writes.
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxCellBytes);
  const int64_t cache_kib = std::max<int64_t>(1024, std::min(max_bytes, kMaxCacheBytes) / 1024);
  sqlite3_exec(db, absl::StrCat("PRAGMA cache_size = -", cache_kib).c_str(), nullptr, nullptr,
               nullptr);
  if (absl::Status listed = database.ListTables(); !listed.ok()) return listed;
  return database;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      tables_(std::move(other.tables_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    tables_ = std::move(other.tables_);
  }
  return *this;
}

Database::~Database() { sqlite3_close(db_); }

absl::Status Database::Error(std::string_view what) const {
  // SQLite's message may quote the file's own schema text: one line, and not all of it.
  std::string detail = db_ != nullptr ? text::OneLine(sqlite3_errmsg(db_)) : "";
  if (detail.size() > kMaxDetailBytes) detail = detail.substr(0, kMaxDetailBytes) + "...";
  return absl::InvalidArgumentError(absl::StrCat(path_, ": ", std::string(what),
                                                 detail.empty() ? "" : ": ", detail));
}

absl::Status Database::ListTables() {
  absl::StatusOr<Statement> tables =
      Prepare("SELECT name FROM sqlite_master WHERE type = 'table'");
  if (!tables.ok()) {
    // Not a database at all (SQLITE_NOTADB shows here, on the first read), or a damaged one.
    return tables.status();
  }
  // Documented name -> (version, name in the file); version 0 for the unversioned name.
  absl::flat_hash_map<std::string, std::pair<int64_t, std::string>> best;
  while (tables->Step()) {
    const std::string name(tables->Text(0));
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
  return tables->status();
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
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement,
                                    nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(statement);
    return Error(rc == SQLITE_NOTADB ? "not an SQLite database" : "unreadable");
  }
  return Statement(statement, this);
}

Statement::Statement(Statement&& other) noexcept
    : statement_(std::exchange(other.statement_, nullptr)),
      database_(other.database_),
      status_(std::move(other.status_)) {}

Statement::~Statement() { sqlite3_finalize(statement_); }

bool Statement::Step() {
  if (statement_ == nullptr || !status_.ok()) return false;
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) {
    status_ = database_->Error(rc == SQLITE_NOTADB ? "not an SQLite database" : "damaged");
  }
  return false;
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
