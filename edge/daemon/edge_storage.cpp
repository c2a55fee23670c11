// EdgeStorage (see edge_storage.hpp).
#include "edge/daemon/edge_storage.hpp"

#include <filesystem>
#include <stdexcept>

#include "edge/daemon/secret_option.hpp"
#include "edge/daemon/unix_clock.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/service/sqlite_credential_generations.hpp"
#include "edge/store/redis/redis_credential_generations.hpp"
#include "edge/store/redis/redis_store_url.hpp"

namespace dsekp::edge::daemon {
EdgeStorage::EdgeStorage(const EdgeDaemonOptions& o)
    : state_path_(o.state_db.empty() ? o.registry_db + ".state" : o.state_db),
      test_hold_ms_(o.test_hold_ms) {
  std::string error;
  const bool local_state = o.store.empty() || o.store == "sqlite";
  local_ = SqliteSessionStore::open(
      state_path_, {.cached_devices = local_state ? o.session_cache_devices : 0}, error);
  if (local_ == nullptr) throw std::runtime_error("state " + state_path_ + ": " + error);
  if (local_state) {
    generations_ = SqliteCredentialGenerations::open(*local_, error);
    if (generations_ == nullptr) throw std::runtime_error("state " + state_path_ + ": " + error);
  } else {
    open_shared(o);
  }
  open_sinks(o);
  if (redis_) recover_pending_rows_at_start(o);
  // After the recovery, which checks the newest rows against the table.
  if (o.retention_days > 0) {
    retention_ = std::make_unique<sinks::TelemetryRetention>(local_->connection(), o.retention_days,
                                                             o.batch_max);
    const std::int64_t deleted = retention_->prune_all(unix_ms_now(), error);
    if (deleted < 0) throw std::runtime_error("state " + state_path_ + ": " + error);
    logging::logger().info("retention: {} telemetry rows older than {} days deleted", deleted,
                           o.retention_days);
  }
}

void EdgeStorage::open_shared(const EdgeDaemonOptions& o) {
  std::string error;
  RedisStoreOptions redis_options;
  if (!parse_redis_store_url(o.store, redis_options, error))
    throw std::runtime_error("--store: " + error);
  redis_options.endpoint.password = o.store_password;
  if (!o.store_password_file.empty())
    redis_options.endpoint.password =
        read_secret_option(o.store_password_file, "--store-password-file");
  redis_options.cache_devices = o.session_cache_devices;
  // The client id names this edge's pending-rows list: it must be valid in a key and stable
  // across restarts (it is: the broker session needs that too).
  if (std::string why = check_redis_edge_id(o.client_id); !why.empty())
    throw std::runtime_error("--client-id with --store redis: " + why);
  redis_ = RedisSessionStore::open(redis_options, error);
  if (redis_ == nullptr) throw std::runtime_error("--store " + o.store + ": " + error);
  pending_key_ = redis_->pending_key_of(o.client_id);
  redis_->set_pending_key(pending_key_);
  generations_ = std::make_unique<RedisCredentialGenerations>(*redis_);
  split_ = std::make_unique<SplitSessionStore>(*redis_, *local_);
  redis_target_.cluster = !redis_options.cluster_seeds.empty();
  redis_target_.nodes = redis_options.nodes();
}

void EdgeStorage::open_sinks(const EdgeDaemonOptions& o) {
  std::string error;
  telemetry_ = sinks::SqliteTelemetrySink::open(local_->connection(), error);
  if (telemetry_ == nullptr) throw std::runtime_error("state " + state_path_ + ": " + error);
  if (redis_) {
    if (!telemetry_->enable_lookup(error))
      throw std::runtime_error("state " + state_path_ + ": " + error);
    pending_sink_ = std::make_unique<PendingRowsSink>(*redis_);
    sink_.add(*pending_sink_);
  }
  sink_.add(*telemetry_);
  local_sinks_.add(*telemetry_);
  if (o.test_hold_ms > 0) {
    hold_committed_ =
        std::make_unique<TestHoldSink>(o.test_hold_ms, TestHoldSink::Moment::committed);
    sink_.add(*hold_committed_);
  }
  if (o.csv) {
    if (o.logs_dir.empty()) throw std::runtime_error("--logs-dir is required (or --no-csv)");
    std::filesystem::create_directories(o.logs_dir);
    csv_ = std::make_unique<sinks::ServerCsvSink>(o.logs_dir, local_->connection());
    sink_.add(*csv_);
    local_sinks_.add(*csv_);
  }
  if (o.test_hold_ms > 0) {
    hold_appended_ = std::make_unique<TestHoldSink>(o.test_hold_ms, TestHoldSink::Moment::appended);
    sink_.add(*hold_appended_);  // its before_commit() runs after the CSV sink's append
  }
}

// Rows whose state committed in Redis but not locally (a kill, a failed local commit, a lost
// reply): at start-up, before anything is subscribed, and at the next transaction after a
// failed commit, before a new state commit replaces the list.
void EdgeStorage::recover_pending_rows_at_start(const EdgeDaemonOptions& o) {
  if (!recover_pending_rows("at start-up"))
    throw std::runtime_error("cannot recover the pending rows of " + o.client_id);
  split_->set_recover([this] { return recover_pending_rows("after a failed commit"); });
  if (test_hold_ms_ > 0)
    split_->set_between_commits([this] {
      if (redis_->last_commit_rows() > 0) test_hold(test_hold_ms_, "redis committed");
    });
}

bool EdgeStorage::recover_pending_rows(const char* when) {
  PendingRecovery report;
  std::string why;
  if (!daemon::recover_pending_rows(*redis_, pending_key_, *local_, *telemetry_, local_sinks_,
                                    report, why)) {
    logging::logger().error("pending rows {}: {}", when, why);
    return false;
  }
  if (report.rows > 0)
    logging::logger().warn("pending rows {}: {} in {}, {} of them not yet local, now written", when,
                           report.rows, pending_key_, report.inserted);
  return true;
}

void EdgeStorage::prune_telemetry(std::uint64_t now_ms) {
  if (!retention_) return;
  std::string why;
  if (retention_->maybe_prune(now_ms, why) < 0)
    logging::logger().error("{} (tried again in a minute)", why);
}

std::uint64_t EdgeStorage::count_local_sessions() {
  if (redis_) return 0;
  std::uint64_t sessions = 0;
  std::uint64_t unreadable = 0;
  if (!local_->count_established(sessions, unreadable).ok())
    throw std::runtime_error("state " + state_path_ +
                             ": cannot count the sessions: " + local_->last_error());
  if (unreadable > 0)
    logging::logger().warn("{} stored states do not decode (refused when used)", unreadable);
  return sessions;
}

}  // namespace dsekp::edge::daemon
