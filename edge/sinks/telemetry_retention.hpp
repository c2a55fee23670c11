// Retention of table `telemetry` (sqlite_telemetry_sink.hpp): rows received more than `days`
// days ago are deleted, oldest first, in bounded chunks on the loop thread between batches, so
// the table stops growing without a second writer that could hold the database's lock while a
// batch commits (the message loop would take that for a storage failure).
//
// The newest `keep_newest` rows are never deleted, whatever their age: with a shared Redis store
// a restarted edge checks the rows of its last commit against this table
// (edge/daemon/pending_rows.hpp), and a row missing there would be written, and its CSV line
// appended, a second time. One unit holds at most batch_max messages, so keep_newest =
// batch_max keeps every row of the last one.
//
// Replays do not depend on this table (the device states' replay windows refuse them), and the
// CSV logs have their own rotation (the package's logrotate snippet).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "edge/sqlite/sqlite_statement.hpp"

namespace dsekp::edge::sinks {

class TelemetryRetention {
 public:
  /// Rows deleted per statement: a few ms of the loop thread.
  static constexpr std::int64_t kChunkRows = 1000;
  /// How often a pass starts while there is nothing left to delete.
  static constexpr std::uint64_t kIdleIntervalMs = 60'000;

  /// `db` holds the telemetry table (SqliteTelemetrySink::open made it) and outlives this.
  TelemetryRetention(sqlite3* db, std::uint32_t days, std::int64_t keep_newest);

  /// Outside any transaction, on the thread that owns `db`: deletes one chunk if a pass is due
  /// (the last chunk was full, or kIdleIntervalMs have passed). The rows deleted, or -1 with
  /// `error` (the next attempt waits kIdleIntervalMs).
  std::int64_t maybe_prune(std::uint64_t now_ms, std::string& error);

  /// Deletes every row past the retention (chunk by chunk): at start-up, before messages flow.
  std::int64_t prune_all(std::uint64_t now_ms, std::string& error);

 private:
  std::int64_t prune_chunk(std::uint64_t now_ms, std::string& error);

  sqlite3* db_;
  std::uint64_t retention_ms_;
  std::int64_t keep_newest_;
  sqlite::SqliteStatement delete_;
  std::uint64_t next_pass_ms_ = 0;
};

}  // namespace dsekp::edge::sinks
