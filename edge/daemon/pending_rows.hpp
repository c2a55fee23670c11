// The write-ahead of the sink rows with a shared Redis store (docs/SCALING.md "Running several
// edges"), which closes the gap between the state commit in Redis and the rows' commit in the
// edge's local SQLite (edge/store/redis/split_session_store.hpp):
//
//   PendingRowsSink         the first sink of the daemon's composite: hands each accepted DSEKP
//                           row, encoded (edge/sinks/accepted_frame_record.hpp), to the Redis
//                           store, whose commit script writes the unit's rows to this edge's
//                           pending list in the same atomic run as the states (no extra round
//                           trip). Savepoints and rollbacks are the store's (the rows are staged
//                           there). PSK rows are left out: the baseline has no shared state, so
//                           an unacknowledged PSK frame is simply accepted again on redelivery.
//   recover_pending_rows()  reads the list, writes every row the local telemetry table lacks
//                           through the given sinks (the telemetry row and the CSV line,
//                           exactly as a live frame's) in ONE local transaction, then deletes
//                           the list. Run at start-up before subscribing, and after a failed
//                           commit (SplitSessionStore's recover hook).
//
// Why the list holds what may be missing: it always holds the rows of this edge's last state
// commit, and a new state commit starts only after the previous unit's local commit succeeded
// or the recovery ran. Idempotent: a row already present (SqliteTelemetrySink::contains) is
// skipped, so a kill during the recovery itself, or a recovery after a unit that did commit
// locally, adds nothing twice.
#pragma once

#include <cstddef>
#include <string>

#include "edge/service/sink_writer.hpp"
#include "edge/sinks/sqlite_telemetry_sink.hpp"
#include "edge/store/redis/redis_session_store.hpp"

namespace dsekp::edge::daemon {

class PendingRowsSink final : public SinkWriter {
 public:
  /// `store` must outlive the sink and have its pending key set.
  explicit PendingRowsSink(RedisSessionStore& store) noexcept : store_(store) {}
  [[nodiscard]] bool write(const AcceptedFrame& row) override;

 private:
  RedisSessionStore& store_;
};

struct PendingRecovery {
  std::size_t rows = 0;      // in the pending list
  std::size_t inserted = 0;  // absent locally, written through the sinks
};

/// See the file comment. `local` is the store whose connection the sinks write on (no
/// transaction open); `sinks` are the local ones (telemetry and CSV; no republish, no write-
/// ahead), `telemetry` one of them with enable_lookup() done. false with `error` if Redis or the
/// local database fails or a record does not decode; the list is then left in place.
[[nodiscard]] bool recover_pending_rows(RedisSessionStore& redis, const std::string& key,
                                        SessionStore& local, sinks::SqliteTelemetrySink& telemetry,
                                        SinkWriter& sinks, PendingRecovery& report,
                                        std::string& error);

}  // namespace dsekp::edge::daemon
