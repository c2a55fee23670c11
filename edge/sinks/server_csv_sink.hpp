// The paper's server logs as a sink: server_logs_psk.csv and server_logs_dsekp.csv in a logs
// directory (docs/LOGS.md), appended to after each commit.
//
// Exactly once, with a journal (the daemon's mode; ARCHITECTURE.md, durability step 3): given
// the session store's connection, write() stages each row's CSV line, before_commit() journals
// the unit's lines of each file as one record with the offset where they must start in it,
// inside the unit's transaction (csv_journal.hpp); committed() appends and flushes the lines; a
// later unit forgets the appended records in its own transaction. At
// construction every file is repaired against the journal (csv_repair.hpp): a kill between the
// commit and the append, or in the middle of an append, leaves the file short or torn, and the
// repair truncates to the first missing line and re-appends from there. A failed append (disk
// full) keeps the lines journaled and the next unit repairs again before adding its own. The
// file is flushed to the OS (fflush), which survives a killed process; power loss is out of
// scope, as for the store's synchronous=NORMAL.
//
// Batches (sink_writer.hpp): the lines of all kept messages of a unit are appended in order and
// flushed once, after its commit; an undone message's lines are dropped (nothing of them was
// journaled yet). A reopen or a repair happens only at a unit's first row, so the
// offsets journaled within one unit always refer to the same files.
//
// Without a connection (tests, tools) rows are appended after the commit with no journal, so a
// crash between the two loses them from the file.
//
// A file is created with its header when missing (or holding less than its header); an existing
// file is appended to. `throughput` counts per file from this process's start, so after a
// restart within the same second the running count starts again (analyze recomputes it anyway).
//
// Log rotation: reopen() (any thread) makes the next write() close and reopen both files, e.g.
// after logrotate renamed them on SIGHUP. Rotate only while the edge runs (then SIGHUP) or after a
// clean stop: a SIGKILLed edge repairs against the file it finds.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "edge/service/sink_writer.hpp"
#include "edge/sinks/csv_journal.hpp"

namespace dsekp::edge::sinks {

class ServerCsvSink final : public SinkWriter {
 public:
  /// Opens (creating if needed) both files in `logs_dir`, which must exist; with `db` (the
  /// session store's connection, outliving the sink) journals and repairs as above. Throws
  /// std::runtime_error naming the file or table that cannot be opened or repaired.
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

  /// Asks for both files to be reopened before the next row (log rotation). Thread-safe.
  void reopen() noexcept { reopen_requested_ = true; }

  /// Rows that could not be appended when they committed (disk full, I/O error) since the start.
  /// With a journal they are re-appended by the next repair that succeeds.
  [[nodiscard]] std::uint64_t lost_rows() const noexcept { return lost_rows_; }
  /// Journaled lines that a repair (at start-up or after a failure) put back into the files.
  [[nodiscard]] std::uint64_t repaired_rows() const noexcept { return repaired_rows_; }

 private:
  struct File {
    std::FILE* fp = nullptr;
    std::string path;
    const char* name = "";  // the journal's file key: "psk" or "dsekp"
    Mode mode = Mode::dsekp;
    std::uint64_t end = 0;    // where the next line starts: file size + staged lines
    std::uint64_t bin = 0;    // bin_1s of the last row
    std::uint64_t count = 0;  // rows in that bin
  };
  // The unit's lines of one file, in one buffer: they are contiguous in the file, so they are
  // journaled as one record and appended with one write.
  struct Staged {
    std::string lines;
    std::uint32_t rows = 0;
    std::uint64_t offset = 0;  // where the first line starts in the file
  };
  // Where a savepoint found a file's staged lines.
  struct StagedMark {
    std::size_t size = 0;
    std::uint32_t rows = 0;
  };
  [[nodiscard]] Staged& staged_of(const File& file) noexcept {
    return file.mode == Mode::psk ? staged_psk_ : staged_dsekp_;
  }
  // Rows staged in the open unit, in both files.
  [[nodiscard]] std::uint32_t staged_rows() const noexcept {
    return staged_psk_.rows + staged_dsekp_.rows;
  }
  // Drops every staged line, wiping the readings in them (the buffers are reused).
  void clear_staged() noexcept;
  void open_file(File& file);
  void close_files() noexcept;
  // Repairs `file` against its journaled lines with ids above `after`; raises `last_id` to the
  // newest of them.
  bool repair(File& file, std::int64_t after, std::int64_t& last_id, std::string& error);
  bool repair_all(std::string& error);

  std::string logs_dir_;
  std::unique_ptr<CsvJournal> journal_;  // null: no journal
  File psk_;
  File dsekp_;
  Staged staged_psk_;
  Staged staged_dsekp_;
  // The files' counters when the unit began, restored by rolled_back().
  File psk_before_;
  File dsekp_before_;
  // At the message's savepoint (batches): the staged lines and the files' counters.
  StagedMark psk_staged_at_savepoint_;
  StagedMark dsekp_staged_at_savepoint_;
  File psk_at_savepoint_;
  File dsekp_at_savepoint_;
  std::int64_t appended_through_ = 0;     // journal ids up to this are in their files
  std::int64_t journal_ids_through_ = 0;  // the newest record before_commit() journaled
  std::int64_t forgotten_through_ = 0;
  bool needs_repair_ = false;
  std::atomic<bool> reopen_requested_{false};
  std::uint64_t lost_rows_ = 0;
  std::uint64_t repaired_rows_ = 0;
};

}  // namespace dsekp::edge::sinks
