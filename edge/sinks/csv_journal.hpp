// The server CSV logs' journal: the lines of committed units that may not be in their file yet
// (one record per file per unit: its lines, contiguous in the file, concatenated),
// in table `server_csv_journal` of the session store's database. Written on the store's
// connection inside the unit's transaction, so a line is journaled exactly when its frame is
// committed (the state with the moved replay window, the telemetry row, the journal line: one
// commit). After the line is appended and flushed to its file, a later transaction forgets it.
//
//   server_csv_journal(id INTEGER PRIMARY KEY AUTOINCREMENT, file TEXT, offset INTEGER, line BLOB,
//                      rows INTEGER)
//
// `line` holds `rows` lines. `offset` is where they must start in their file: the lines of one file
// are contiguous, so at start-up the file is checked against its journal and repaired
// (csv_repair.hpp).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "edge/sqlite/sqlite_statement.hpp"

namespace dsekp::edge::sinks {

struct JournalLine {
  std::int64_t id = 0;
  std::uint64_t offset = 0;
  std::string line;        // one or more CSV lines
  std::uint32_t rows = 1;  // how many
};

class CsvJournal {
 public:
  /// Creates the table if needed and prepares the statements on `db` (which must outlive the
  /// journal). Null with `error` on failure.
  static std::unique_ptr<CsvJournal> open(sqlite3* db, std::string& error);

  /// Journals `line` (`rows` lines) for `file` at `offset` in the open transaction; its id, or
  /// 0 on failure.
  [[nodiscard]] std::int64_t add(const std::string& file, std::uint64_t offset,
                                 const std::string& line, std::uint32_t rows = 1);
  /// Forgets every line with id <= `id` (in the open transaction, or on its own outside one).
  [[nodiscard]] bool forget_through(std::int64_t id);
  /// Whether a transaction is open on the connection.
  [[nodiscard]] bool in_transaction() const noexcept { return sqlite3_get_autocommit(db_) == 0; }
  /// The journaled lines of `file`, oldest first. False on a database error.
  [[nodiscard]] bool lines(const std::string& file, std::vector<JournalLine>& out);

 private:
  explicit CsvJournal(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  sqlite::SqliteStatement insert_;
  sqlite::SqliteStatement forget_;
  sqlite::SqliteStatement select_;
};

}  // namespace dsekp::edge::sinks
