// Start-up (and after-failure) repair of one server CSV file against its journal
// (csv_journal.hpp): the file must end with every journaled line at its recorded offset.
//
// For the journaled records (each one or more lines), oldest first: a record whose bytes are at
// its offset is kept; from the first one that is not (never appended, or cut off by a crash
// mid-write) the file is truncated to that line's offset and it and every later line are appended.
// Bytes after the last journaled line (a torn or failed append) are cut. A file shorter than the
// first missing line's offset lost data some other way (removed or rotated while the edge was
// stopped): the missing lines are then appended at its end and `appended_at_end` is set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edge/sinks/csv_journal.hpp"

namespace dsekp::edge::sinks {

struct CsvRepairReport {
  std::size_t lines_present = 0;     // journaled lines found in place (JournalLine::rows)
  std::size_t lines_appended = 0;    // journaled lines (re-)appended
  std::uint64_t truncated_from = 0;  // the file size before a truncation (0: none)
  std::uint64_t truncated_to = 0;
  bool appended_at_end = false;  // see above
  std::uint64_t size = 0;        // the file's size afterwards
};

/// Repairs the file open as `fd` (O_APPEND, flushed) against `lines`. False with `error` on an
/// I/O error (the file is then in an unknown state; a later repair starts over).
[[nodiscard]] bool repair_csv_file(int fd, const std::vector<JournalLine>& lines,
                                   CsvRepairReport& report, std::string& error);

}  // namespace dsekp::edge::sinks
