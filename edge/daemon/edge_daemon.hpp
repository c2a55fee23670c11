// The edge daemon (`dsekp edge`): opens the device registry and the session store, builds
// EdgeService with its sinks, serves the metrics, connects to the broker and handles every
// message until SIGTERM or SIGINT.
//
// Two database files: the registry (--db) is the file `dsekp keys` writes, holding every
// DEV_SECRET; the state (--state-db, default `<db>.state`) is written on every accepted frame and
// also holds the telemetry table. They could share one file (the registry tolerates other
// tables), but apart they can be backed up, reset and sized on their own, and a `keys` command
// never waits behind the edge's per-frame commits. This is the layout the service tests use.
//
// Per message (on the MQTT loop thread, see edge/mqtt/mqtt_client.hpp): EdgeService::handle
// commits the state, the telemetry row and the CSV journal line; then the CSV and republish
// sinks act, the returned publishes (ACKs) go out, metrics are counted and rejections logged at
// a bounded rate. Admin requests (`dsekp edge send`, admin_handler.hpp) are handled on the same
// thread, so the daemon is the one writer of every device's state. A
// transient failure (store/sink/registry, HandleResult::processed() false) is retried a few times;
// if it persists the message is logged as NOT PROCESSED and, the PUBACK being unavoidable in
// libmosquitto 2.0, lost (not acknowledging it, e.g. by dropping the connection, is left for
// later).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "dsekp/replay_window.hpp"
#include "dsekp/token_bucket.hpp"

namespace dsekp::edge::daemon {

struct EdgeDaemonOptions {
  std::string broker_host = "127.0.0.1";
  std::uint16_t broker_port = 1883;
  std::string registry_db;  // --db
  std::string state_db;     // --state-db; empty: registry_db + ".state"
  std::string logs_dir;     // where the server CSV logs go (needed unless csv is false)
  // Broker login; unset: the registry's edge account if it has one, else anonymous.
  std::optional<std::string> username;
  std::string password;
  std::string client_id = "dsekp-edge";
  std::string metrics = "127.0.0.1:9464";  // HOST:PORT or "off"
  std::string topic_prefix;
  std::uint32_t max_skew_s = 300;
  bool csv = true;
  bool republish = true;
  std::uint32_t rejection_lines_per_second = 5;
  // Written (temporary name, then rename) with the edge's pid once it is connected and every
  // subscription is granted; removed on a clean exit. Empty: none.
  std::string ready_file;
  // The per-device INIT token bucket and the replay window (defaults: the core's).
  std::uint32_t init_burst = TokenBucketConfig{}.capacity;
  std::uint32_t init_refill_ms = TokenBucketConfig{}.refill_interval_ms;
  std::uint32_t replay_window = ReplayWindow::kDefaultSize;  // 1..ReplayWindow::kMaxSize
  // MQTT protocol: "auto" (5, falling back to 3.1.1 if the broker refuses 5), "5" or "3.1.1".
  std::string mqtt_version = "auto";
  // TLS to the broker: a CA file turns it on; client certificate + key optional; insecure skips
  // the host name check only.
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  bool tls_insecure = false;
  // Fault injection for the kill test only (edge/daemon/test_hold.hpp); 0 = off.
  std::uint32_t test_hold_ms = 0;
  // SIGHUP: the options as they would be now (config file re-read, flags re-applied); may throw
  // std::runtime_error. Unset: SIGHUP only reopens the CSV logs.
  std::function<EdgeDaemonOptions()> reload;
};

/// Runs the daemon until SIGTERM/SIGINT; returns the exit code (0 on a signal). Start-up
/// failures (a missing registry, an unbindable metrics address, ...) throw std::runtime_error.
/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and so in every thread it starts).
///
/// SIGHUP: the CSV logs are reopened before the next accepted frame (log rotation), and with
/// `reload` set the reloadable options are applied (edge_config_file.hpp lists them: the INIT
/// token bucket, max_skew, replay_window, rejection_lines_per_second); a change to any other
/// option is reported as needing a restart. A reload that fails keeps the running values.
int run_edge_daemon(const EdgeDaemonOptions& options);

}  // namespace dsekp::edge::daemon
