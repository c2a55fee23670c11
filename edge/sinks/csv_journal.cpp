// CsvJournal (see csv_journal.hpp).
#include "edge/sinks/csv_journal.hpp"

namespace dsekp::edge::sinks {
namespace {

// AUTOINCREMENT: ids must never be reused. Without it SQLite hands out max(id) + 1, so once the
// journal is emptied a new line would get an id the sink already counts as appended.
// `line`: the record's lines (one unit's lines of one file), `rows` how many (a row's plaintext
// may hold a quoted newline, so they are not counted from the bytes).
constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS server_csv_journal(id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " file TEXT NOT NULL,"
    " offset INTEGER NOT NULL, line BLOB NOT NULL, rows INTEGER NOT NULL DEFAULT 1)";
// A journal of an edge that wrote one record per line has no `rows`: each of those is one.
constexpr const char* kAddRows =
    "ALTER TABLE server_csv_journal ADD COLUMN rows INTEGER NOT NULL DEFAULT 1";

}  // namespace

std::unique_ptr<CsvJournal> CsvJournal::open(sqlite3* db, std::string& error) {
  if (sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK) {
    error = std::string("CSV journal table: ") + sqlite3_errmsg(db);
    return nullptr;
  }
  if (!sqlite::has_column(db, "server_csv_journal", "rows") &&
      sqlite3_exec(db, kAddRows, nullptr, nullptr, nullptr) != SQLITE_OK) {
    error = std::string("CSV journal table: ") + sqlite3_errmsg(db);
    return nullptr;
  }
  std::unique_ptr<CsvJournal> j(new CsvJournal(db));
  j->insert_ = sqlite::SqliteStatement(
      db, "INSERT INTO server_csv_journal(file, offset, line, rows) VALUES(?1, ?2, ?3, ?4)");
  j->forget_ = sqlite::SqliteStatement(db, "DELETE FROM server_csv_journal WHERE id <= ?1");
  j->select_ = sqlite::SqliteStatement(
      db, "SELECT id, offset, line, rows FROM server_csv_journal WHERE file = ?1 ORDER BY id");
  if (!j->insert_.ok() || !j->forget_.ok() || !j->select_.ok()) {
    error = std::string("CSV journal statements: ") + sqlite3_errmsg(db);
    return nullptr;
  }
  return j;
}

std::int64_t CsvJournal::add(const std::string& file, std::uint64_t offset, const std::string& line,
                             std::uint32_t rows) {
  const sqlite::StatementScope s(insert_);
  const bool ok = sqlite3_bind_text(s.get(), 1, file.c_str(), -1, SQLITE_STATIC) == SQLITE_OK &&
                  sqlite3_bind_int64(s.get(), 2, static_cast<sqlite3_int64>(offset)) == SQLITE_OK &&
                  sqlite3_bind_blob(s.get(), 3, line.data(), static_cast<int>(line.size()),
                                    SQLITE_STATIC) == SQLITE_OK &&
                  sqlite3_bind_int64(s.get(), 4, rows) == SQLITE_OK &&
                  sqlite3_step(s.get()) == SQLITE_DONE;
  return ok ? sqlite3_last_insert_rowid(db_) : 0;
}

bool CsvJournal::forget_through(std::int64_t id) {
  const sqlite::StatementScope s(forget_);
  return sqlite3_bind_int64(s.get(), 1, id) == SQLITE_OK && sqlite3_step(s.get()) == SQLITE_DONE;
}

bool CsvJournal::lines(const std::string& file, std::vector<JournalLine>& out) {
  out.clear();
  const sqlite::StatementScope s(select_);
  if (sqlite3_bind_text(s.get(), 1, file.c_str(), -1, SQLITE_STATIC) != SQLITE_OK) return false;
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    JournalLine l;
    l.id = sqlite3_column_int64(s.get(), 0);
    l.offset = static_cast<std::uint64_t>(sqlite3_column_int64(s.get(), 1));
    const auto* data = static_cast<const char*>(sqlite3_column_blob(s.get(), 2));
    l.line.assign(data == nullptr ? "" : data,
                  static_cast<std::size_t>(sqlite3_column_bytes(s.get(), 2)));
    l.rows = static_cast<std::uint32_t>(sqlite3_column_int64(s.get(), 3));
    out.push_back(std::move(l));
  }
  return rc == SQLITE_DONE;
}

}  // namespace dsekp::edge::sinks
