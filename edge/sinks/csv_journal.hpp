// The server CSV logs' journal of earlier versions of the edge (table `server_csv_journal`):
// they kept every committed unit's lines in the database until the lines were appended, so a kill
// between the commit and the append left lines there. An edge upgraded after such a kill reads
// them once at start-up, puts them back into their files (csv_repair.hpp) and drops the table;
// the lines are now appended before the commit instead (csv_committed_end.hpp).
//
//   server_csv_journal(id INTEGER PRIMARY KEY AUTOINCREMENT, file TEXT, offset INTEGER, line BLOB,
//                      rows INTEGER)
//
// `line` holds `rows` lines (a journal of the first versions has no `rows`: one line each),
// `offset` is where they must start in their file.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dsekp::edge::sinks {

struct JournalLine {
  std::int64_t id = 0;
  std::uint64_t offset = 0;
  std::string line;        // one or more CSV lines
  std::uint32_t rows = 1;  // how many
};

class CsvJournal {
 public:
  /// The journal in `db` (which must outlive it), or null: with `error` empty if the database
  /// has none, else saying what failed.
  static std::unique_ptr<CsvJournal> open_existing(sqlite3* db, std::string& error);

  /// The journaled lines of `file`, oldest first. False on a database error.
  [[nodiscard]] bool lines(const std::string& file, std::vector<JournalLine>& out);
  /// Drops the table, once its lines are in their files. False with `error` on failure.
  [[nodiscard]] bool drop(std::string& error);

 private:
  explicit CsvJournal(sqlite3* db, bool has_rows) : db_(db), has_rows_(has_rows) {}

  sqlite3* db_;
  bool has_rows_;
};

}  // namespace dsekp::edge::sinks
