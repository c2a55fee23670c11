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
#include <memory>
#include <optional>
#include <stdexcept>

#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/admin/admin_protocol.hpp"
#include "edge/daemon/admin_handler.hpp"
#include "edge/daemon/broker_options.hpp"
#include "edge/daemon/burst_pipeline.hpp"
#include "edge/daemon/device_activity.hpp"
#include "edge/daemon/edge_storage.hpp"
#include "edge/daemon/operational_metrics.hpp"
#include "edge/daemon/periodic_task.hpp"
#include "edge/daemon/rejection_log.hpp"
#include "edge/daemon/reloadable_options.hpp"
#include "edge/daemon/republishing.hpp"
#include "edge/daemon/secret_eraser.hpp"
#include "edge/daemon/service_manager.hpp"
#include "edge/daemon/store_watch.hpp"
#include "edge/daemon/unix_clock.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/metrics/edge_metrics.hpp"
#include "edge/metrics/metrics_server.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/republish_topics.hpp"
#include "edge/service/edge_service.hpp"
#include "edge/transport/transport.hpp"

namespace dsekp::edge::daemon {
namespace {

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
                                                      const transport::Transport& client,
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

// The service's settings from the options (the reloadable ones through apply_reloadable, which
// SIGHUP applies again).
EdgeServiceConfig service_config(const EdgeDaemonOptions& o) {
  EdgeServiceConfig config;
  config.topic_prefix = o.topic_prefix;
  config.psk_enabled = o.psk_baseline;
  std::string error;
  if (!parse_downlink_lane(o.downlink_lane, config.downlink_lane, error))
    throw std::runtime_error("--downlink-lane: " + error);
  if (!o.store.empty() && o.store != "sqlite" && config.downlink_lane.count == 1)
    logging::logger().warn(
        "a shared store and downlink lane 0/1: if several edges use this store, give each its "
        "own --downlink-lane K/N, or a store restored from an older copy can make two of them "
        "seal two downlinks under one nonce");
  apply_reloadable(o, config);
  return config;
}

// The admin topic's handler (`dsekp edge send`), under the registry's admin key; it holds
// downlinks for devices `activity` does not see online.
std::unique_ptr<AdminHandler> make_admin_handler(const EdgeDaemonOptions& o,
                                                 DeviceRegistry& registry, EdgeService& service,
                                                 DeviceActivity& activity,
                                                 transport::Transport& transport) {
  admin::AdminKey admin_key{};
  if (const RegistryStatus s = registry.admin_key(admin_key); !s.ok())
    throw std::runtime_error("registry " + o.registry_db + ": " + s.message());
  AdminHandlerOptions admin_options;
  admin_options.topic_prefix = o.topic_prefix;
  admin_options.queue_ttl_ms = std::uint64_t{o.downlink_queue_ttl_s} * 1000;
  admin_options.known = [&registry](const std::string& dev_id) {
    DeviceInfo info;
    return registry.info(dev_id, info).code() != RegistryErrc::not_found;
  };
  const std::uint64_t offline_after_ms = std::uint64_t{o.device_offline_after_s} * 1000;
  admin_options.online = [&activity, offline_after_ms](const std::string& dev_id,
                                                       std::uint64_t now_ms) {
    return activity.online(dev_id, now_ms, offline_after_ms);
  };
  auto handler = std::make_unique<AdminHandler>(
      service, admin_key, std::move(admin_options),
      [&transport](const std::string& t, ByteView p, ByteView correlation) {
        transport.publish(t, p, 1, false, correlation);
      });
  secure_wipe(admin_key);  // the handler keeps its own copy
  return handler;
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
  // Every option checked before the storage changes anything (its recovery and retention
  // write): a start that is refused leaves the files as they were.
  const std::optional<RepublishTopics> republished = republish_topics(o);
  const mqtt::MqttOptions mqtt_options = broker_options(o, *registry, republished);
  std::string error;
  EdgeStorage storage(o);
  RedisSessionStore* const redis_store = storage.shared();
  // Declared before everything that updates them (the store metrics with the fail-closed
  // pause), so destroyed after them; the metrics server that reads them all, and the
  // operational metrics' callbacks into the client, is declared last and stopped first.
  std::atomic<bool> stopping{false};
  metrics::Registry metric_registry;
  metrics::EdgeMetrics edge_metrics = metrics::declare_edge_metrics(metric_registry);
  StoreWatch store_watch(metric_registry, redis_store, storage.shared_target(), stopping);
  RejectionLog rejections(o.rejection_lines_per_second);
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
  // Ratcheting devices whose state went past their provisioned secret: erased from the
  // registry at the burst's end, once the commit is durable.
  SecretEraser secret_eraser(o.registry_db, storage.sessions());
  const ServiceManager service_manager;
  const std::string broker_name = o.amqp_nodes.empty()
                                      ? o.broker_host + ":" + std::to_string(o.broker_port)
                                      : "AMQP " + o.amqp_nodes;
  transport::ReadyHandler on_ready = [&o, &service_manager, &broker_name] {
    if (!o.ready_file.empty()) write_ready_file(o.ready_file);
    service_manager.status("serving: subscribed on " + broker_name);
  };
  // dsekp_active_sessions starts from the store's count (the pipeline follows it from there);
  // counted before anything is written, so a store that cannot count refuses the start cleanly.
  const std::uint64_t active_sessions = storage.count_local_sessions();
  // The broker: created before the sinks that publish through it, started last, once there is a
  // pipeline to handle what it delivers.
  const std::unique_ptr<transport::Transport> broker = make_transport(o, mqtt_options);
  transport::Transport& client = *broker;
  std::optional<Republishing> republishing;
  if (republished)
    republishing.emplace(o, *republished, mqtt_options.availability.topic, client, storage,
                         activity, *registry);

  const std::string journal_path =
      o.downlink_journal.empty() ? storage.state_path() + ".downlinks" : o.downlink_journal;
  auto downlink_journal = DownlinkJournal::open(journal_path, error);
  if (downlink_journal == nullptr) throw std::runtime_error(error);

  OpenSslCrypto crypto;
  OpenSslRng rng;
  EdgeServiceConfig config = service_config(o);
  EdgeService service(EdgeServiceParts{*registry, storage.sessions(), storage.generations(),
                                       storage.sink(), crypto, rng, downlink_journal.get()},
                      config);
  const std::unique_ptr<AdminHandler> admin_handler =
      make_admin_handler(o, *registry, service, activity, client);
  BurstPipeline pipeline({.service = service,
                          .transport = client,
                          .admin = *admin_handler,
                          .storage = storage,
                          .store_watch = store_watch,
                          .metrics = edge_metrics,
                          .activity = activity,
                          .secret_eraser = secret_eraser,
                          .rejections = rejections,
                          .test_hold_ms = o.test_hold_ms,
                          .active_sessions = active_sessions});
  // The loop thread calls into everything declared above: on every way out of this function,
  // an exception included, it is joined before any of it is destroyed.
  struct StopTransport {
    transport::Transport& transport;
    ~StopTransport() { transport.stop(); }
  } const stop_transport{client};
  // Held downlinks whose time is up are answered "expired" (admin_handler.hpp).
  const PeriodicTask downlink_expiry(std::chrono::seconds(1),
                                     [&admin_handler] { admin_handler->expire(unix_ms_now()); });

  declare_operational_metrics(
      metric_registry, [&client] { return client.connected(); }, activity);
  const auto metrics_server =
      start_metrics(o.metrics, metric_registry, client, store_watch.health());

  if (!client.start(pipeline.handlers(on_ready), error)) throw std::runtime_error("MQTT: " + error);
  logging::logger().info(
      "registry {}, state {}, store {}, broker {}{}", o.registry_db, storage.state_path(),
      redis_store ? o.store : std::string("sqlite"), broker_name,
      o.shared_group.empty() ? std::string() : ", shared group " + o.shared_group);

  service_manager.ready("connecting to " + broker_name);

  // The main thread waits for signals; under a systemd watchdog it wakes every half interval to
  // tell systemd the loop thread is alive.
  const auto wait_for_signal = [&](int& sig) {
    const std::chrono::milliseconds period = service_manager.check_period();
    if (period.count() == 0) return sigwait(&signals, &sig) == 0;
    const timespec timeout{static_cast<time_t>(period.count() / 1000),
                           static_cast<long>(period.count() % 1000) * 1000000L};
    while (true) {
      service_manager.keep_alive(client.loop_stalled_for(), store_watch.health().waiting.load());
      sig = sigtimedwait(&signals, nullptr, &timeout);
      if (sig > 0) return true;
      if (errno != EAGAIN && errno != EINTR) return false;
    }
  };
  int sig = 0;
  while (wait_for_signal(sig) && sig == SIGHUP) {
    if (storage.csv() != nullptr) storage.csv()->reopen();
    if (!o.reload) {
      logging::logger().info("SIGHUP: CSV logs reopen once the next batch has ended");
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
          "ratchet_lookahead {}, rejection_lines_per_second {}, log_level {}); CSV logs reopen "
          "once the next batch has ended",
          n.max_skew_s, n.init_burst, n.init_refill_ms, n.replay_window, n.ratchet_lookahead,
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
  return 0;
}

}  // namespace dsekp::edge::daemon
