// CsvCommittedEnds (see csv_committed_end.hpp).
#include "edge/sinks/csv_committed_end.hpp"

namespace dsekp::edge::sinks {
namespace {

// Two rows, rewritten in place by every unit: one small page in the write-ahead log per commit.
constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS server_csv_end(file TEXT PRIMARY KEY NOT NULL,"
    " inode INTEGER NOT NULL, end INTEGER NOT NULL, tail INTEGER NOT NULL) WITHOUT ROWID";

}  // namespace

std::uint64_t csv_tail_checksum(ByteView bytes) noexcept {
  std::uint64_t h = 0xcbf29ce484222325u;
  for (const std::uint8_t b : bytes) {
    h ^= b;
    h *= 0x100000001b3u;
  }
  return h;
}

std::unique_ptr<CsvCommittedEnds> CsvCommittedEnds::open(sqlite3* db, std::string& error) {
  // A table of another shape (from a development build) holds no end this code can trust.
  if (sqlite::has_column(db, "server_csv_end", "file") &&
      (!sqlite::has_column(db, "server_csv_end", "tail") ||
       sqlite::has_column(db, "server_csv_end", "unit_rows")) &&
      sqlite3_exec(db, "DROP TABLE server_csv_end", nullptr, nullptr, nullptr) != SQLITE_OK) {
    error = std::string("CSV end table: ") + sqlite3_errmsg(db);
    return nullptr;
  }
  if (sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK) {
    error = std::string("CSV end table: ") + sqlite3_errmsg(db);
    return nullptr;
  }
  std::unique_ptr<CsvCommittedEnds> ends(new CsvCommittedEnds(db));
  ends->select_ =
      sqlite::SqliteStatement(db, "SELECT inode, end, tail FROM server_csv_end WHERE file = ?1");
  ends->upsert_ = sqlite::SqliteStatement(
      db,
      "INSERT INTO server_csv_end(file, inode, end, tail) VALUES(?1, ?2, ?3, ?4)"
      " ON CONFLICT(file) DO UPDATE SET inode = excluded.inode, end = excluded.end,"
      " tail = excluded.tail");
  if (!ends->select_.ok() || !ends->upsert_.ok()) {
    error = std::string("CSV end statements: ") + sqlite3_errmsg(db);
    return nullptr;
  }
  return ends;
}

bool CsvCommittedEnds::find(const char* file, CsvFileEnd& out, std::string& error) {
  const sqlite::StatementScope s(select_);
  sqlite3_bind_text(s.get(), 1, file, -1, SQLITE_STATIC);
  const int rc = sqlite3_step(s.get());
  if (rc == SQLITE_ROW) {
    out.inode = static_cast<std::uint64_t>(sqlite3_column_int64(s.get(), 0));
    out.end = static_cast<std::uint64_t>(sqlite3_column_int64(s.get(), 1));
    out.tail = static_cast<std::uint64_t>(sqlite3_column_int64(s.get(), 2));
    return true;
  }
  if (rc != SQLITE_DONE) error = std::string("reading the CSV end: ") + sqlite3_errmsg(db_);
  return false;
}

bool CsvCommittedEnds::record(const char* file, const CsvFileEnd& end, std::string& error) {
  const sqlite::StatementScope s(upsert_);
  sqlite3_bind_text(s.get(), 1, file, -1, SQLITE_STATIC);
  sqlite3_bind_int64(s.get(), 2, static_cast<sqlite3_int64>(end.inode));
  sqlite3_bind_int64(s.get(), 3, static_cast<sqlite3_int64>(end.end));
  sqlite3_bind_int64(s.get(), 4, static_cast<sqlite3_int64>(end.tail));
  if (sqlite3_step(s.get()) == SQLITE_DONE) return true;
  error = std::string("recording the CSV end: ") + sqlite3_errmsg(db_);
  return false;
}

bool CsvCommittedEnds::forget_all(std::string& error) {
  if (sqlite3_exec(db_, "DELETE FROM server_csv_end", nullptr, nullptr, nullptr) == SQLITE_OK)
    return true;
  error = std::string("forgetting the CSV ends: ") + sqlite3_errmsg(db_);
  return false;
}

}  // namespace dsekp::edge::sinks
