// Where each server CSV log's committed lines end, in table `server_csv_end` of the session
// store's database: the sink appends a unit's lines to its files before the unit commits and
// records each file's new end in the unit's transaction, so the record moves exactly when the
// frames behind the lines commit. A line past a file's recorded end belongs to a unit that did
// not commit (a kill between the append and the commit, or a commit that failed) and is cut at
// start-up; docs/ARCHITECTURE.md, "The edge's durability", step 3.
//
//   server_csv_end(file TEXT PRIMARY KEY, device INTEGER, inode INTEGER, end INTEGER)
//
// `file` is the sink's key ("psk", "dsekp"); (device, inode) name the file the end is in, so a
// file replaced since (rotated, removed) is never cut to another file's end.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "edge/sqlite/sqlite_statement.hpp"

namespace dsekp::edge::sinks {

struct CsvFileEnd {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t end = 0;  // bytes: the header and every committed line
  [[nodiscard]] bool same_file(const CsvFileEnd& other) const noexcept {
    return device == other.device && inode == other.inode;
  }
};

class CsvCommittedEnds {
 public:
  /// Creates the table if needed and prepares the statements on `db` (which must outlive this
  /// object). Null with `error` on failure.
  static std::unique_ptr<CsvCommittedEnds> open(sqlite3* db, std::string& error);

  /// The recorded end of `file` into `out`; false if none is recorded or on a database error
  /// (`error` then says which).
  [[nodiscard]] bool find(const char* file, CsvFileEnd& out, std::string& error);
  /// Records `end` for `file`: in the open transaction, or on its own outside one. False with
  /// `error` on a database error.
  [[nodiscard]] bool record(const char* file, const CsvFileEnd& end, std::string& error);
  /// Whether a transaction is open on the connection.
  [[nodiscard]] bool in_transaction() const noexcept { return sqlite3_get_autocommit(db_) == 0; }

 private:
  explicit CsvCommittedEnds(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  sqlite::SqliteStatement select_;
  sqlite::SqliteStatement upsert_;
};

}  // namespace dsekp::edge::sinks
