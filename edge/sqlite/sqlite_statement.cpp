// Prepared statements (see sqlite_statement.hpp).
#include "edge/sqlite/sqlite_statement.hpp"

#include <limits>

namespace dsekp::edge::sqlite {

SqliteStatement::SqliteStatement(sqlite3* db, std::string_view sql, bool persistent) noexcept {
  if (sql.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) return;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                    persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
}

bool has_column(sqlite3* db, std::string_view table, std::string_view column) {
  SqliteStatement s(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", false);
  if (!s.ok()) return false;
  sqlite3_bind_text(s.get(), 1, table.data(), static_cast<int>(table.size()), SQLITE_STATIC);
  sqlite3_bind_text(s.get(), 2, column.data(), static_cast<int>(column.size()), SQLITE_STATIC);
  return sqlite3_step(s.get()) == SQLITE_ROW && sqlite3_column_int(s.get(), 0) > 0;
}

}  // namespace dsekp::edge::sqlite
