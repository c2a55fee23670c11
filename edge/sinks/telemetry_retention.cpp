// TelemetryRetention (see telemetry_retention.hpp).
#include "edge/sinks/telemetry_retention.hpp"

namespace dsekp::edge::sinks {
namespace {

// Of the oldest kChunkRows rows by id (never one of the newest ?2), those received before ?1.
// Ids grow with arrival, so a chunk that is not wholly old means that the old rows are gone,
// but for a few that arrived late (recovered rows, a clock set back), which go with the rows
// around them.
constexpr const char* kDeleteChunk =
    "DELETE FROM telemetry WHERE id IN (SELECT id FROM telemetry"
    " WHERE id <= (SELECT max(id) FROM telemetry) - ?2 ORDER BY id LIMIT ?3) AND recvts_ms < ?1";

}  // namespace

TelemetryRetention::TelemetryRetention(sqlite3* db, std::uint32_t days, std::int64_t keep_newest)
    : db_(db),
      retention_ms_(std::uint64_t{days} * 86'400'000u),
      keep_newest_(keep_newest),
      delete_(db, kDeleteChunk) {}

std::int64_t TelemetryRetention::prune_chunk(std::uint64_t now_ms, std::string& error) {
  if (!delete_.ok()) {
    error = std::string("telemetry retention: ") + sqlite3_errmsg(db_);
    return -1;
  }
  const std::uint64_t cutoff = now_ms > retention_ms_ ? now_ms - retention_ms_ : 0;
  const sqlite::StatementScope scope(delete_);
  sqlite3_bind_int64(scope.get(), 1, static_cast<sqlite3_int64>(cutoff));
  sqlite3_bind_int64(scope.get(), 2, keep_newest_);
  sqlite3_bind_int64(scope.get(), 3, kChunkRows);
  if (sqlite3_step(scope.get()) != SQLITE_DONE) {
    error = std::string("telemetry retention: ") + sqlite3_errmsg(db_);
    return -1;
  }
  return sqlite3_changes(db_);
}

std::int64_t TelemetryRetention::maybe_prune(std::uint64_t now_ms, std::string& error) {
  if (now_ms < next_pass_ms_) return 0;
  const std::int64_t deleted = prune_chunk(now_ms, error);
  // A full chunk: there may be more, taken after the next batch; otherwise wait.
  next_pass_ms_ = deleted == kChunkRows ? now_ms : now_ms + kIdleIntervalMs;
  return deleted;
}

std::int64_t TelemetryRetention::prune_all(std::uint64_t now_ms, std::string& error) {
  std::int64_t total = 0;
  for (;;) {
    const std::int64_t deleted = prune_chunk(now_ms, error);
    if (deleted < 0) return -1;
    total += deleted;
    if (deleted < kChunkRows) break;
  }
  next_pass_ms_ = now_ms + kIdleIntervalMs;
  return total;
}

}  // namespace dsekp::edge::sinks
