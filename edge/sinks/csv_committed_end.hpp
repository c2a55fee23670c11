// Where each server CSV log's committed lines end, in table `server_csv_end` of the session
// store's database: the sink appends a unit's lines to its files before the unit commits and
// records each file's new end in the unit's transaction, so the record moves exactly when the
// frames behind the lines commit. The lines of a unit that did not commit (a kill between the
// append and the commit) are past the recorded end, where the unit's mark (csv_unit_mark.hpp)
// says they began, and are cut at start-up; docs/ARCHITECTURE.md, "The edge's durability", step 3.
//
//   server_csv_end(file TEXT PRIMARY KEY, inode INTEGER, end INTEGER, tail INTEGER)
//
// `file` is the sink's key ("psk", "dsekp"). `inode` and `tail` (a checksum of the bytes just
// before `end`) say which file the end is in: a file rotated or replaced since, or a new file
// that reuses the inode number, does not match, so it is never cut to another file's end.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "dsekp/bytes.hpp"
#include "edge/sqlite/sqlite_statement.hpp"

namespace dsekp::edge::sinks {

struct CsvFileEnd {
  std::uint64_t inode = 0;
  std::uint64_t end = 0;   // bytes: the header and every committed line
  std::uint64_t tail = 0;  // csv_tail_checksum of the bytes before `end`
};

/// How many bytes before a file's end its tail checksum covers (fewer in a shorter file).
inline constexpr std::size_t kCsvTailBytes = 64;

/// A checksum of `bytes` (FNV-1a, 64 bits): not a security measure, only a check that a file
/// still ends as recorded.
[[nodiscard]] std::uint64_t csv_tail_checksum(ByteView bytes) noexcept;

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
  /// Forgets every recorded end (they describe files an older version has written to since).
  [[nodiscard]] bool forget_all(std::string& error);
  /// Whether a transaction is open on the connection.
  [[nodiscard]] bool in_transaction() const noexcept { return sqlite3_get_autocommit(db_) == 0; }

 private:
  explicit CsvCommittedEnds(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  sqlite::SqliteStatement select_;
  sqlite::SqliteStatement upsert_;
};

}  // namespace dsekp::edge::sinks
