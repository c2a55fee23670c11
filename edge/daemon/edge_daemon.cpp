// run_edge_daemon (see edge_daemon.hpp).
#include "edge/daemon/edge_daemon.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <thread>

#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/admin/admin_protocol.hpp"
#include "edge/daemon/admin_handler.hpp"
#include "edge/daemon/rejection_log.hpp"
#include "edge/daemon/result_metrics.hpp"
#include "edge/daemon/test_hold.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/metrics/edge_metrics.hpp"
#include "edge/metrics/metrics_server.hpp"
#include "edge/mqtt/mqtt_client.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/service/edge_service.hpp"
#include "edge/service/message_batch.hpp"
#include "edge/service/sqlite_credential_generations.hpp"
#include "edge/sinks/composite_sink.hpp"
#include "edge/sinks/republish_sink.hpp"
#include "edge/sinks/server_csv_sink.hpp"
#include "edge/sinks/sqlite_telemetry_sink.hpp"
#include "edge/store/sqlite_session_store.hpp"

namespace dsekp::edge::daemon {
namespace {

std::uint64_t unix_us_now() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

// The ready file: written under a temporary name and renamed, so a reader never sees it half
// written. Called on the loop thread after every (re)subscription; rewriting it is harmless.
void write_ready_file(const std::string& path) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  bool ok = f != nullptr && std::fprintf(f, "%d\n", static_cast<int>(::getpid())) > 0;
  if (f != nullptr) ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    logging::logger().error("cannot write the ready file {}", path);
  }
}

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

std::unique_ptr<metrics::MetricsServer> start_metrics(const std::string& spec,
                                                      const metrics::Registry& registry,
                                                      const mqtt::MqttClient& client) {
  if (spec == "off") return nullptr;
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("--metrics: expected HOST:PORT or off");
  metrics::MetricsServerOptions options;
  options.bind_address = spec.substr(0, colon);
  const unsigned long port = std::stoul(spec.substr(colon + 1));
  if (port > 65535) throw std::runtime_error("--metrics: port out of range");
  options.port = static_cast<std::uint16_t>(port);
  // Reads only an atomic of the client, as HealthCheck requires.
  options.health = [&client] {
    return client.connected() ? metrics::HealthReport{}
                              : metrics::HealthReport{false, "not connected to the broker"};
  };
  auto server = std::make_unique<metrics::MetricsServer>(registry, options);
  std::string error;
  if (!server->start(error)) throw std::runtime_error("metrics endpoint: " + error);
  logging::logger().info("metrics on http://{}:{}/metrics", options.bind_address, server->port());
  return server;
}

void check_reloadable(const EdgeDaemonOptions& o) {
  if (o.replay_window < 1 || o.replay_window > ReplayWindow::kMaxSize)
    throw std::runtime_error("--replay-window: must be 1.." +
                             std::to_string(ReplayWindow::kMaxSize));
}

// The options SIGHUP may change, into the service's configuration.
void apply_reloadable(const EdgeDaemonOptions& o, EdgeServiceConfig& config) {
  check_reloadable(o);
  config.max_skew_s = o.max_skew_s;
  config.init_rate.capacity = o.init_burst;
  config.init_rate.refill_interval_ms = o.init_refill_ms;
  config.replay_window = o.replay_window;
}

// The others need a restart: say so instead of silently running with the old value.
void report_restart_only_changes(const EdgeDaemonOptions& a, const EdgeDaemonOptions& b) {
  const auto check = [](bool changed, const char* name) {
    if (changed)
      logging::logger().warn("SIGHUP: {} changed; it takes effect after a restart", name);
  };
  check(a.broker_host != b.broker_host || a.broker_port != b.broker_port, "broker");
  check(a.registry_db != b.registry_db, "db");
  check(a.state_db != b.state_db, "state_db");
  check(a.logs_dir != b.logs_dir, "logs_dir");
  check(a.username != b.username || a.password != b.password, "username/password");
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
  check(a.batch_max != b.batch_max || a.batch_time_ms != b.batch_time_ms,
        "batch_max/batch_time_ms");
  check(a.log_format != b.log_format, "log_format");
}

}  // namespace

int run_edge_daemon(const EdgeDaemonOptions& o) {
  logging::configure(o.log_format, o.log_level);
  check_reloadable(o);
  // Blocked before any thread starts, so every thread inherits the mask and only sigwait() below
  // receives the stop signals.
  const sigset_t signals = stop_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::unique_ptr<DeviceRegistry> registry;
  if (const RegistryStatus s =
          DeviceRegistry::open(o.registry_db, OpenMode::existing_only, registry);
      !s.ok())
    throw std::runtime_error("registry " + o.registry_db + ": " + s.message());
  const std::string state_path = o.state_db.empty() ? o.registry_db + ".state" : o.state_db;
  std::string error;
  auto store = SqliteSessionStore::open(state_path, {}, error);
  if (store == nullptr) throw std::runtime_error("state " + state_path + ": " + error);
  auto generations = SqliteCredentialGenerations::open(*store, error);
  if (generations == nullptr) throw std::runtime_error("state " + state_path + ": " + error);

  mqtt::MqttOptions mqtt_options;
  mqtt_options.host = o.broker_host;
  mqtt_options.port = o.broker_port;
  mqtt_options.client_id = o.client_id;
  if (!mqtt::parse_mqtt_version(o.mqtt_version, mqtt_options.version))
    throw std::runtime_error("--mqtt-version: expected 5, 3.1.1 or auto, got \"" + o.mqtt_version +
                             "\"");
  mqtt_options.tls = {o.tls_ca, o.tls_cert, o.tls_key, o.tls_insecure};
  if (o.username) {
    mqtt_options.username = *o.username;
    mqtt_options.password = o.password;
  } else if (BrokerAccount account; registry->edge_broker_account(account).ok()) {
    mqtt_options.username = account.username;
    mqtt_options.password = account.password;
  }

  // Sinks: telemetry (the exactly-once record) always; CSV and republish as configured.
  auto telemetry = sinks::SqliteTelemetrySink::open(store->connection(), error);
  if (telemetry == nullptr) throw std::runtime_error("state " + state_path + ": " + error);
  sinks::CompositeSink sink;
  sink.add(*telemetry);
  TestHoldSink hold_sink(o.test_hold_ms);
  if (o.test_hold_ms > 0) sink.add(hold_sink);  // after the commit, before the CSV append
  std::unique_ptr<sinks::ServerCsvSink> csv;
  if (o.csv) {
    if (o.logs_dir.empty()) throw std::runtime_error("--logs-dir is required (or --no-csv)");
    std::filesystem::create_directories(o.logs_dir);
    csv = std::make_unique<sinks::ServerCsvSink>(o.logs_dir, store->connection());
    sink.add(*csv);
  }
  // The client is created before the sinks that publish through it and started after the
  // service exists, so no message can arrive before there is someone to handle it.
  metrics::EdgeMetrics* metrics_ptr = nullptr;
  RejectionLog rejections(o.rejection_lines_per_second);
  MessageBatch* batch_ptr = nullptr;
  AdminHandler* admin_ptr = nullptr;
  // dsekp_active_sessions: counted in the store once, then followed message by message (loop
  // thread only).
  std::int64_t active_sessions = 0;
  {
    std::uint64_t sessions = 0;
    std::uint64_t unreadable = 0;
    if (!store->count_established(sessions, unreadable).ok())
      throw std::runtime_error("state " + state_path +
                               ": cannot count the sessions: " + store->last_error());
    if (unreadable > 0)
      logging::logger().warn("{} stored states do not decode (refused when used)", unreadable);
    active_sessions = static_cast<std::int64_t>(sessions);
  }
  auto on_message = [&](std::string_view topic, ByteView payload) {
    // On delivery, before decoding (LOGS.md); one reading gives both recvts_us and recvts_ms.
    const std::uint64_t recvts_us = unix_us_now();
    const std::uint64_t now_ms = recvts_us / 1000;
    if (topic == admin_ptr->topic()) {
      batch_ptr->end();  // the downlink's seq is saved in its own transaction, after the batch
      const std::string answer = admin_ptr->handle(payload, now_ms);
      logging::logger().info("admin downlink: {}", answer);
      return;
    }
    const auto started = std::chrono::steady_clock::now();
    test_hold(o.test_hold_ms, "before");
    // In the open batch; its ACKs go out after the batch's commit (or the process fail-stops).
    const HandleResult r = batch_ptr->handle(topic, payload, now_ms, recvts_us);
    record_result(*metrics_ptr, r, std::chrono::steady_clock::now() - started);
    if (r.processed() && r.established_delta != 0) {
      active_sessions = std::max<std::int64_t>(0, active_sessions + r.established_delta);
      metrics_ptr->set_active_sessions(static_cast<std::size_t>(active_sessions));
    }
    if (!r.ok()) rejections.log(r, topic, now_ms);
  };
  // After the burst's last message, before libmosquitto writes its PUBACKs.
  auto on_batch_end = [&] {
    batch_ptr->end();
    test_hold(o.test_hold_ms, "after");
  };
  mqtt_options.batch_max = o.batch_max;
  mqtt_options.batch_time = std::chrono::milliseconds(o.batch_time_ms);
  for (const auto& topic :
       {std::string("dsekp/init"), std::string("dsekp/data"), std::string("psk/data")})
    mqtt_options.subscriptions.push_back(o.topic_prefix + topic);
  // `dsekp edge send` requests (edge/admin/admin_protocol.hpp); the ACL limits them to the edge
  // account.
  mqtt_options.subscriptions.push_back(admin::request_topic(o.topic_prefix));
  mqtt::ReadyHandler on_ready;
  if (!o.ready_file.empty()) on_ready = [&o] { write_ready_file(o.ready_file); };
  mqtt::MqttClient client(mqtt_options, on_message, on_ready, on_batch_end);
  std::unique_ptr<sinks::RepublishSink> republish;
  if (o.republish) {
    republish = std::make_unique<sinks::RepublishSink>(
        o.topic_prefix, [&client](const std::string& topic, const std::string& json) {
          client.publish(topic,
                         ByteView(reinterpret_cast<const std::uint8_t*>(json.data()), json.size()));
        });
    sink.add(*republish);
  }

  OpenSslCrypto crypto;
  OpenSslRng rng;
  EdgeServiceConfig config;
  config.topic_prefix = o.topic_prefix;
  apply_reloadable(o, config);
  EdgeService service(EdgeServiceParts{*registry, *store, *generations, sink, crypto, rng}, config);
  MessageBatch batch(service,
                     [&client](const Publish& p) { client.publish(p.topic, p.payload, p.qos); });
  batch_ptr = &batch;
  AdminHandler admin_handler(service, o.topic_prefix,
                             [&client](const std::string& t, ByteView p) { client.publish(t, p); });
  admin_ptr = &admin_handler;
  // The service's own topic list must be what the client subscribes to.
  if (service.topics().init() != mqtt_options.subscriptions[0] ||
      service.topics().data() != mqtt_options.subscriptions[1] ||
      service.topics().psk() != mqtt_options.subscriptions[2])
    throw std::runtime_error("internal: the MQTT subscriptions disagree with the service topics");

  metrics::Registry metric_registry;
  metrics::EdgeMetrics edge_metrics = metrics::declare_edge_metrics(metric_registry);
  metrics_ptr = &edge_metrics;
  edge_metrics.set_active_sessions(static_cast<std::size_t>(active_sessions));
  const auto metrics_server = start_metrics(o.metrics, metric_registry, client);

  if (!client.start(error)) throw std::runtime_error("MQTT: " + error);
  logging::logger().info("registry {}, state {}, broker {}:{}", o.registry_db, state_path,
                         o.broker_host, o.broker_port);

  int sig = 0;
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
    if (csv) csv->reopen();
    if (!o.reload) {
      logging::logger().info("SIGHUP: CSV logs reopen with the next row");
      continue;
    }
    try {
      const EdgeDaemonOptions n = o.reload();
      report_restart_only_changes(o, n);
      EdgeServiceConfig updated = config;
      apply_reloadable(n, updated);
      service.reconfigure(updated);
      config = updated;
      rejections.set_per_second(n.rejection_lines_per_second);
      logging::set_level(n.log_level);
      logging::logger().info(
          "SIGHUP: reloaded (max_skew {}, init_burst {}, init_refill_ms {}, replay_window {}, "
          "rejection_lines_per_second {}, log_level {}); CSV logs reopen with the next row",
          n.max_skew_s, n.init_burst, n.init_refill_ms, n.replay_window,
          n.rejection_lines_per_second, logging::to_string(n.log_level));
    } catch (const std::exception& e) {
      logging::logger().error("SIGHUP: reload failed, keeping the running options: {}", e.what());
    }
  }
  logging::logger().info("signal {}, stopping", sig);
  // The loop thread is joined first: after it, no handler runs and the sinks are quiet (the CSV
  // sink flushes per commit; its destructor closes the files).
  client.stop();
  if (metrics_server) metrics_server->stop();
  if (!o.ready_file.empty()) std::remove(o.ready_file.c_str());
  if (csv && csv->lost_rows() > 0)
    logging::logger().error("{} CSV rows could not be written", csv->lost_rows());
  return 0;
}

}  // namespace dsekp::edge::daemon
