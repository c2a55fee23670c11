// Where the server CSV logs' unit under way is being appended, kept beside the logs in
// `<logs_dir>/.server_csv_unit` and written before the append (csv_committed_end.hpp has the
// other half: where the committed lines end, in the database). A file found at start-up going on
// past its recorded end is cut only if the mark says a unit was being appended exactly from that
// end: then those lines are that unit's, which never committed. Lines after the recorded end
// that no mark accounts for were committed by units the database has forgotten (it was restored
// from an older copy) and are kept.
//
// The mark is a fixed record of 48 bytes, rewritten in place before every unit's append: for the
// PSK file then the DSEKP file, the inode, the offset the unit's lines start at and the offset
// they end at (all zero for a file the unit writes nothing to), little-endian; and cleared (all
// zero) once the unit has committed or its lines are cut, so that a committed unit never looks
// like one under way to a state database restored from a copy taken just before it (a kill
// between the commit and the clear is harmless: the recorded end is then the mark's `to`). It is
// not synced: after a power loss it may be older than the files, and a unit's lines may then
// stay.
#pragma once

#include <cstdint>
#include <string>

#include "edge/service/accepted_frame.hpp"

namespace dsekp::edge::sinks {

struct CsvUnitMark {
  std::uint64_t inode = 0;
  std::uint64_t from = 0;
  std::uint64_t to = 0;
};

class CsvUnitMarks {
 public:
  /// Opens (creating if needed, mode 0600) the mark file in `logs_dir` and reads the marks it
  /// holds (none for a new or short file). Throws std::runtime_error naming the file.
  explicit CsvUnitMarks(const std::string& logs_dir);
  ~CsvUnitMarks();
  CsvUnitMarks(const CsvUnitMarks&) = delete;
  CsvUnitMarks& operator=(const CsvUnitMarks&) = delete;

  /// The mark of `mode`'s file as found when opened.
  [[nodiscard]] const CsvUnitMark& found(Mode mode) const noexcept {
    return mode == Mode::psk ? found_psk_ : found_dsekp_;
  }
  /// Records the unit about to be appended; false with `error` (the unit must then not append).
  [[nodiscard]] bool mark(const CsvUnitMark& psk, const CsvUnitMark& dsekp,
                          std::string& error) noexcept;
  /// No unit under way (it committed, or its lines were cut); false with `error`.
  [[nodiscard]] bool clear(std::string& error) noexcept { return mark({}, {}, error); }

 private:
  std::string path_;
  int fd_ = -1;
  CsvUnitMark found_psk_;
  CsvUnitMark found_dsekp_;
};

}  // namespace dsekp::edge::sinks
