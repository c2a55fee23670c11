// run_edge_daemon (see edge_daemon.hpp).
#include "edge/daemon/edge_daemon.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>

#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/admin/admin_protocol.hpp"
#include "edge/daemon/admin_handler.hpp"
#include "edge/daemon/device_activity.hpp"
#include "edge/daemon/operational_metrics.hpp"
#include "edge/daemon/pending_rows.hpp"
#include "edge/daemon/periodic_task.hpp"
#include "edge/daemon/rejection_log.hpp"
#include "edge/daemon/result_metrics.hpp"
#include "edge/daemon/service_manager.hpp"
#include "edge/daemon/test_hold.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/metrics/edge_metrics.hpp"
#include "edge/metrics/metrics_server.hpp"
#include "edge/mqtt/mqtt_client.hpp"
#include "edge/mqtt/mqtt_limits.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/republish_topics.hpp"
#include "edge/registry/secure_file.hpp"
#include "edge/service/edge_service.hpp"
#include "edge/service/message_batch.hpp"
#include "edge/service/sqlite_credential_generations.hpp"
#include "edge/sinks/composite_sink.hpp"
#include "edge/sinks/republish_sink.hpp"
#include "edge/sinks/server_csv_sink.hpp"
#include "edge/sinks/sqlite_telemetry_sink.hpp"
#include "edge/sinks/telemetry_retention.hpp"
#include "edge/store/redis/redis_credential_generations.hpp"
#include "edge/store/redis/redis_probe.hpp"
#include "edge/store/redis/redis_store_url.hpp"
#include "edge/store/redis/split_session_store.hpp"
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

// The shared store's reachability, as /healthz and dsekp_store_up report it: the probe's PING
// (an idle edge notices too) and the loop thread's own finding (a store call waiting for Redis).
struct StoreHealth {
  std::atomic<const redis::RedisProbe*> probe{nullptr};  // null: the local SQLite store (up)
  std::atomic<bool> waiting{false};  // the loop thread is paused on an unreachable store
  [[nodiscard]] bool up() const noexcept {
    const redis::RedisProbe* p = probe.load();
    return p == nullptr || (p->up() && !waiting.load(std::memory_order_relaxed));
  }
};

std::unique_ptr<metrics::MetricsServer> start_metrics(const std::string& spec,
                                                      const metrics::Registry& registry,
                                                      const mqtt::MqttClient& client,
                                                      const StoreHealth& store_health) {
  if (spec == "off") return nullptr;
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("--metrics: expected HOST:PORT or off");
  metrics::MetricsServerOptions options;
  options.bind_address = spec.substr(0, colon);
  const unsigned long port = std::stoul(spec.substr(colon + 1));
  if (port > 65535) throw std::runtime_error("--metrics: port out of range");
  options.port = static_cast<std::uint16_t>(port);
  // Reads only atomics (the client's, the store probe's), as HealthCheck requires.
  options.health = [&client, &store_health] {
    if (!store_health.up())
      return metrics::HealthReport{false, "store unreachable (not accepting frames)"};
    return client.connected() ? metrics::HealthReport{}
                              : metrics::HealthReport{false, "not connected to the broker"};
  };
  auto server = std::make_unique<metrics::MetricsServer>(registry, options);
  std::string error;
  if (!server->start(error)) throw std::runtime_error("metrics endpoint: " + error);
  logging::logger().info("metrics on http://{}:{}/metrics", options.bind_address, server->port());
  return server;
}

// "$share/GROUP/" for --shared-group, "" without. The group is one topic level: no '/', and no
// wildcard (MQTT 5 4.8.2: a ShareName must not contain "/", "+" or "#").
std::string shared_subscription_prefix(const EdgeDaemonOptions& o) {
  if (o.shared_group.empty()) return {};
  if (o.shared_group.find_first_of("/+#") != std::string::npos)
    throw std::runtime_error("--shared-group: a group name may not contain '/', '+' or '#'");
  if (o.mqtt_version == "3.1.1" || o.mqtt_version == "311")
    throw std::runtime_error(
        "--shared-group needs MQTT 5 shared subscriptions; it cannot be used with "
        "--mqtt-version 3.1.1");
  return "$share/" + o.shared_group + "/";
}

// B of --republish (republish_topics.hpp), checked; nullopt without --republish.
std::optional<RepublishTopics> republish_topics(const EdgeDaemonOptions& o) {
  if (!o.republish) return std::nullopt;
  if (const std::string why = republish_base_problem(o.topic_prefix, o.republish_topic);
      !why.empty())
    throw std::runtime_error("--republish-topic: " + why);
  // The client id is a level of the edge's availability topic.
  if (o.client_id.find_first_of("/+#") != std::string::npos)
    throw std::runtime_error("--client-id with --republish: may not contain '/', '+' or '#'");
  if (o.device_offline_after_s == 0)
    throw std::runtime_error("--device-offline-after: must be at least 1 second");
  return RepublishTopics(republish_base(o.topic_prefix, o.republish_topic));
}

// The first line of a secret's file (a password kept out of argv).
std::string first_line_of(const std::string& path, const char* option) {
  std::string line;
  if (const RegistryStatus s = read_password_file(path, line); !s.ok())
    throw std::runtime_error(std::string(option) + " " + s.message());
  return line;
}

// The broker login: --username with --password (or --password-file); --username alone takes
// that account's password from the registry (`dsekp keys account add NAME --role edge`);
// nothing at all, the registry's default edge account, else anonymous.
void resolve_broker_login(const EdgeDaemonOptions& o, DeviceRegistry& registry,
                          mqtt::MqttOptions& out) {
  std::string password = o.password;
  if (!o.password_file.empty()) password = first_line_of(o.password_file, "--password-file");
  if (o.username) {
    out.username = *o.username;
    out.password = password;
    if (password.empty()) {
      if (ServiceAccount account; registry.account(*o.username, account).ok())
        out.password = account.login.password;
    }
  } else if (BrokerAccount account; registry.edge_broker_account(account).ok()) {
    out.username = account.username;
    out.password = account.password;
  }
}

// The deployment's topic prefix is the registry's (`dsekp keys topic-prefix`); --prefix may
// name it too, but not another one: the devices were provisioned with the registry's, and the
// broker's grants and `edge send` follow it. A registry that records none (also one from before
// the prefix was recorded) has devices without one.
void resolve_topic_prefix(EdgeDaemonOptions& o, DeviceRegistry& registry) {
  std::string recorded;
  if (const RegistryStatus s = registry.topic_prefix(recorded); !s.ok())
    throw std::runtime_error("registry " + o.registry_db + ": " + s.message());
  if (o.topic_prefix.empty()) {
    o.topic_prefix = recorded;
  } else if (recorded != o.topic_prefix) {
    throw std::runtime_error(
        "--prefix \"" + o.topic_prefix + "\" is not the deployment's topic prefix \"" + recorded +
        "\", which its devices were given: record it with `dsekp keys topic-prefix " +
        o.topic_prefix + " --db " + o.registry_db +
        "` (then re-provision the devices and rerun broker-config), or drop --prefix");
  }
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

}  // namespace

int run_edge_daemon(const EdgeDaemonOptions& given) {
  EdgeDaemonOptions o = given;  // with the topic prefix resolved below
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
  resolve_topic_prefix(o, *registry);
  const std::string state_path = o.state_db.empty() ? o.registry_db + ".state" : o.state_db;
  std::string error;
  // The local state database: the device states too with the SQLite store, only the sink rows
  // (telemetry, CSV journal) with a shared store.
  auto local_store = SqliteSessionStore::open(state_path, {}, error);
  if (local_store == nullptr) throw std::runtime_error("state " + state_path + ": " + error);
  SessionStore* store = local_store.get();
  std::unique_ptr<CredentialGenerations> generations;
  std::unique_ptr<RedisSessionStore> redis_store;
  std::unique_ptr<SplitSessionStore> split_store;
  redis::RedisEndpoint redis_endpoint;
  StoreHealth store_health;
  if (o.store.empty() || o.store == "sqlite") {
    generations = SqliteCredentialGenerations::open(*local_store, error);
    if (generations == nullptr) throw std::runtime_error("state " + state_path + ": " + error);
  } else {
    RedisStoreOptions redis_options;
    if (!parse_redis_store_url(o.store, redis_options, error))
      throw std::runtime_error("--store: " + error);
    redis_options.endpoint.password = o.store_password;
    if (!o.store_password_file.empty())
      redis_options.endpoint.password =
          first_line_of(o.store_password_file, "--store-password-file");
    redis_options.cache_devices = o.session_cache_devices;
    // The client id names this edge's pending-rows list: it must be valid in a key and stable
    // across restarts (it is: the broker session needs that too).
    if (std::string why = check_redis_edge_id(o.client_id); !why.empty())
      throw std::runtime_error("--client-id with --store redis: " + why);
    redis_store = RedisSessionStore::open(redis_options, error);
    if (redis_store == nullptr) throw std::runtime_error("--store " + o.store + ": " + error);
    redis_store->set_pending_key(redis_store->pending_key_of(o.client_id));
    generations = std::make_unique<RedisCredentialGenerations>(*redis_store);
    split_store = std::make_unique<SplitSessionStore>(*redis_store, *local_store);
    store = split_store.get();
    redis_endpoint = redis_options.endpoint;
  }

  mqtt::MqttOptions mqtt_options;
  mqtt_options.host = o.broker_host;
  mqtt_options.port = o.broker_port;
  mqtt_options.client_id = o.client_id;
  if (!mqtt::parse_mqtt_version(o.mqtt_version, mqtt_options.version))
    throw std::runtime_error("--mqtt-version: expected 5, 3.1.1 or auto, got \"" + o.mqtt_version +
                             "\"");
  mqtt_options.tls = {o.tls_ca, o.tls_cert, o.tls_key, o.tls_insecure};
  resolve_broker_login(o, *registry, mqtt_options);
  const std::optional<RepublishTopics> republished = republish_topics(o);
  const bool retain = o.republish_retain || o.home_assistant;
  if (republished)
    mqtt_options.availability = {republished->edge_availability(o.client_id),
                                 std::string(kAvailabilityOnline),
                                 std::string(kAvailabilityOffline), retain};

  // Sinks: telemetry (the exactly-once record) always; CSV and republish as configured.
  auto telemetry = sinks::SqliteTelemetrySink::open(local_store->connection(), error);
  if (telemetry == nullptr) throw std::runtime_error("state " + state_path + ": " + error);
  sinks::CompositeSink sink;
  // With Redis: the rows go first into the state commit's write-ahead (pending_rows.hpp), then
  // the local sinks; `local_sinks` (telemetry, CSV) is what a recovery writes through.
  std::unique_ptr<PendingRowsSink> pending_sink;
  sinks::CompositeSink local_sinks;
  if (redis_store) {
    if (!telemetry->enable_lookup(error))
      throw std::runtime_error("state " + state_path + ": " + error);
    pending_sink = std::make_unique<PendingRowsSink>(*redis_store);
    sink.add(*pending_sink);
  }
  sink.add(*telemetry);
  local_sinks.add(*telemetry);
  TestHoldSink hold_sink(o.test_hold_ms);
  if (o.test_hold_ms > 0) sink.add(hold_sink);  // after the commit, before the CSV append
  std::unique_ptr<sinks::ServerCsvSink> csv;
  if (o.csv) {
    if (o.logs_dir.empty()) throw std::runtime_error("--logs-dir is required (or --no-csv)");
    std::filesystem::create_directories(o.logs_dir);
    csv = std::make_unique<sinks::ServerCsvSink>(o.logs_dir, local_store->connection());
    sink.add(*csv);
    local_sinks.add(*csv);
  }
  if (redis_store) {
    // Rows whose state committed in Redis but not locally (a kill, a failed local commit, a
    // lost reply): at start-up, before anything is subscribed, and at the next transaction
    // after a failed commit, before a new state commit replaces the list.
    const std::string pending_key = redis_store->pending_key_of(o.client_id);
    const auto recover = [&, pending_key](const char* when) {
      PendingRecovery report;
      std::string why;
      if (!recover_pending_rows(*redis_store, pending_key, *local_store, *telemetry, local_sinks,
                                report, why)) {
        logging::logger().error("pending rows {}: {}", when, why);
        return false;
      }
      if (report.rows > 0)
        logging::logger().warn("pending rows {}: {} in {}, {} of them not yet local, now written",
                               when, report.rows, pending_key, report.inserted);
      return true;
    };
    if (!recover("at start-up"))
      throw std::runtime_error("cannot recover the pending rows of " + o.client_id);
    split_store->set_recover([recover] { return recover("after a failed commit"); });
    if (o.test_hold_ms > 0)
      split_store->set_between_commits([&o, &redis_store] {
        if (redis_store->last_commit_rows() > 0) test_hold(o.test_hold_ms, "redis committed");
      });
  }
  // After the recovery above, which checks the newest rows against the table.
  std::unique_ptr<sinks::TelemetryRetention> retention;
  if (o.retention_days > 0) {
    retention = std::make_unique<sinks::TelemetryRetention>(local_store->connection(),
                                                            o.retention_days, o.batch_max);
    const std::int64_t deleted = retention->prune_all(unix_us_now() / 1000, error);
    if (deleted < 0) throw std::runtime_error("state " + state_path + ": " + error);
    logging::logger().info("retention: {} telemetry rows older than {} days deleted", deleted,
                           o.retention_days);
  }
  // The client is created before the sinks that publish through it and started after the
  // service exists, so no message can arrive before there is someone to handle it.
  metrics::EdgeMetrics* metrics_ptr = nullptr;
  RejectionLog rejections(o.rejection_lines_per_second);
  MessageBatch* batch_ptr = nullptr;
  AdminHandler* admin_ptr = nullptr;
  // dsekp_active_sessions: counted in the store once, then followed message by message (loop
  // thread only).
  // With a shared store the gauge is per edge: the sessions this edge's own messages created
  // minus those they removed since it started (counting the shared store would mean a SCAN of
  // every device; docs/SCALING.md).
  std::int64_t active_sessions = 0;
  if (redis_store == nullptr) {
    std::uint64_t sessions = 0;
    std::uint64_t unreadable = 0;
    if (!local_store->count_established(sessions, unreadable).ok())
      throw std::runtime_error("state " + state_path +
                               ": cannot count the sessions: " + local_store->last_error());
    if (unreadable > 0)
      logging::logger().warn("{} stored states do not decode (refused when used)", unreadable);
    active_sessions = static_cast<std::int64_t>(sessions);
  }
  // The fail-closed pause (edge_daemon.hpp): a store call that cannot reach Redis waits here, on
  // the loop thread, so nothing more is read from the broker and nothing acknowledged.
  std::atomic<bool> stopping{false};
  metrics::Gauge* store_up_gauge = nullptr;
  metrics::Counter* store_round_trips = nullptr;
  std::uint64_t round_trips_counted = 0;
  metrics::Counter* cache_hits = nullptr;
  metrics::Counter* cache_misses = nullptr;
  metrics::Gauge* cache_devices = nullptr;
  if (redis_store) {
    redis_store->set_outage_handler([&](const std::string& why) {
      if (stopping.load()) return false;
      if (!store_health.waiting.exchange(true)) {
        logging::logger().error(
            "store unreachable ({}): not reading from the broker, nothing acknowledged, until it "
            "answers",
            why);
        if (store_up_gauge != nullptr) store_up_gauge->set(0);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return !stopping.load();
    });
  }
  // Loop thread, after each message and batch: the end of a pause, and the round-trip counter.
  const auto after_store_use = [&] {
    if (!redis_store) return;
    if (store_health.waiting.load() && redis_store->up()) {
      store_health.waiting = false;
      if (store_up_gauge != nullptr) store_up_gauge->set(store_health.up() ? 1 : 0);
      logging::logger().warn("store reachable again: reading from the broker again");
    }
    const std::uint64_t now = redis_store->round_trips();
    if (store_round_trips != nullptr) store_round_trips->add(now - round_trips_counted);
    round_trips_counted = now;
    if (cache_devices != nullptr)
      cache_devices->set(static_cast<double>(redis_store->cached_devices()));
  };
  auto on_message = [&](std::string_view topic, ByteView payload,
                        const mqtt::MessageProperties& properties) {
    const bool retained = properties.retained;
    // On delivery, before decoding (LOGS.md); one reading gives both recvts_us and recvts_ms.
    const std::uint64_t recvts_us = unix_us_now();
    const std::uint64_t now_ms = recvts_us / 1000;
    if (topic == admin_ptr->topic() && retained) {
      // A stored request would send its downlink again on every restart of the edge.
      logging::logger().warn("admin request refused: retained_message (a stored copy)");
      return;
    }
    if (topic == admin_ptr->topic()) {
      // The batch ends only if the request is authenticated (AdminHandler's before_seal): the
      // downlink's seq is saved in its own transaction, after the batch.
      const std::string answer = admin_ptr->handle(
          payload, {properties.response_topic, properties.correlation_data}, now_ms);
      logging::logger().info("admin downlink: {}", answer);
      after_store_use();
      return;
    }
    test_hold(o.test_hold_ms, "before");
    // In the open batch; its ACKs go out after the batch's commit (or the process fail-stops).
    // Metrics and logs follow from the batch's settled/failed_attempt callbacks (below).
    (void)batch_ptr->handle(topic, payload, now_ms, recvts_us, retained);
    after_store_use();
  };
  // Last-seen times for dsekp_devices_silent; asks the registry (a connection of its own: it is
  // read on the scraping thread) whether a silent device was removed.
  std::unique_ptr<DeviceRegistry> activity_registry;
  if (const RegistryStatus s =
          DeviceRegistry::open(o.registry_db, OpenMode::existing_only, activity_registry);
      !s.ok())
    throw std::runtime_error("registry " + o.registry_db + ": " + s.message());
  DeviceActivity activity([&activity_registry](const std::string& dev_id) {
    DeviceInfo info;
    return activity_registry->info(dev_id, info).code() != RegistryErrc::not_found;
  });
  // Devices with downlinks held (admin_handler.hpp) whose frame was just accepted: sent to at
  // the batch's end, once its commit is done.
  std::set<std::string> deliver_to;
  // A message's final outcome: after its batch committed, or after it was handled again.
  auto on_settled = [&](const SettledMessage& m) {
    const HandleResult& r = m.result;
    record_result(*metrics_ptr, r, m.handling);
    if (r.ok() && r.frame) activity.seen(r.dev_id, m.now_ms);
    if (r.ok() && r.frame && r.frame->mode == Mode::dsekp && admin_ptr->holds(r.dev_id))
      deliver_to.insert(r.dev_id);
    if (r.cache_lookup != CacheLookup::none && cache_hits != nullptr)
      (r.cache_lookup == CacheLookup::hit ? cache_hits : cache_misses)->inc();
    if (r.processed() && r.established_delta != 0) {
      active_sessions = std::max<std::int64_t>(0, active_sessions + r.established_delta);
      metrics_ptr->set_active_sessions(static_cast<std::size_t>(active_sessions));
    }
    if (!r.ok()) rejections.log(r, m.topic, m.now_ms);
  };
  auto on_failed_attempt = [&](const SettledMessage& m) {
    record_failed_attempt(*metrics_ptr, m.result);
    rejections.log(m.result, m.topic, m.now_ms);
  };
  // After the burst's last message, before libmosquitto writes its PUBACKs.
  auto on_batch_end = [&] {
    batch_ptr->end();
    after_store_use();
    if (!deliver_to.empty()) {
      const std::uint64_t now_ms = unix_us_now() / 1000;
      for (const std::string& dev_id : deliver_to) admin_ptr->deliver(dev_id, now_ms);
      deliver_to.clear();
      after_store_use();
    }
    if (retention) {
      std::string why;
      if (retention->maybe_prune(unix_us_now() / 1000, why) < 0)
        logging::logger().error("{} (tried again in a minute)", why);
    }
    test_hold(o.test_hold_ms, "after");
  };
  mqtt_options.batch_max = o.batch_max;
  mqtt_options.maximum_packet_size = mqtt::kMaxMqttPacketSize;
  mqtt_options.fatal = fail_stop_process;
  mqtt_options.batch_time = std::chrono::milliseconds(o.batch_time_ms);
  // With a shared group every topic, the admin requests included, goes through the share: each
  // message reaches one edge of the group (an admin request sent by all would send the downlink
  // once per edge). The broker delivers a shared message under its own topic name, so the
  // service's topic dispatch is the same either way.
  const std::string share = shared_subscription_prefix(o);
  if (!share.empty() && mqtt_options.version == mqtt::MqttVersion::automatic) {
    mqtt_options.version = mqtt::MqttVersion::v5;
    logging::logger().info("--shared-group: MQTT 5 only (no fallback to 3.1.1)");
  }
  // The PSK baseline's topic only when it is on: otherwise its frames never reach the edge.
  // `dsekp edge send` requests (edge/admin/admin_protocol.hpp); the ACL limits them to the edge
  // account.
  const EdgeTopics topics(o.topic_prefix);
  const std::vector<std::string> filters = {topics.init(),
                                            topics.data(),
                                            topics.per_device_init_filter(),
                                            topics.per_device_data_filter(),
                                            topics.psk(),
                                            admin::request_topic(o.topic_prefix)};
  for (const std::string& filter : filters) {
    const bool used = filter != topics.psk() || o.psk_baseline;
    if (used) mqtt_options.subscriptions.push_back(share + filter);
    // The persistent session keeps what an earlier run of this client id subscribed to: the
    // plain filters of an edge that now shares (every message would come twice), the PSK topic
    // of one that served the baseline. A group left for another is not known here.
    if (!used) mqtt_options.stale_subscriptions.push_back(share + filter);
    if (!share.empty()) mqtt_options.stale_subscriptions.push_back(filter);
  }
  const ServiceManager service_manager;
  const std::string broker_name = o.broker_host + ":" + std::to_string(o.broker_port);
  mqtt::ReadyHandler on_ready = [&o, &service_manager, &broker_name] {
    if (!o.ready_file.empty()) write_ready_file(o.ready_file);
    service_manager.status("serving: subscribed on " + broker_name);
  };
  mqtt::MqttClient client(mqtt_options, on_message, on_ready, on_batch_end);
  std::unique_ptr<sinks::RepublishSink> republish;
  std::unique_ptr<PeriodicTask> availability_sweep;
  if (republished) {
    republish = std::make_unique<sinks::RepublishSink>(
        sinks::RepublishOptions{*republished, retain, o.home_assistant,
                                mqtt_options.availability.topic},
        [&client](const std::string& topic, const std::string& json, bool retain_this) {
          client.publish(topic,
                         ByteView(reinterpret_cast<const std::uint8_t*>(json.data()), json.size()),
                         1, retain_this);
        });
    sink.add(*republish);
    activity.publish_availability(
        std::uint64_t{o.device_offline_after_s} * 1000,
        [&client, topics = *republished, retain](const std::string& dev_id,
                                                 std::string_view payload) {
          if (payload.empty() && !retain) return;  // nothing retained to clear
          client.publish(
              topics.device_availability(dev_id),
              ByteView(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()), 1,
              retain);
        });
    std::vector<DeviceInfo> devices;
    if (const RegistryStatus s = registry->list(devices); !s.ok())
      throw std::runtime_error("registry " + o.registry_db + ": " + s.message());
    std::vector<std::string> dev_ids;
    for (const DeviceInfo& d : devices) dev_ids.push_back(d.dev_id);
    activity.expect(dev_ids, unix_us_now() / 1000);
    const auto period = std::chrono::milliseconds(
        std::clamp<std::uint64_t>(std::uint64_t{o.device_offline_after_s} * 250, 100, 5000));
    availability_sweep = std::make_unique<PeriodicTask>(
        period, [&activity] { activity.sweep(unix_us_now() / 1000); });
  }

  const std::string journal_path =
      o.downlink_journal.empty() ? state_path + ".downlinks" : o.downlink_journal;
  auto downlink_journal = DownlinkJournal::open(journal_path, error);
  if (downlink_journal == nullptr) throw std::runtime_error(error);

  OpenSslCrypto crypto;
  OpenSslRng rng;
  EdgeServiceConfig config;
  config.topic_prefix = o.topic_prefix;
  config.psk_enabled = o.psk_baseline;
  if (!parse_downlink_lane(o.downlink_lane, config.downlink_lane, error))
    throw std::runtime_error("--downlink-lane: " + error);
  if (!o.store.empty() && o.store != "sqlite" && config.downlink_lane.count == 1)
    logging::logger().warn(
        "a shared store and downlink lane 0/1: if several edges use this store, give each its "
        "own --downlink-lane K/N, or a store restored from an older copy can make two of them "
        "seal two downlinks under one nonce");
  apply_reloadable(o, config);
  EdgeService service(
      EdgeServiceParts{*registry, *store, *generations, sink, crypto, rng, downlink_journal.get()},
      config);
  MessageBatchOptions batch_options;
  batch_options.settled = on_settled;
  batch_options.failed_attempt = on_failed_attempt;
  MessageBatch batch(
      service, [&client](const Publish& p) { client.publish(p.topic, p.payload, p.qos); },
      batch_options);
  batch_ptr = &batch;
  admin::AdminKey admin_key{};
  if (const RegistryStatus s = registry->admin_key(admin_key); !s.ok())
    throw std::runtime_error("registry " + o.registry_db + ": " + s.message());
  AdminHandlerOptions admin_options;
  admin_options.topic_prefix = o.topic_prefix;
  admin_options.queue_ttl_ms = std::uint64_t{o.downlink_queue_ttl_s} * 1000;
  admin_options.known = [&registry](const std::string& dev_id) {
    DeviceInfo info;
    return registry->info(dev_id, info).code() != RegistryErrc::not_found;
  };
  admin_options.online = [&activity, &o](const std::string& dev_id, std::uint64_t now_ms) {
    return activity.online(dev_id, now_ms, std::uint64_t{o.device_offline_after_s} * 1000);
  };
  AdminHandler admin_handler(service, admin_key, std::move(admin_options),
                             [&client](const std::string& t, ByteView p, ByteView correlation) {
                               client.publish(t, p, 1, false, correlation);
                             });
  secure_wipe(admin_key);  // the handler keeps its own copy
  admin_handler.set_before_seal([&batch] { batch.end(); });
  admin_ptr = &admin_handler;
  // Held downlinks whose time is up are answered "expired" (admin_handler.hpp).
  const PeriodicTask downlink_expiry(
      std::chrono::seconds(1), [&admin_handler] { admin_handler.expire(unix_us_now() / 1000); });

  metrics::Registry metric_registry;
  metrics::EdgeMetrics edge_metrics = metrics::declare_edge_metrics(metric_registry);
  metrics_ptr = &edge_metrics;
  edge_metrics.set_active_sessions(static_cast<std::size_t>(active_sessions));
  store_up_gauge =
      &metric_registry
           .add_gauge({"dsekp_store_up",
                       "1 while the session store is reachable (always 1 for the local SQLite "
                       "store); 0 while the edge pauses, accepting nothing.",
                       {},
                       {}})
           .get();
  store_up_gauge->set(1);
  store_round_trips = &metric_registry
                           .add_counter({"dsekp_store_round_trips_total",
                                         "Network round trips to the shared session store (0 "
                                         "for the local SQLite store).",
                                         {},
                                         {}})
                           .get();
  auto& cache_lookups = metric_registry.add_counter(
      {"dsekp_session_cache_lookups_total",
       "DATA frames by whether their session keys were in this edge's session-key cache (Redis "
       "store; a miss costs a state read; none for the SQLite store).",
       {"result"},
       {{"hit"}, {"miss"}}});
  cache_hits = &cache_lookups.at({"hit"});
  cache_misses = &cache_lookups.at({"miss"});
  cache_devices = &metric_registry
                       .add_gauge({"dsekp_session_cache_devices",
                                   "Devices whose session keys this edge holds (Redis store; "
                                   "at most --session-cache-devices).",
                                   {},
                                   {}})
                       .get();
  // Declared after the registry and store_health, which its thread uses: destroyed before them.
  std::unique_ptr<redis::RedisProbe> redis_probe;
  if (redis_store) {
    redis_probe = std::make_unique<redis::RedisProbe>(
        redis_endpoint, std::chrono::milliseconds(500),
        [&store_health, store_up_gauge](bool) { store_up_gauge->set(store_health.up() ? 1 : 0); });
    store_health.probe = redis_probe.get();
  }
  declare_operational_metrics(
      metric_registry, [&client] { return client.connected(); }, activity);
  const auto metrics_server = start_metrics(o.metrics, metric_registry, client, store_health);

  if (!client.start(error)) throw std::runtime_error("MQTT: " + error);
  logging::logger().info("registry {}, state {}, store {}, broker {}:{}{}", o.registry_db,
                         state_path, redis_store ? o.store : std::string("sqlite"), o.broker_host,
                         o.broker_port,
                         share.empty() ? std::string() : ", shared group " + o.shared_group);

  service_manager.ready("connecting to " + broker_name);

  // The main thread waits for signals; under a systemd watchdog it wakes every half interval to
  // tell systemd the loop thread is alive.
  const auto wait_for_signal = [&](int& sig) {
    const std::chrono::milliseconds period = service_manager.check_period();
    if (period.count() == 0) return sigwait(&signals, &sig) == 0;
    const timespec timeout{static_cast<time_t>(period.count() / 1000),
                           static_cast<long>(period.count() % 1000) * 1000000L};
    while (true) {
      service_manager.keep_alive(client.loop_stalled_for(), store_health.waiting.load());
      sig = sigtimedwait(&signals, nullptr, &timeout);
      if (sig > 0) return true;
      if (errno != EAGAIN && errno != EINTR) return false;
    }
  };
  int sig = 0;
  while (wait_for_signal(sig) && sig == SIGHUP) {
    if (csv) csv->reopen();
    if (!o.reload) {
      logging::logger().info("SIGHUP: CSV logs reopen with the next row");
      continue;
    }
    service_manager.reloading();
    try {
      EdgeDaemonOptions n = o.reload();
      if (n.topic_prefix.empty()) n.topic_prefix = o.topic_prefix;  // the registry's, as above
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
      service_manager.reloaded("reloaded; broker " + broker_name);
    } catch (const std::exception& e) {
      logging::logger().error("SIGHUP: reload failed, keeping the running options: {}", e.what());
      service_manager.reloaded("reload failed, running with the previous options; broker " +
                               broker_name);
    }
  }
  logging::logger().info("signal {}, stopping", sig);
  service_manager.stopping();
  stopping = true;  // ends a fail-closed pause, so the loop thread can be joined
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
