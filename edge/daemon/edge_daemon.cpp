// run_edge_daemon (see edge_daemon.hpp).
#include "edge/daemon/edge_daemon.hpp"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <thread>

#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/daemon/rejection_log.hpp"
#include "edge/daemon/result_metrics.hpp"
#include "edge/metrics/edge_metrics.hpp"
#include "edge/metrics/metrics_server.hpp"
#include "edge/mqtt/mqtt_client.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/service/edge_service.hpp"
#include "edge/service/sqlite_credential_generations.hpp"
#include "edge/sinks/composite_sink.hpp"
#include "edge/sinks/republish_sink.hpp"
#include "edge/sinks/server_csv_sink.hpp"
#include "edge/sinks/sqlite_telemetry_sink.hpp"
#include "edge/store/sqlite_session_store.hpp"

namespace dsekp::edge::daemon {
namespace {

// A transient failure (e.g. the state file locked by a backup) often passes: retry a bounded
// number of times before giving the message up.
constexpr int kTransientAttempts = 3;
constexpr std::chrono::milliseconds kTransientPause{50};

std::uint64_t unix_ms_now() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
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
  std::fprintf(stderr, "dsekp edge: metrics on http://%s:%u/metrics\n",
               options.bind_address.c_str(), static_cast<unsigned>(server->port()));
  return server;
}

}  // namespace

int run_edge_daemon(const EdgeDaemonOptions& o) {
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
  std::unique_ptr<sinks::ServerCsvSink> csv;
  if (o.csv) {
    if (o.logs_dir.empty()) throw std::runtime_error("--logs-dir is required (or --no-csv)");
    std::filesystem::create_directories(o.logs_dir);
    csv = std::make_unique<sinks::ServerCsvSink>(o.logs_dir);
    sink.add(*csv);
  }
  // The client is created before the sinks that publish through it and started after the
  // service exists, so no message can arrive before there is someone to handle it.
  EdgeService* service_ptr = nullptr;
  metrics::EdgeMetrics* metrics_ptr = nullptr;
  RejectionLog rejections(o.rejection_lines_per_second);
  mqtt::MqttClient* client_ptr = nullptr;
  auto on_message = [&](std::string_view topic, ByteView payload) {
    const std::uint64_t now_ms = unix_ms_now();  // on delivery, before decoding (LOGS.md)
    const auto started = std::chrono::steady_clock::now();
    HandleResult r = service_ptr->handle(topic, payload, now_ms);
    for (int attempt = 1; !r.processed() && attempt < kTransientAttempts; ++attempt) {
      std::this_thread::sleep_for(kTransientPause);
      r = service_ptr->handle(topic, payload, now_ms);
    }
    for (const Publish& p : r.publishes) client_ptr->publish(p.topic, p.payload, p.qos);
    record_result(*metrics_ptr, r, std::chrono::steady_clock::now() - started);
    if (!r.ok()) rejections.log(r, topic, now_ms);
  };
  for (const auto& topic :
       {std::string("dsekp/init"), std::string("dsekp/data"), std::string("psk/data")})
    mqtt_options.subscriptions.push_back(o.topic_prefix + topic);
  mqtt::MqttClient client(mqtt_options, on_message);
  client_ptr = &client;
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
  config.max_skew_s = o.max_skew_s;
  EdgeService service(EdgeServiceParts{*registry, *store, *generations, sink, crypto, rng}, config);
  service_ptr = &service;
  // The service's own topic list must be what the client subscribes to.
  if (service.topics().init() != mqtt_options.subscriptions[0] ||
      service.topics().data() != mqtt_options.subscriptions[1] ||
      service.topics().psk() != mqtt_options.subscriptions[2])
    throw std::runtime_error("internal: the MQTT subscriptions disagree with the service topics");

  metrics::Registry metric_registry;
  metrics::EdgeMetrics edge_metrics = metrics::declare_edge_metrics(metric_registry);
  metrics_ptr = &edge_metrics;
  const auto metrics_server = start_metrics(o.metrics, metric_registry, client);

  if (!client.start(error)) throw std::runtime_error("MQTT: " + error);
  std::fprintf(stderr, "dsekp edge: registry %s, state %s, broker %s:%u\n", o.registry_db.c_str(),
               state_path.c_str(), o.broker_host.c_str(), static_cast<unsigned>(o.broker_port));

  int sig = 0;
  sigwait(&signals, &sig);
  std::fprintf(stderr, "dsekp edge: signal %d, stopping\n", sig);
  // The loop thread is joined first: after it, no handler runs and the sinks are quiet (the CSV
  // sink flushes per commit; its destructor closes the files).
  client.stop();
  if (metrics_server) metrics_server->stop();
  if (csv && csv->lost_rows() > 0)
    std::fprintf(stderr, "dsekp edge: %llu CSV rows could not be written\n",
                 static_cast<unsigned long long>(csv->lost_rows()));
  return 0;
}

}  // namespace dsekp::edge::daemon
