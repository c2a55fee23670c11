// SQLite connection, statement and transaction wrappers (see sqlite_db.hpp).
#include "sqlite_db.hpp"

#include <limits>
#include <utility>

namespace dsekp::edge {

SqliteStatement::~SqliteStatement() {
  sqlite3_finalize(stmt_);
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), stmt_(std::exchange(other.stmt_, nullptr)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

void SqliteStatement::reset() noexcept {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

RegistryStatus SqliteStatement::check_bind(int rc, int index) const {
  if (rc == SQLITE_OK) return {};
  return {RegistryErrc::database,
          "binding parameter " + std::to_string(index) + ": " + std::string(sqlite3_errstr(rc))};
}

RegistryStatus SqliteStatement::bind_text(int index, std::string_view text) {
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return {RegistryErrc::database, "text parameter too long"};
  return check_bind(
      sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT),
      index);
}

RegistryStatus SqliteStatement::bind_blob(int index, ByteView bytes) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return {RegistryErrc::database, "blob parameter too long"};
  // SQLITE_TRANSIENT: SQLite copies the bytes, so a caller's secret may be wiped right after.
  return check_bind(sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()),
                                      SQLITE_TRANSIENT),
                    index);
}

RegistryStatus SqliteStatement::bind_int64(int index, std::int64_t value) {
  return check_bind(sqlite3_bind_int64(stmt_, index, value), index);
}

RegistryStatus SqliteStatement::bind_null(int index) {
  return check_bind(sqlite3_bind_null(stmt_, index), index);
}

RegistryStatus SqliteStatement::step(bool& row) {
  const int rc = sqlite3_step(stmt_);
  row = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW || rc == SQLITE_DONE) return {};
  return {RegistryErrc::database, std::string("sqlite: ") + sqlite3_errmsg(db_)};
}

RegistryStatus SqliteStatement::run() {
  bool row = false;
  return step(row);
}

std::int64_t SqliteStatement::column_int64(int column) const noexcept {
  return sqlite3_column_int64(stmt_, column);
}

std::optional<std::int64_t> SqliteStatement::column_optional_int64(int column) const noexcept {
  if (sqlite3_column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(stmt_, column);
}

std::string SqliteStatement::column_text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

ByteView SqliteStatement::column_blob(int column) const noexcept {
  const void* blob = sqlite3_column_blob(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (blob == nullptr || size <= 0) return {};
  return ByteView(static_cast<const std::uint8_t*>(blob), static_cast<std::size_t>(size));
}

SqliteDb::~SqliteDb() {
  sqlite3_close_v2(db_);
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

RegistryStatus SqliteDb::open(const std::string& path) {
  sqlite3* db = nullptr;
  // NOFOLLOW: the permission check was made on the file itself, not on a symlink's target.
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc != SQLITE_OK) {
    std::string message =
        "cannot open " + path + ": " + (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return {RegistryErrc::database, std::move(message)};
  }
  sqlite3_close_v2(db_);
  db_ = db;
  // Turn "database is locked" into a bounded wait: the CLI may write while the edge reads, or
  // two CLI invocations may overlap.
  sqlite3_busy_timeout(db_, 5000);
  sqlite3_extended_result_codes(db_, 1);
  return {};
}

RegistryStatus SqliteDb::exec(const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return {};
  std::string text = std::string("sqlite: ") + (message != nullptr ? message : sqlite3_errstr(rc));
  sqlite3_free(message);
  return {RegistryErrc::database, std::move(text)};
}

RegistryStatus SqliteDb::prepare(std::string_view sql, SqliteStatement& out) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return {RegistryErrc::database, error("preparing statement")};
  out = SqliteStatement(db_, stmt);
  return {};
}

RegistryStatus SqliteDb::query_int64(const char* sql, std::int64_t& out) {
  SqliteStatement stmt;
  if (auto s = prepare(sql, stmt); !s.ok()) return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  if (!row) return {RegistryErrc::database, std::string("no result from: ") + sql};
  out = stmt.column_int64(0);
  return {};
}

std::string SqliteDb::error(std::string_view what) const {
  return std::string(what) + ": " + (db_ != nullptr ? sqlite3_errmsg(db_) : "no connection");
}

SqliteTransaction::~SqliteTransaction() {
  if (open_) (void)db_.exec("ROLLBACK");
}

RegistryStatus SqliteTransaction::begin() {
  auto s = db_.exec("BEGIN IMMEDIATE");
  open_ = s.ok();
  return s;
}

RegistryStatus SqliteTransaction::commit() {
  auto s = db_.exec("COMMIT");
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace dsekp::edge
