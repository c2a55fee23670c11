// The options SIGHUP may change (see reloadable_options.hpp).
#include "edge/daemon/reloadable_options.hpp"

#include <stdexcept>
#include <string>

#include "edge/logging/edge_logger.hpp"

namespace dsekp::edge::daemon {

void check_reloadable(const EdgeDaemonOptions& o) {
  if (o.replay_window < 1 || o.replay_window > ReplayWindow::kMaxSize)
    throw std::runtime_error("--replay-window: must be 1.." +
                             std::to_string(ReplayWindow::kMaxSize));
}

void apply_reloadable(const EdgeDaemonOptions& o, EdgeServiceConfig& config) {
  check_reloadable(o);
  config.max_skew_s = o.max_skew_s;
  config.init_rate.capacity = o.init_burst;
  config.init_rate.refill_interval_ms = o.init_refill_ms;
  config.replay_window = o.replay_window;
}

void report_restart_only_changes(const EdgeDaemonOptions& a, const EdgeDaemonOptions& b) {
  const auto check = [](bool changed, const char* name) {
    if (changed)
      logging::logger().warn("SIGHUP: {} changed; it takes effect after a restart", name);
  };
  check(a.broker_host != b.broker_host || a.broker_port != b.broker_port, "broker");
  check(a.registry_db != b.registry_db, "db");
  check(a.state_db != b.state_db, "state_db");
  check(a.downlink_journal != b.downlink_journal, "downlink_journal");
  check(a.store != b.store || a.store_password != b.store_password ||
            a.store_password_file != b.store_password_file,
        "store");
  check(a.shared_group != b.shared_group, "shared_group");
  check(a.downlink_lane != b.downlink_lane, "downlink_lane");
  check(a.session_cache_devices != b.session_cache_devices, "session_cache_devices");
  check(a.logs_dir != b.logs_dir, "logs_dir");
  check(a.username != b.username || a.password != b.password || a.password_file != b.password_file,
        "username/password");
  check(a.client_id != b.client_id, "client_id");
  check(a.mqtt_version != b.mqtt_version, "mqtt_version");
  check(a.tls_ca != b.tls_ca || a.tls_cert != b.tls_cert || a.tls_key != b.tls_key ||
            a.tls_insecure != b.tls_insecure,
        "tls");
  check(a.metrics != b.metrics, "metrics");
  check(a.topic_prefix != b.topic_prefix, "prefix");
  check(a.ready_file != b.ready_file, "ready_file");
  check(a.csv != b.csv, "csv");
  check(a.republish != b.republish, "republish");
  check(a.home_assistant != b.home_assistant, "home_assistant");
  check(a.downlink_queue_ttl_s != b.downlink_queue_ttl_s, "downlink_queue_ttl");
  check(a.retention_days != b.retention_days, "retention_days");
  check(a.republish_topic != b.republish_topic || a.republish_retain != b.republish_retain ||
            a.device_offline_after_s != b.device_offline_after_s,
        "republish_topic/republish_retain/device_offline_after");
  check(a.psk_baseline != b.psk_baseline, "psk_baseline");
  check(a.batch_max != b.batch_max || a.batch_time_ms != b.batch_time_ms,
        "batch_max/batch_time_ms");
  check(a.log_format != b.log_format, "log_format");
}

}  // namespace dsekp::edge::daemon
