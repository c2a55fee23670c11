// The registry's checked view of SQLite: a connection and prepared statements whose every
// operation returns a RegistryStatus carrying SQLite's own message, so an operator sees e.g.
// "database is locked" rather than a code. The handles themselves are the edge's one SQLite
// handle layer (edge/sqlite/sqlite_statement.hpp), shared with the store, service and sinks.
//
// Only what the registry uses: open, exec, prepare, bind text/blob/int64, step, read columns and a
// transaction guard that rolls back unless committed.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "dsekp/bytes.hpp"
#include "edge/sqlite/sqlite_statement.hpp"
#include "registry_status.hpp"

namespace dsekp::edge {

/// How long a statement waits for another connection's lock before failing (busy).
inline constexpr int kRegistryBusyTimeoutMs = 5000;

class SqliteDb;

/// A prepared statement (owning its handle). Reset (and its bindings cleared) before every use via
/// `reset()`, so one instance can be kept and reused on a hot path.
class RegistryStatement {
 public:
  RegistryStatement() = default;

  void reset() noexcept;
  RegistryStatus bind_text(int index, std::string_view text);
  RegistryStatus bind_blob(int index, ByteView bytes);
  RegistryStatus bind_int64(int index, std::int64_t value);
  RegistryStatus bind_null(int index);

  /// One step: `row` is true when a row is available, false when the statement is done.
  RegistryStatus step(bool& row);
  /// Steps a statement that returns no rows (INSERT, UPDATE, DELETE, DDL).
  RegistryStatus run();

  [[nodiscard]] std::int64_t column_int64(int column) const noexcept;
  [[nodiscard]] std::optional<std::int64_t> column_optional_int64(int column) const noexcept;
  [[nodiscard]] std::string column_text(int column) const;
  /// A view of the column's bytes, valid until the next step/reset (SQLite owns the memory).
  [[nodiscard]] ByteView column_blob(int column) const noexcept;

 private:
  friend class SqliteDb;
  RegistryStatement(sqlite3* db, sqlite::SqliteStatement stmt) noexcept
      : db_(db), handle_(std::move(stmt)) {}
  RegistryStatus check_bind(int rc, int index) const;

  sqlite3* db_ = nullptr;
  sqlite::SqliteStatement handle_;
};

/// One SQLite connection. Not thread-safe: the registry keeps prepared statements on it.
class SqliteDb {
 public:
  SqliteDb() = default;

  /// Opens an existing file read-write (never creates it: the registry creates the file itself
  /// so that its mode is 0600 from the first byte).
  RegistryStatus open(const std::string& path);
  /// Runs one or more SQL statements that return no rows we need.
  RegistryStatus exec(const char* sql);
  RegistryStatus prepare(std::string_view sql, RegistryStatement& out);
  /// Runs `sql` (one statement) and returns its single int64 result (e.g. a PRAGMA).
  RegistryStatus query_int64(const char* sql, std::int64_t& out);

  [[nodiscard]] sqlite3* handle() const noexcept { return db_.get(); }
  /// "what: <SQLite's message>" for the connection's most recent error.
  [[nodiscard]] std::string error(std::string_view what) const;

 private:
  sqlite::SqliteConnection db_;
};

/// BEGIN IMMEDIATE ... COMMIT, rolled back on destruction unless commit() succeeded. IMMEDIATE
/// takes the write lock at BEGIN, so two writers (the CLI and a second CLI) queue on the busy
/// timeout instead of failing when a read transaction would have to be upgraded.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDb& db) noexcept : db_(db) {}
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;

  RegistryStatus begin();
  RegistryStatus commit();

 private:
  SqliteDb& db_;
  bool open_ = false;
};

}  // namespace dsekp::edge
