// CsvJournal (see csv_journal.hpp).
#include "edge/sinks/csv_journal.hpp"

#include "edge/sqlite/sqlite_statement.hpp"

namespace dsekp::edge::sinks {

std::unique_ptr<CsvJournal> CsvJournal::open_existing(sqlite3* db, std::string& error) {
  error.clear();
  if (!sqlite::has_column(db, "server_csv_journal", "line")) return nullptr;
  return std::unique_ptr<CsvJournal>(
      new CsvJournal(db, sqlite::has_column(db, "server_csv_journal", "rows")));
}

bool CsvJournal::lines(const std::string& file, std::vector<JournalLine>& out) {
  out.clear();
  const sqlite::SqliteStatement select(
      db_,
      has_rows_ ? "SELECT id, offset, line, rows FROM server_csv_journal WHERE file = ?1"
                  " ORDER BY id"
                : "SELECT id, offset, line, 1 FROM server_csv_journal WHERE file = ?1"
                  " ORDER BY id",
      /*persistent=*/false);
  if (!select.ok() ||
      sqlite3_bind_text(select.get(), 1, file.c_str(), -1, SQLITE_STATIC) != SQLITE_OK)
    return false;
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) {
    JournalLine l;
    l.id = sqlite3_column_int64(select.get(), 0);
    l.offset = static_cast<std::uint64_t>(sqlite3_column_int64(select.get(), 1));
    const auto* data = static_cast<const char*>(sqlite3_column_blob(select.get(), 2));
    l.line.assign(data == nullptr ? "" : data,
                  static_cast<std::size_t>(sqlite3_column_bytes(select.get(), 2)));
    l.rows = static_cast<std::uint32_t>(sqlite3_column_int64(select.get(), 3));
    out.push_back(std::move(l));
  }
  return rc == SQLITE_DONE;
}

bool CsvJournal::drop(std::string& error) {
  if (sqlite3_exec(db_, "DROP TABLE server_csv_journal", nullptr, nullptr, nullptr) == SQLITE_OK)
    return true;
  error = std::string("dropping the CSV journal: ") + sqlite3_errmsg(db_);
  return false;
}

}  // namespace dsekp::edge::sinks
