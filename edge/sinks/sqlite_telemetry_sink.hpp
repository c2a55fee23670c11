// Accepted frames as rows of table `telemetry` in the session store's own database, inserted on
// the store's connection inside the transaction that also saves the device state: the row and
// the moved replay window commit together or not at all, which makes this table the edge's
// exactly-once record of every accepted frame (sink_writer.hpp).
//
// telemetry(id INTEGER PRIMARY KEY, mode TEXT, encoding TEXT, dev_id TEXT, sessctr INTEGER,
//           seq INTEGER, sendts_ms INTEGER, recvts_ms INTEGER, latency_ms INTEGER,
//           payload_size INTEGER, plaintext BLOB, recvts_us INTEGER)
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>

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

 private:
  SqliteTelemetrySink(sqlite3* db, sqlite3_stmt* insert) noexcept : db_(db), insert_(insert) {}

  sqlite3* db_;
  sqlite3_stmt* insert_;
};

}  // namespace dsekp::edge::sinks
