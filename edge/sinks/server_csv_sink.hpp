// The paper's server logs as a sink: server_logs_psk.csv and server_logs_dsekp.csv in a logs
// directory (docs/LOGS.md), holding exactly the committed frames.
//
// Exactly once (docs/ARCHITECTURE.md, "The edge's durability", step 3): write() stages each
// row's line in memory; before_commit() appends the unit's lines of each file with one write
// and, given the session store's connection, records each file's new end in the unit's
// transaction (csv_committed_end.hpp); rolled_back() cuts the lines off again. So the recorded
// end moves exactly when the frames behind the lines commit, and at construction every file is
// cut back to its recorded end: the lines after it are those of a unit that never committed (a
// kill between the append and the commit), whose frames the broker delivers again. A cut that
// fails is tried again before the next unit's first line, which fails until it succeeds. A failed
// append fails its unit (sink_failure: handed back to the broker), never only the line.
//
// The lines reach the OS with the write (a killed process loses none); they are not fsync'd,
// like the store's commits (synchronous=NORMAL): after a power loss a file may be shorter than
// its recorded end, which the start-up logs as an error; the lines lost are not restored.
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
// Log rotation: reopen() (any thread) makes the sink open both paths again between two units,
// e.g. after logrotate renamed the files on SIGHUP. A file is written only once its identity
// (device, inode) is recorded, so a file found at start-up under another identity than its
// record holds no uncommitted line and is never cut. A reopen that fails (the new file cannot be
// created) is logged and tried again after every unit; the lines go on into the renamed file
// meanwhile.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "edge/service/sink_writer.hpp"
#include "edge/sinks/csv_committed_end.hpp"

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
  // Where a file's staged lines end and its `throughput` count, as a unit or a savepoint found
  // them.
  struct Position {
    std::uint64_t end = 0;    // the file's size with the lines staged so far
    std::uint64_t bin = 0;    // bin_1s of the last row
    std::uint64_t count = 0;  // rows in that bin
  };
  struct File {
    int fd = -1;
    std::string path;
    const char* name = "";  // the record's key: "psk" or "dsekp"
    Mode mode = Mode::dsekp;
    CsvFileEnd committed;   // the file and the end of its committed lines
    Position at;            // committed lines + the open unit's staged ones
    Position unit_start;    // `at` when the unit began (restored by rolled_back())
    Position savepoint_at;  // `at` at the message's savepoint
    std::string staged;     // the open unit's lines, contiguous in the file
    std::uint32_t staged_rows = 0;
    std::size_t staged_at_savepoint = 0;  // size of `staged` at the savepoint
    std::uint32_t rows_at_savepoint = 0;
    bool appended = false;     // `staged` written, the unit not yet ended
    bool tail_to_cut = false;  // a failed cut left uncommitted bytes after the committed end
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
  // Appends the staged lines; false with `error` (the caller cuts them off again).
  bool append(File& file, std::string& error) noexcept;
  // Cuts `file` back to its committed end; false with `error`.
  bool cut(File& file, std::string& error) noexcept;
  // Between units (no transaction open): the pending reopens.
  void between_units() noexcept;
  bool reopen_file(File& file, std::string& error) noexcept;

  std::unique_ptr<CsvCommittedEnds> ends_;  // null: nothing recorded
  File psk_;
  File dsekp_;
  std::atomic<bool> reopen_requested_{false};
  std::chrono::steady_clock::time_point next_reopen_warning_{};
  std::uint64_t cut_rows_ = 0;
  std::uint64_t repaired_rows_ = 0;
};

}  // namespace dsekp::edge::sinks
