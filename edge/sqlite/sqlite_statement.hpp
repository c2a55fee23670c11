// The edge's one SQLite handle layer: owning handles for a connection and a prepared statement,
// and a scope that resets a reused statement. The store, the service's credential generations,
// the sinks and the registry's status-returning facade (edge/registry/sqlite_db.hpp) all hold
// their SQLite objects through these.
//
// Why the scope: the store prepares each statement once and reuses it for every call. A
// statement left un-reset keeps its read transaction (and so blocks WAL checkpoints) and keeps
// pointing at the caller's buffers (the state blob, which holds keys, is bound without a copy).
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string_view>
#include <utility>

namespace dsekp::edge::sqlite {

struct SqliteCloser {
  void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
using SqliteConnection = std::unique_ptr<sqlite3, SqliteCloser>;

class SqliteStatement {
 public:
  SqliteStatement() = default;
  /// Prepares `sql` (one statement) on `db`; check ok() (the error is in sqlite3_errmsg(db)).
  /// `persistent`: the statement is kept and reused for the connection's life, so SQLite keeps
  /// it out of its short-lived lookaside memory (SQLITE_PREPARE_PERSISTENT).
  SqliteStatement(sqlite3* db, std::string_view sql, bool persistent = true) noexcept;
  SqliteStatement(SqliteStatement&& other) noexcept : stmt_(std::exchange(other.stmt_, nullptr)) {}
  SqliteStatement& operator=(SqliteStatement&& other) noexcept {
    std::swap(stmt_, other.stmt_);
    return *this;
  }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement() { sqlite3_finalize(stmt_); }

  [[nodiscard]] bool ok() const noexcept { return stmt_ != nullptr; }
  [[nodiscard]] sqlite3_stmt* get() const noexcept { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

/// Resets the statement and clears its bindings when the scope ends, however it ends.
class StatementScope {
 public:
  explicit StatementScope(const SqliteStatement& s) noexcept : stmt_(s.get()) {}
  StatementScope(const StatementScope&) = delete;
  StatementScope& operator=(const StatementScope&) = delete;
  ~StatementScope() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  [[nodiscard]] sqlite3_stmt* get() const noexcept { return stmt_; }

 private:
  sqlite3_stmt* stmt_;
};

/// Whether `table` has a column named `column` (a schema added to by a later version checks
/// before its ALTER TABLE). False also when the table does not exist or SQLite fails.
[[nodiscard]] bool has_column(sqlite3* db, std::string_view table, std::string_view column);

}  // namespace dsekp::edge::sqlite
