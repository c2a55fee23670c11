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

}  // namespace dsekp::edge::sqlite
