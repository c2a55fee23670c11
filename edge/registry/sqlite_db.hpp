// Thin RAII wrappers over the SQLite C API for the registry: a connection and prepared statements.
//
// Only what the registry uses: open, exec, prepare, bind text/blob/int64, step, read columns and a
// transaction guard that rolls back unless committed. Every failure comes back as a RegistryStatus
// carrying SQLite's own message, so an operator sees e.g. "database is locked" rather than a code.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dsekp/bytes.hpp"
#include "registry_status.hpp"

namespace dsekp::edge {

class SqliteDb;

/// A prepared statement. Reset (and its bindings cleared) before every use via `reset()`, so one
/// instance can be kept and reused on a hot path.
class SqliteStatement {
 public:
  SqliteStatement() = default;
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;

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
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) noexcept : db_(db), stmt_(stmt) {}
  RegistryStatus check_bind(int rc, int index) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

/// One SQLite connection. Not thread-safe: the registry keeps prepared statements on it.
class SqliteDb {
 public:
  SqliteDb() = default;
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;

  /// Opens an existing file read-write (never creates it: the registry creates the file itself
  /// so that its mode is 0600 from the first byte).
  RegistryStatus open(const std::string& path);
  /// Runs one or more SQL statements that return no rows we need.
  RegistryStatus exec(const char* sql);
  RegistryStatus prepare(std::string_view sql, SqliteStatement& out);
  /// Runs `sql` (one statement) and returns its single int64 result (e.g. a PRAGMA).
  RegistryStatus query_int64(const char* sql, std::int64_t& out);

  [[nodiscard]] sqlite3* handle() const noexcept { return db_; }
  /// "what: <SQLite's message>" for the connection's most recent error.
  [[nodiscard]] std::string error(std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
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
