// Write-ahead of the sink rows in Redis and its recovery (see pending_rows.hpp).
#include "edge/daemon/pending_rows.hpp"

#include <vector>

#include "edge/service/write_unit.hpp"
#include "edge/sinks/accepted_frame_record.hpp"

namespace dsekp::edge::daemon {

bool PendingRowsSink::write(const AcceptedFrame& row) {
  if (row.mode == Mode::psk) return true;
  return store_.stage_pending_row(row.dev_id, sinks::encode_accepted_frame(row)).ok();
}

bool recover_pending_rows(RedisSessionStore& redis, const std::string& key, SessionStore& local,
                          sinks::SqliteTelemetrySink& telemetry, SinkWriter& sinks,
                          PendingRecovery& report, std::string& error) {
  report = PendingRecovery{};
  std::vector<std::string> records;
  if (!redis.read_pending(key, records).ok()) {
    error = "reading " + key + ": " + redis.last_error();
    return false;
  }
  if (records.empty()) return true;
  report.rows = records.size();
  std::vector<AcceptedFrame> rows(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (!sinks::decode_accepted_frame(records[i], rows[i], error)) {
      error = key + " element " + std::to_string(i) + ": " + error +
              " (left in place; inspect it with redis-cli LRANGE)";
      return false;
    }
  }
  if (const StoreResult r = local.begin(); !r.ok()) {
    error = "local transaction: " + describe(r);
    return false;
  }
  const auto abandon = [&](std::string why) {
    (void)local.rollback();
    sinks.rolled_back();
    error = std::move(why);
    return false;
  };
  for (const AcceptedFrame& row : rows) {
    const int present = telemetry.contains(row);
    if (present < 0) return abandon("looking up a pending row in the telemetry table");
    if (present == 1) continue;
    bool written = false;
    try {
      written = sinks.write(row);
    } catch (...) {
      written = false;
    }
    if (!written) return abandon("writing a pending row to the local sinks");
    ++report.inserted;
  }
  if (const StoreResult r = commit_with_sinks(local, &sinks); !r.ok()) {
    error = "local commit: " + describe(r);
    return false;
  }
  // Everything is local now; a kill before this DEL only makes the next start find the rows
  // present.
  if (!redis.clear_pending(key).ok()) {
    error = "deleting " + key + ": " + redis.last_error();
    return false;
  }
  return true;
}

}  // namespace dsekp::edge::daemon
