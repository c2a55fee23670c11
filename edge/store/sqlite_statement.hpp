// Owning handles for a SQLite connection and a prepared statement, and a scope that resets a
// reused statement.
//
// Why the scope: the store prepares each statement once and reuses it for every call. A
// statement left un-reset keeps its read transaction (and so blocks WAL checkpoints) and keeps
// pointing at the caller's buffers (the state blob, which holds keys, is bound without a copy).
#pragma once

#include <sqlite3.h>

#include <utility>

namespace dsekp::edge::detail {

struct SqliteCloser {
  void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};

class SqliteStatement {
 public:
  SqliteStatement() = default;
  /// Prepares `sql` on `db` for repeated use; check ok() (the error is in sqlite3_errmsg(db)).
  SqliteStatement(sqlite3* db, const char* sql) noexcept;
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

}  // namespace dsekp::edge::detail
