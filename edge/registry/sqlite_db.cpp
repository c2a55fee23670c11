// SQLite connection, statement and transaction wrappers (see sqlite_db.hpp).
#include "sqlite_db.hpp"

#include <limits>
#include <utility>

namespace dsekp::edge {

void RegistryStatement::reset() noexcept {
  sqlite3_reset(handle_.get());
  sqlite3_clear_bindings(handle_.get());
}

RegistryStatus RegistryStatement::check_bind(int rc, int index) const {
  if (rc == SQLITE_OK) return {};
  return {RegistryErrc::database,
          "binding parameter " + std::to_string(index) + ": " + std::string(sqlite3_errstr(rc))};
}

RegistryStatus RegistryStatement::bind_text(int index, std::string_view text) {
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return {RegistryErrc::database, "text parameter too long"};
  return check_bind(sqlite3_bind_text(handle_.get(), index, text.data(),
                                      static_cast<int>(text.size()), SQLITE_TRANSIENT),
                    index);
}

RegistryStatus RegistryStatement::bind_blob(int index, ByteView bytes) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return {RegistryErrc::database, "blob parameter too long"};
  // SQLITE_TRANSIENT: SQLite copies the bytes, so a caller's secret may be wiped right after.
  return check_bind(sqlite3_bind_blob(handle_.get(), index, bytes.data(),
                                      static_cast<int>(bytes.size()), SQLITE_TRANSIENT),
                    index);
}

RegistryStatus RegistryStatement::bind_int64(int index, std::int64_t value) {
  return check_bind(sqlite3_bind_int64(handle_.get(), index, value), index);
}

RegistryStatus RegistryStatement::bind_null(int index) {
  return check_bind(sqlite3_bind_null(handle_.get(), index), index);
}

RegistryStatus RegistryStatement::step(bool& row) {
  const int rc = sqlite3_step(handle_.get());
  row = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW || rc == SQLITE_DONE) return {};
  return {RegistryErrc::database, std::string("sqlite: ") + sqlite3_errmsg(db_)};
}

RegistryStatus RegistryStatement::run() {
  bool row = false;
  return step(row);
}

std::int64_t RegistryStatement::column_int64(int column) const noexcept {
  return sqlite3_column_int64(handle_.get(), column);
}

std::optional<std::int64_t> RegistryStatement::column_optional_int64(int column) const noexcept {
  if (sqlite3_column_type(handle_.get(), column) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(handle_.get(), column);
}

std::string RegistryStatement::column_text(int column) const {
  const auto* text = sqlite3_column_text(handle_.get(), column);
  const int size = sqlite3_column_bytes(handle_.get(), column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

ByteView RegistryStatement::column_blob(int column) const noexcept {
  const void* blob = sqlite3_column_blob(handle_.get(), column);
  const int size = sqlite3_column_bytes(handle_.get(), column);
  if (blob == nullptr || size <= 0) return {};
  return ByteView(static_cast<const std::uint8_t*>(blob), static_cast<std::size_t>(size));
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
  db_.reset(db);
  // Turn "database is locked" into a bounded wait: the CLI may write while the edge reads, or
  // two CLI invocations may overlap.
  sqlite3_busy_timeout(db, kRegistryBusyTimeoutMs);
  sqlite3_extended_result_codes(db, 1);
  return {};
}

RegistryStatus SqliteDb::exec(const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return {};
  std::string text = std::string("sqlite: ") + (message != nullptr ? message : sqlite3_errstr(rc));
  sqlite3_free(message);
  return {RegistryErrc::database, std::move(text)};
}

RegistryStatus SqliteDb::prepare(std::string_view sql, RegistryStatement& out) {
  sqlite::SqliteStatement stmt(db_.get(), sql, /*persistent=*/false);
  if (!stmt.ok()) return {RegistryErrc::database, error("preparing statement")};
  out = RegistryStatement(db_.get(), std::move(stmt));
  return {};
}

RegistryStatus SqliteDb::query_int64(const char* sql, std::int64_t& out) {
  RegistryStatement stmt;
  if (auto s = prepare(sql, stmt); !s.ok()) return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  if (!row) return {RegistryErrc::database, std::string("no result from: ") + sql};
  out = stmt.column_int64(0);
  return {};
}

std::string SqliteDb::error(std::string_view what) const {
  return std::string(what) + ": " + (db_ != nullptr ? sqlite3_errmsg(db_.get()) : "no connection");
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
