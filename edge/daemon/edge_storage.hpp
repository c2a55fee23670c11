// What the edge stores, and through what, assembled from its options in one place:
//
//   local()        the edge's SQLite state database: the device states with the SQLite store,
//                  and always the sink rows (telemetry, the CSV logs' committed ends);
//   shared()       with --store redis://..., the Redis store several edges share (null without);
//   sessions()     what the service loads and commits through: the local store, or the shared
//                  one joined to the local one (SplitSessionStore);
//   generations()  the registry-credential records kept beside the states;
//   sink()         where the service writes accepted frames, in commit order: the write-ahead of
//                  the rows to Redis (shared store only), telemetry, a test hold, the CSV logs,
//                  and what add_sink() adds (the republisher, which needs the MQTT client).
//
// With the shared store the constructor also recovers the rows whose state committed in Redis
// but not locally (edge/daemon/pending_rows.hpp), before anything is subscribed, and installs
// the same recovery after a failed commit. docs/ARCHITECTURE.md tells why the order of the
// commits and the write-ahead keep every frame exactly once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "edge/daemon/edge_daemon.hpp"
#include "edge/daemon/pending_rows.hpp"
#include "edge/daemon/test_hold.hpp"
#include "edge/service/credential_generations.hpp"
#include "edge/sinks/composite_sink.hpp"
#include "edge/sinks/server_csv_sink.hpp"
#include "edge/sinks/sqlite_telemetry_sink.hpp"
#include "edge/sinks/telemetry_retention.hpp"
#include "edge/store/redis/redis_probe.hpp"
#include "edge/store/redis/redis_session_store.hpp"
#include "edge/store/redis/split_session_store.hpp"
#include "edge/store/sqlite_session_store.hpp"

namespace dsekp::edge::daemon {

class EdgeStorage {
 public:
  /// Opens everything `o` names (o.topic_prefix already resolved). Throws std::runtime_error
  /// naming the file or option at fault.
  explicit EdgeStorage(const EdgeDaemonOptions& o);
  EdgeStorage(const EdgeStorage&) = delete;
  EdgeStorage& operator=(const EdgeStorage&) = delete;

  [[nodiscard]] const std::string& state_path() const noexcept { return state_path_; }
  [[nodiscard]] SqliteSessionStore& local() noexcept { return *local_; }
  [[nodiscard]] RedisSessionStore* shared() noexcept { return redis_.get(); }
  /// What the store's health probe asks (the Redis server, or the cluster's nodes).
  [[nodiscard]] const redis::RedisProbeTarget& shared_target() const noexcept {
    return redis_target_;
  }
  [[nodiscard]] SessionStore& sessions() noexcept {
    return split_ ? static_cast<SessionStore&>(*split_) : *local_;
  }
  [[nodiscard]] CredentialGenerations& generations() noexcept { return *generations_; }
  [[nodiscard]] SinkWriter& sink() noexcept { return sink_; }
  /// Appends `extra` (which must outlive this object) after the local sinks.
  void add_sink(SinkWriter& extra) { sink_.add(extra); }
  /// The CSV logs (null with --no-csv): SIGHUP reopens them, the exit reports lost rows.
  [[nodiscard]] sinks::ServerCsvSink* csv() noexcept { return csv_.get(); }

  /// Deletes telemetry rows past --retention-days, at most once a minute (nothing without the
  /// option); a failure is logged and tried again later.
  void prune_telemetry(std::uint64_t now_ms);

  /// Established sessions in the local store, for the dsekp_active_sessions gauge; 0 with the
  /// shared store, whose gauge counts only what this edge's own messages changed (counting the
  /// shared store would mean a SCAN of every device; docs/SCALING.md).
  [[nodiscard]] std::uint64_t count_local_sessions();

 private:
  void open_shared(const EdgeDaemonOptions& o);
  void open_sinks(const EdgeDaemonOptions& o);
  void recover_pending_rows_at_start(const EdgeDaemonOptions& o);
  [[nodiscard]] bool recover_pending_rows(const char* when);

  // Declared in the order they depend on each other: destroyed in reverse.
  std::string state_path_;
  std::unique_ptr<SqliteSessionStore> local_;
  std::unique_ptr<RedisSessionStore> redis_;
  std::unique_ptr<SplitSessionStore> split_;
  std::unique_ptr<CredentialGenerations> generations_;
  redis::RedisProbeTarget redis_target_;
  std::string pending_key_;
  std::unique_ptr<sinks::SqliteTelemetrySink> telemetry_;
  std::unique_ptr<PendingRowsSink> pending_sink_;
  std::unique_ptr<TestHoldSink> hold_committed_;
  std::unique_ptr<TestHoldSink> hold_appended_;
  std::unique_ptr<sinks::ServerCsvSink> csv_;
  sinks::CompositeSink sink_;         // everything, in commit order
  sinks::CompositeSink local_sinks_;  // telemetry and CSV: what a recovery writes through
  std::unique_ptr<sinks::TelemetryRetention> retention_;
  std::uint32_t test_hold_ms_ = 0;
};

}  // namespace dsekp::edge::daemon
