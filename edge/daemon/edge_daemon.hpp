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
// Per burst of messages (on the MQTT loop thread, see edge/mqtt/mqtt_client.hpp), at most
// batch_max: each message is handled in a savepoint of one store transaction (state, telemetry
// row, CSV line; edge/service/message_batch.hpp), metrics are counted and rejections
// logged at a bounded rate; at the burst's end the transaction commits, then the CSV and
// republish sinks act and the ACKs are published, and only then does the MQTT loop write the
// burst's PUBACKs. Admin requests (`dsekp edge send`, admin_handler.hpp) end the open batch and
// are handled on the same thread, so the daemon is the one writer of every device's state. A
// transient failure (store/sink/registry, HandleResult::processed() false) is retried a few
// times alone; if it persists, the daemon fail-stops: it logs FAIL-STOP and _exits with status
// 75 (EX_TEMPFAIL) before any PUBACK of the unstored message is written, so the broker
// redelivers it to the restarted edge (systemd Restart=on-failure).
//
// With a Redis store (--store redis://...), an unreachable Redis does not fail-stop: the store
// call that finds it unreachable waits on the loop thread (PING-free: the next command is the
// probe) until Redis answers again, then the message is handled as usual. While it waits the
// edge reads nothing from the broker and writes no PUBACK (the broker holds or redelivers the
// messages), /healthz answers 503 "store unreachable" and dsekp_store_up is 0. A SIGTERM during
// the wait ends it: the message fails, and the daemon fail-stops (status 75) without
// acknowledging it. See docs/SCALING.md for why a pause, not an exit loop.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "dsekp/edge_session.hpp"
#include "dsekp/replay_window.hpp"
#include "dsekp/token_bucket.hpp"
#include "edge/logging/log_options.hpp"

namespace dsekp::edge::daemon {

/// The values of EdgeDaemonOptions::mqtt_client (make_transport, broker_options.hpp, builds
/// each).
inline constexpr std::array<std::string_view, 2> kMqttClients = {"libmosquitto", "builtin"};

struct EdgeDaemonOptions {
  std::string broker_host = "127.0.0.1";
  std::uint16_t broker_port = 1883;
  std::string registry_db;  // --db
  std::string state_db;     // --state-db; empty: registry_db + ".state"
  // --downlink-journal: the seqs of every downlink sealed (edge/store/downlink_journal.hpp), a
  // file apart from the state so that a state restored from an older copy cannot take it back.
  // Empty: <state db>.downlinks.
  std::string downlink_journal;
  // --store: where the device session states live. Empty (or "sqlite"): the state database, as a
  // single edge always did. "redis://HOST[:PORT][/PREFIX]": a Redis server shared by several
  // edges (docs/SCALING.md, "Running several edges"); the state database then holds only this
  // edge's sink rows (telemetry, the CSV logs' committed ends).
  std::string store;
  // The Redis ACL user's password (the user is in the --store URL): --store-password-file's
  // first line, or DSEKP_REDIS_PASSWORD (the CLI reads it); never argv.
  std::string store_password;
  std::string store_password_file;
  // --shared-group: subscribe to the uplink and admin topics through the MQTT 5 shared
  // subscription $share/GROUP/..., so that the edges of one group split the messages (each
  // message to one of them). Needs MQTT 5 and, for correctness, a shared store. Empty: plain.
  std::string shared_group;
  // --downlink-lane K/N: this edge's index among the N edges that share one store
  // (edge/service/downlink_lane.hpp); each edge of a group needs its own K. "0/1": one edge.
  std::string downlink_lane = "0/1";
  // --session-cache-devices: the devices whose sessions this edge keeps in memory, so that their
  // frames need no state read (edge/store/uplink_session_cache.hpp). Redis store: their
  // established sessions' uplink keys; with shared subscriptions every edge sees every device,
  // so this should hold the fleet; a device beyond it costs a state read per frame. SQLite
  // store: their committed states, so that a device's first frame in a batch needs no read
  // either (past the bound all are dropped and read again). 0: no cache (Redis: every frame
  // is read and saved the full way; SQLite: the first frame of a device in each batch).
  std::uint32_t session_cache_devices = 65536;
  std::string logs_dir;  // where the server CSV logs go (needed unless csv is false)
  // Broker login; unset: the registry's edge account if it has one, else anonymous.
  std::optional<std::string> username;
  std::string password;       // also from DSEKP_BROKER_PASSWORD (the CLI), never needed in argv
  std::string password_file;  // its first line is the password (overrides `password`)
  std::string client_id = "dsekp-edge";
  std::string metrics = "127.0.0.1:9464";  // HOST:PORT or "off"
  std::string topic_prefix;  // --prefix; empty: the registry's (`dsekp keys topic-prefix`)
  std::uint32_t max_skew_s = 300;
  bool csv = true;
  // --republish: each accepted reading in clear on B/{dev_id}, and availability (the edge's and
  // each device's; edge/registry/republish_topics.hpp). Off by default: it hands plaintext to
  // whoever the broker lets read those topics (`dsekp keys account add NAME --role reader`),
  // which the protocol's confidentiality claim excludes.
  bool republish = false;
  // --republish-topic: B ("": {prefix}plain).
  std::string republish_topic;
  // --republish-retain: the readings and availability retained; the broker must allow
  // retained messages (`dsekp keys broker-config --retain`).
  bool republish_retain = false;
  // --device-offline-after: a device is published offline after this long without an accepted
  // frame (edge/daemon/device_activity.hpp).
  std::uint32_t device_offline_after_s = 300;
  // --downlink-queue-ttl: how long a downlink request for an offline device is held for its
  // return (edge/daemon/admin_handler.hpp); 0: never held, sent at once whatever the device's
  // state.
  std::uint32_t downlink_queue_ttl_s = 3600;
  // --retention-days: telemetry rows received longer ago are deleted
  // (edge/sinks/telemetry_retention.hpp); 0: kept for ever.
  std::uint32_t retention_days = 0;
  // --home-assistant (with --republish): Home Assistant discovery configs
  // (edge/sinks/home_assistant.hpp); implies republish_retain.
  bool home_assistant = false;
  // --psk-baseline: serve the paper's static-key baseline on {prefix}psk/data (the experiment's
  // comparison). Off by default: it has no replay protection and unauthenticated headers.
  bool psk_baseline = false;
  std::uint32_t rejection_lines_per_second = 5;
  // Where the daemon logs (edge/logging/edge_logger.hpp); the level is reloaded on SIGHUP.
  logging::LogFormat log_format = logging::LogFormat::text;
  logging::LogLevel log_level = logging::LogLevel::info;
  // Written (temporary name, then rename) with the edge's pid once it is connected and every
  // subscription is granted; removed on a clean exit. Empty: none.
  std::string ready_file;
  // The per-device INIT token bucket and the replay window (defaults: the core's).
  std::uint32_t init_burst = TokenBucketConfig{}.capacity;
  std::uint32_t init_refill_ms = TokenBucketConfig{}.refill_interval_ms;
  std::uint32_t replay_window = ReplayWindow::kDefaultSize;  // 1..ReplayWindow::kMaxSize
  // Ratcheting devices: secrets past the stored one an INIT is tried under (PROTOCOL.md 6.6).
  std::uint32_t ratchet_lookahead = EdgeConfig{}.ratchet_lookahead;
  // MQTT protocol: "auto" (5, falling back to 3.1.1 if the broker refuses 5), "5" or "3.1.1".
  std::string mqtt_version = "auto";
  // The MQTT client: "libmosquitto" (MQTT 5 or 3.1.1, TLS) or "builtin" (the edge's own MQTT 5
  // client over plain TCP: far fewer system calls per message; edge/mqtt_builtin/).
  std::string mqtt_client = "libmosquitto";
  // --amqp: RabbitMQ nodes ("HOST[:PORT],..."): the uplink is consumed from the quorum queue
  // `amqp_queue` over AMQP 0-9-1 instead of MQTT subscriptions (edge/amqp/). Empty: MQTT.
  std::string amqp_nodes;
  std::string amqp_queue = "dsekp-uplink";
  // TLS to the broker: a CA file turns it on; client certificate + key optional; insecure skips
  // the host name check only.
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  bool tls_insecure = false;
  // Start on a libmosquitto release other than the one the PUBACK-after-commit was verified in.
  bool allow_unverified_libmosquitto = false;
  // Messages per store transaction (one commit, then their PUBACKs; mqtt_client.hpp); 1: one
  // commit per message.
  std::uint32_t batch_max = 256;
  // A burst stops reading new messages after this long, ms (0: only batch_max and an empty
  // socket end it), so one slow burst does not hold back the PUBACKs of the others.
  std::uint32_t batch_time_ms = 10;
  // A burst that owes no device an answer waits up to this long, ms, for more messages before it
  // commits (mqtt_client.hpp, batch_wait); 0: it commits as soon as the socket is empty.
  std::uint32_t batch_wait_ms = 0;
  // Fault injection for the kill test only (edge/daemon/test_hold.hpp); 0 = off.
  std::uint32_t test_hold_ms = 0;
  // SIGHUP: the options as they would be now (config file re-read, flags re-applied); may throw
  // std::runtime_error. Unset: SIGHUP only reopens the CSV logs.
  std::function<EdgeDaemonOptions()> reload;
};

/// Runs the daemon until SIGTERM/SIGINT; returns the exit code (0 on a signal). Start-up
/// failures (a missing registry, an unbindable metrics address, ...) throw std::runtime_error.
/// Configures the logger (log_format, log_level) first; from then on every diagnostic goes
/// through it (edge/logging/edge_logger.hpp).
/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and so in every thread it starts).
///
/// SIGHUP: the CSV logs are reopened before the next accepted frame (log rotation), and with
/// `reload` set the reloadable options are applied (edge_options.hpp marks them: the INIT token
/// bucket, max_skew, replay_window, ratchet_lookahead, rejection_lines_per_second; and
/// log_level); a change to any
/// other option is reported as needing a restart. A reload that fails keeps the running values.
int run_edge_daemon(const EdgeDaemonOptions& options);

}  // namespace dsekp::edge::daemon
