// The paper's server logs as a sink: server_logs_psk.csv and server_logs_dsekp.csv in a logs
// directory (docs/LOGS.md), holding exactly the committed frames.
//
// Exactly once (docs/ARCHITECTURE.md, "The edge's durability", step 3): write() stages each
// row's line in memory; before_commit() appends the unit's lines of each file with one write
// and, given the session store's connection, records each file's new end in the unit's
// transaction (csv_committed_end.hpp); rolled_back() cuts the lines off again. So the recorded
// end moves exactly when the frames behind the lines commit, and at construction a file that
// goes on past its recorded end is cut back to it: those lines belong to a
// unit killed between its append and its commit, whose frames the broker delivers again, if the
// unit's mark (csv_unit_mark.hpp, written before the append) says it was appended from that end;
// lines after the end that no mark accounts for (a database restored from an older copy) stay. The
// file so cut is the one the record names (by inode and the checksum of its last bytes): the file
// at the path, or the one a rotation renamed in the same directory. A cut that fails is tried
// again before the next unit's first line, which fails until it succeeds. A failed append fails
// its unit (sink_failure: handed back to the broker), never only the line.
//
// The lines reach the OS with the write (a killed process loses none); they are not fsync'd,
// like the store's commits (synchronous=NORMAL): after a power loss a file may be shorter than
// its recorded end, which the start-up logs as an error; the lines lost are not restored.
// A reader of a file may see a unit's lines that are then cut (a failed commit, or the start-up
// after a kill); they come again when the broker redelivers their frames.
//
// Batches (sink_writer.hpp): the lines of all kept messages of a unit are appended in order;
// an undone message's lines are dropped from memory before anything is written.
//
// Without a connection (tests, tools) nothing is recorded, so a kill between the append and the
// commit leaves the unit's lines in the file.
//
// A file is created with its header when missing (or holding less than its header); an existing
// file is appended to. `throughput` counts per file from this process's start, so after a
// restart within the same second the running count starts again (analyze recomputes it anyway).
//
// Log rotation: reopen() (any thread) makes the sink open both paths again once the next unit
// has ended (its lines still go into the renamed file), e.g. after logrotate renamed the files
// on SIGHUP. A new file is written only after its end is recorded, so a file at the path that
// does not match the record holds no uncommitted line and is never cut. A reopen that fails
// (the new file cannot be created) is logged and tried again after every unit; the lines go on
// into the renamed file meanwhile.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "edge/service/sink_writer.hpp"
#include "edge/sinks/csv_committed_end.hpp"
#include "edge/sinks/csv_unit_mark.hpp"

namespace dsekp::edge::sinks {

class CsvJournal;

class ServerCsvSink final : public SinkWriter {
 public:
  /// Opens (creating if needed) both files in `logs_dir`, which must exist; with `db` (the
  /// session store's connection, outliving the sink, no transaction open) records and cuts as
  /// above. Throws std::runtime_error naming the file or table that cannot be opened or cut.
  explicit ServerCsvSink(const std::string& logs_dir, sqlite3* db = nullptr);
  ~ServerCsvSink() override;
  ServerCsvSink(const ServerCsvSink&) = delete;
  ServerCsvSink& operator=(const ServerCsvSink&) = delete;

  [[nodiscard]] bool write(const AcceptedFrame& row) override;
  [[nodiscard]] bool before_commit() noexcept override;
  [[nodiscard]] std::string refusal() const override { return refusal_; }
  void committed() noexcept override;
  void rolled_back() noexcept override;
  void savepoint() noexcept override;
  void rolled_back_to_savepoint() noexcept override;

  /// Asks for both files to be reopened after the current unit (log rotation). Thread-safe.
  void reopen() noexcept { reopen_requested_ = true; }

  /// Lines of units that did not commit, cut from the files at start-up.
  [[nodiscard]] std::uint64_t cut_rows() const noexcept { return cut_rows_; }
  /// Lines an earlier version's journal held that start-up put back into the files.
  [[nodiscard]] std::uint64_t repaired_rows() const noexcept { return repaired_rows_; }

 private:
  // A file's `throughput` count, as a unit or a savepoint found it.
  struct Position {
    std::uint64_t bin = 0;    // bin_1s of the last row
    std::uint64_t count = 0;  // rows in that bin
  };
  struct File {
    int fd = -1;
    std::string path;
    const char* name = "";  // the record's key: "psk" or "dsekp"
    Mode mode = Mode::dsekp;
    CsvFileEnd committed;   // where the committed lines end, as recorded
    CsvFileEnd appending;   // where they end once the unit under way commits
    Position at;            // with the open unit's staged rows
    Position unit_start;    // `at` when the unit began (restored by rolled_back())
    Position savepoint_at;  // `at` at the message's savepoint
    std::string staged;     // the open unit's lines
    std::uint32_t staged_rows = 0;
    std::size_t staged_at_savepoint = 0;  // size of `staged` at the savepoint
    std::uint32_t rows_at_savepoint = 0;
    bool appended = false;  // `staged` written from `appended_from`, the unit not ended
    std::uint64_t appended_from = 0;
    bool tail_to_cut = false;  // a failed cut left uncommitted bytes after `cut_to`
    std::uint64_t cut_to = 0;
    bool reopen_pending = false;
  };

  [[nodiscard]] std::uint32_t staged_rows() const noexcept {
    return psk_.staged_rows + dsekp_.staged_rows;
  }
  // Drops every staged line, wiping the readings in them (the buffers are reused).
  void clear_staged() noexcept;
  // At construction: opens `file`, puts back an earlier version's journaled lines, cuts the
  // lines of a unit that did not commit, and records where the file ends.
  void start(File& file, CsvJournal* journal);
  // At start-up: the same in the file a rotation renamed in the logs directory, if any.
  void cut_in_renamed_file(const File& file, const CsvFileEnd& recorded);
  // At start-up: cuts what follows `recorded` in the file it is in (the one at the path or the
  // one a rotation renamed), open as `fd` at `path` with `size` bytes, if that is one unit.
  void cut_uncommitted(const File& file, int fd, const std::string& path, std::uint64_t size,
                       const CsvFileEnd& recorded);
  // Where the file ends now, into `appended_from`; false with `error`.
  bool find_end(File& file, std::string& error) noexcept;
  // Appends the staged lines; false with `error` (the caller cuts them off again).
  bool append(File& file, std::string& error) noexcept;
  // Cuts `file` back to `to`; false with `error` (then tried again before the next line).
  bool cut(File& file, std::uint64_t to, std::string& error) noexcept;
  // No unit under way any more (csv_unit_mark.hpp).
  void clear_mark() noexcept;
  // Between units (no transaction open): the pending reopens.
  void between_units() noexcept;
  bool reopen_file(File& file, std::string& error) noexcept;

  std::unique_ptr<CsvCommittedEnds> ends_;  // null: nothing recorded
  std::unique_ptr<CsvUnitMarks> marks_;     // with ends_
  std::string logs_dir_;
  File psk_;
  File dsekp_;
  std::atomic<bool> reopen_requested_{false};
  std::chrono::steady_clock::time_point next_reopen_warning_{};
  std::uint64_t cut_rows_ = 0;
  std::uint64_t repaired_rows_ = 0;
  std::string refusal_;  // why the last before_commit() refused
};

}  // namespace dsekp::edge::sinks
