// Prepared statements (see sqlite_statement.hpp).
#include "sqlite_statement.hpp"

namespace dsekp::edge::detail {

SqliteStatement::SqliteStatement(sqlite3* db, const char* sql) noexcept {
  // PERSISTENT: the statement lives as long as the store, so SQLite keeps it out of its
  // short-lived lookaside memory.
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
}

}  // namespace dsekp::edge::detail
