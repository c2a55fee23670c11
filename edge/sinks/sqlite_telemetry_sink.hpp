// Accepted frames as rows of table `telemetry` in the session store's own database, inserted on
// the store's connection inside the transaction that also saves the device state: the row and
// the moved replay window commit together or not at all, which makes this table the edge's
// exactly-once record of every accepted frame (sink_writer.hpp). The rows of a unit are staged in
// write() and inserted in before_commit(), just before the commit.
//
// telemetry(id INTEGER PRIMARY KEY, mode TEXT, encoding TEXT, dev_id TEXT, sessctr INTEGER,
//           seq INTEGER, sendts_ms INTEGER, recvts_ms INTEGER, latency_ms INTEGER,
//           payload_size INTEGER, plaintext BLOB, recvts_us INTEGER)
//
// With a shared Redis store the edge re-inserts, at start-up, rows it may already hold
// (edge/daemon/pending_rows.hpp), so it needs to ask "is this row here?": contains(). A row is
// identified by (mode, dev_id, sessctr, seq, recvts_us): the frame and the instant this edge
// took it in, so a frame seen again after a key rotation restarted its session counter is still
// a different row. enable_lookup() adds a non-unique index on recvts_us for it: the column grows
// with time, so the index is appended to at its end (a small cost per insert, measured in
// docs/SCALING.md) and a lookup is one index probe. Not a unique constraint: the PSK baseline
// has no replay state and may legitimately record a frame twice, and a constraint that fails an
// insert would fail the whole unit.
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "edge/service/sink_writer.hpp"

namespace dsekp::edge::sinks {

class SqliteTelemetrySink final : public SinkWriter {
 public:
  /// Creates the table if needed and prepares the insert on `db` (the store's connection, which
  /// must outlive the sink). Returns null with `error` set on failure.
  static std::unique_ptr<SqliteTelemetrySink> open(sqlite3* db, std::string& error);
  ~SqliteTelemetrySink() override;
  SqliteTelemetrySink(const SqliteTelemetrySink&) = delete;
  SqliteTelemetrySink& operator=(const SqliteTelemetrySink&) = delete;

  [[nodiscard]] bool write(const AcceptedFrame& row) override;
  [[nodiscard]] bool before_commit() noexcept override;
  [[nodiscard]] std::string refusal() const override { return refusal_; }
  void committed() noexcept override { drop_staged(0); }
  void rolled_back() noexcept override { drop_staged(0); }
  void savepoint() noexcept override { savepoint_ = staged_count_; }
  void rolled_back_to_savepoint() noexcept override { drop_staged(savepoint_); }

  /// Creates the lookup index (if missing; building it over a large existing table takes a
  /// while, once) and prepares contains(). false with `error` on failure.
  [[nodiscard]] bool enable_lookup(std::string& error);
  /// Whether a row with `row`'s identity (above) is in the table: 1 yes, 0 no, -1 database
  /// error or enable_lookup() not called.
  [[nodiscard]] int contains(const AcceptedFrame& row);

 private:
  SqliteTelemetrySink(sqlite3* db, sqlite3_stmt* insert) noexcept : db_(db), insert_(insert) {}
  [[nodiscard]] bool insert(const AcceptedFrame& row);
  /// Forgets the staged rows from `from` on (their readings wiped); the buffers are kept.
  void drop_staged(std::size_t from) noexcept;

  sqlite3* db_;
  sqlite3_stmt* insert_;
  sqlite3_stmt* lookup_ = nullptr;
  std::vector<AcceptedFrame> staged_;  // the open unit's rows: the first staged_count_
  std::size_t staged_count_ = 0;
  std::size_t savepoint_ = 0;
  std::string refusal_;  // why the last before_commit() refused
};

}  // namespace dsekp::edge::sinks
