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
// commits the state and the telemetry row; then the CSV and republish sinks act, the returned
// publishes (ACKs) go out, metrics are counted and rejections logged at a bounded rate. A
// transient failure (store/sink/registry, HandleResult::processed() false) is retried a few times;
// if it persists the message is logged as NOT PROCESSED and, the PUBACK being unavoidable in
// libmosquitto 2.0, lost (not acknowledging it, e.g. by dropping the connection, is left for
// later).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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
};

/// Runs the daemon until SIGTERM/SIGINT; returns the exit code (0 on a signal). Start-up
/// failures (a missing registry, an unbindable metrics address, ...) throw std::runtime_error.
/// Blocks SIGTERM and SIGINT in the calling thread (and so in every thread it starts).
int run_edge_daemon(const EdgeDaemonOptions& options);

}  // namespace dsekp::edge::daemon
