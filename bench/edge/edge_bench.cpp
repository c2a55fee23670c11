// run_edge_bench (see edge_bench.hpp).
#include "bench/edge/edge_bench.hpp"

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/bench_device.hpp"
#include "bench/cpu_timer.hpp"
#include "bench/edge/bench_mqtt_client.hpp"
#include "bench/edge/bench_process.hpp"
#include "bench/work_dir.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "edge/daemon/broker_options.hpp"
#include "edge/daemon/edge_daemon.hpp"
#include "edge/daemon/unix_clock.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/mqtt/mqtt_options.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::bench::edge {
namespace {

using ::dsekp::edge::DeviceMaterial;
using ::dsekp::edge::DeviceRegistry;
using ::dsekp::edge::OpenMode;
using ::dsekp::edge::daemon::unix_ms_now;
using Clock = std::chrono::steady_clock;

// The clock the edge stamps its rows with (recvts_us), which the drains are timed against.
std::int64_t unix_us() {
  return static_cast<std::int64_t>(::dsekp::edge::daemon::unix_us_now());
}

// Reads the edge's telemetry table while it runs (WAL: readers do not block its commits).
class TelemetryReader {
 public:
  explicit TelemetryReader(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "SELECT count(*) FROM telemetry WHERE mode = ?1", -1, &count_,
                           nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "SELECT coalesce(max(rowid), 0) FROM telemetry", -1, &last_,
                           nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_,
                           "SELECT min(recvts_us) FROM telemetry WHERE mode = ?1 AND "
                           "recvts_us >= ?2",
                           -1, &first_, nullptr) != SQLITE_OK)
      throw std::runtime_error("cannot read " + path + ": " + sqlite3_errmsg(db_));
  }
  ~TelemetryReader() {
    sqlite3_finalize(count_);
    sqlite3_finalize(last_);
    sqlite3_finalize(first_);
    sqlite3_close(db_);
  }
  TelemetryReader(const TelemetryReader&) = delete;
  TelemetryReader& operator=(const TelemetryReader&) = delete;

  std::int64_t count(const char* mode) {
    sqlite3_bind_text(count_, 1, mode, -1, SQLITE_STATIC);
    std::int64_t n = -1;
    if (sqlite3_step(count_) == SQLITE_ROW) n = sqlite3_column_int64(count_, 0);
    sqlite3_reset(count_);
    return n;
  }
  /// The newest row's rowid: a probe that costs a few µs however large the table (count(*)
  /// reads all of it, and polling that would take a core from the edge). The edge only appends.
  std::int64_t last_rowid() {
    std::int64_t id = -1;
    if (sqlite3_step(last_) == SQLITE_ROW) id = sqlite3_column_int64(last_, 0);
    sqlite3_reset(last_);
    return id;
  }
  /// The earliest recvts_us of the mode's rows received at or after `since_us`; 0 if none.
  std::int64_t first_received_us(const char* mode, std::int64_t since_us) {
    sqlite3_bind_text(first_, 1, mode, -1, SQLITE_STATIC);
    sqlite3_bind_int64(first_, 2, since_us);
    std::int64_t us = 0;
    if (sqlite3_step(first_) == SQLITE_ROW) us = sqlite3_column_int64(first_, 0);
    sqlite3_reset(first_);
    return us;
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* count_ = nullptr;
  sqlite3_stmt* last_ = nullptr;
  sqlite3_stmt* first_ = nullptr;
};

}  // namespace

void finish_drain(DrainFigures& r, const ProcessCost& cost) {
  r.complete = r.delivered == r.messages;
  r.rate = r.complete && r.seconds > 0 ? static_cast<double>(r.delivered) / r.seconds : 0;
  r.cpu_s = cost.cpu_s();
  if (r.messages == 0) return;
  const auto per_frame = [&r](double total) { return total / static_cast<double>(r.messages); };
  r.cpu_us_per_frame = per_frame(r.cpu_s) * 1e6;
  r.user_us_per_frame = per_frame(cost.user_s) * 1e6;
  r.system_us_per_frame = per_frame(cost.system_s) * 1e6;
  r.reads_per_frame = per_frame(static_cast<double>(cost.read_calls));
  r.writes_per_frame = per_frame(static_cast<double>(cost.write_calls));
}

namespace {

// Publishes not yet acknowledged at most while queuing: libmosquitto looks through its whole
// outgoing list for each PUBACK, so handing it a backlog at once costs time quadratic in the
// backlog (about three minutes of the bench's own CPU for 60,000 frames).
constexpr std::size_t kQueueWindow = 1'000;

// Queues every frame on `topic` (QoS 1), then waits until the broker acknowledged all of them.
void queue_all(BenchMqttClient& publisher, std::size_t& acked, const std::string& topic,
               const std::vector<Frame>& frames, std::chrono::milliseconds timeout) {
  const auto wait_for_acks = [&] {
    if (!publisher.wait_acked(acked, timeout))
      throw std::runtime_error("the broker did not acknowledge every publish");
  };
  const std::size_t start = acked;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (i >= kQueueWindow) {
      acked = start + i - kQueueWindow + 1;
      wait_for_acks();
    }
    if (!publisher.publish(topic, frames[i]))
      throw std::runtime_error("publish refused by libmosquitto");
  }
  acked = start + frames.size();
  wait_for_acks();
}

// The broker's ceiling: the edge's own MQTT client (the one the drains' edge runs on) with a
// handler that only counts.
class LightSubscriber {
 public:
  LightSubscriber(std::string client, const std::string& host, int port, std::size_t batch_max,
                  const std::string& topic)
      : client_(std::move(client)) {
    options_.host = host;
    options_.port = static_cast<std::uint16_t>(port);
    options_.client_id = "dsekp-bench-light-subscriber";
    options_.subscriptions = {topic};
    options_.batch_max = batch_max;
    options_.reconnect_max_s = 1;
    options_.allow_unverified_library = true;  // it acknowledges at once and stores nothing
  }
  /// Connects, subscribes (the persistent session is created) and disconnects.
  void create_session(std::chrono::milliseconds timeout) {
    std::atomic<bool> ready{false};
    ::dsekp::edge::transport::TransportHandlers handlers;
    handlers.message = [](std::string_view, ByteView,
                          const ::dsekp::edge::transport::MessageProperties&) {
      return ::dsekp::edge::transport::BurstWait::may_wait;
    };
    handlers.ready = [&ready] { ready = true; };
    const auto client = ::dsekp::edge::daemon::make_mqtt_client(client_, options_);
    std::string error;
    if (!client->start(std::move(handlers), error))
      throw std::runtime_error("light subscriber: " + error);
    wait_until([&] { return ready.load(); }, timeout, "the light subscriber's SUBACK");
    client->stop();
  }
  /// Drains the `expected` messages queued in its session.
  DrainFigures drain(std::size_t expected, std::chrono::milliseconds timeout) {
    std::atomic<std::size_t> received{0};
    std::atomic<std::int64_t> first_us{0};
    std::atomic<std::int64_t> last_us{0};
    DrainFigures r;
    r.messages = expected;
    const ProcessCost before = own_cost();
    {
      ::dsekp::edge::transport::TransportHandlers handlers;
      handlers.message = [&](std::string_view, ByteView,
                             const ::dsekp::edge::transport::MessageProperties&) {
        const std::int64_t now = unix_us();
        if (received.fetch_add(1) == 0) first_us = now;
        last_us = now;
        return ::dsekp::edge::transport::BurstWait::may_wait;
      };
      const auto client = ::dsekp::edge::daemon::make_mqtt_client(client_, options_);
      std::string error;
      if (!client->start(std::move(handlers), error))
        throw std::runtime_error("light subscriber: " + error);
      wait_until([&] { return received.load() >= expected; }, timeout, "the light drain");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // anything beyond N
      client->stop();
    }
    const ProcessCost cost = own_cost().minus(before);
    r.delivered = received.load();
    r.seconds = static_cast<double>(last_us.load() - first_us.load()) / 1e6;
    finish_drain(r, cost);
    return r;
  }

 private:
  template <typename Done>
  static void wait_until(Done done, std::chrono::milliseconds timeout, const char* what) {
    const auto deadline = Clock::now() + timeout;
    while (!done()) {
      if (Clock::now() > deadline) throw std::runtime_error(std::string("timeout: ") + what);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::string client_;
  ::dsekp::edge::mqtt::MqttOptions options_;
};

// Starts and stops the edge; its CPU and the drains' figures.
class EdgeRunner {
 public:
  EdgeRunner(std::vector<std::string> argv, const std::vector<std::string>& drain_wrapper,
             std::string dir)
      : argv_(argv), dir_(std::move(dir)) {
    drain_argv_ = drain_wrapper;
    drain_argv_.insert(drain_argv_.end(), argv.begin(), argv.end());
  }

  /// Starts the edge and waits for its ready file.
  BenchProcess start() const {
    const std::string ready = dir_ + "/edge.ready";
    std::filesystem::remove(ready);
    BenchProcess edge(argv_, dir_ + "/edge.log");
    for (const auto deadline = Clock::now() + std::chrono::seconds(15);
         !std::filesystem::exists(ready);) {
      if (Clock::now() > deadline || !edge.running())
        throw std::runtime_error("the edge did not become ready (see " + dir_ + "/edge.log)");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return edge;
  }
  static ProcessCost stop(BenchProcess& edge, const std::string& dir, bool any_status = false) {
    ProcessCost cost;
    if (const int code = edge.stop(std::chrono::seconds(30), &cost); code != 0 && !any_status)
      throw std::runtime_error("the edge exited with " + std::to_string(code) + " (see " + dir +
                               "/edge.log)");
    return cost;
  }
  /// The cost of an edge started (until ready) and stopped with nothing queued.
  ProcessCost idle_cost() const {
    BenchProcess edge = start();
    return stop(edge, dir_);
  }
  /// Starts the edge on `expected` queued frames of `mode` and stops it once they are stored.
  DrainFigures drain(TelemetryReader& telemetry, const char* mode, std::size_t expected,
                     const ProcessCost& idle, std::chrono::milliseconds timeout) const {
    DrainFigures r;
    r.messages = expected;
    const std::int64_t before = telemetry.count(mode);
    const std::int64_t target = telemetry.last_rowid() + static_cast<std::int64_t>(expected);
    const std::int64_t started_us = unix_us();
    BenchProcess edge(drain_argv_, dir_ + "/edge.log");
    std::int64_t stored_us = 0;
    for (const auto deadline = Clock::now() + timeout; telemetry.last_rowid() < target;) {
      if (Clock::now() > deadline || !edge.running()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    stored_us = unix_us();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // anything beyond N
    // A wrapper (a profiler) may end with the SIGTERM's status.
    const ProcessCost cost = stop(edge, dir_, wrapped()).minus(idle);
    r.delivered = static_cast<std::size_t>(telemetry.count(mode) - before);
    const std::int64_t first_us = telemetry.first_received_us(mode, started_us);
    r.seconds = first_us > 0 ? static_cast<double>(stored_us - first_us) / 1e6 : 0;
    finish_drain(r, cost);
    if (wrapped()) {
      r.system_calls_counted = false;
      r.reads_per_frame = r.writes_per_frame = 0;
    }
    return r;
  }

 private:
  // Whether the drains run under a --drain-wrapper (a profiler).
  [[nodiscard]] bool wrapped() const noexcept { return drain_argv_.size() > argv_.size(); }

  std::vector<std::string> argv_;
  std::vector<std::string> drain_argv_;
  std::string dir_;
};

// The round whose CPU per frame is the median of the rounds' (the upper one of an even count).
DrainFigures median_round(std::vector<DrainFigures> rounds) {
  std::sort(rounds.begin(), rounds.end(), [](const DrainFigures& a, const DrainFigures& b) {
    return a.cpu_us_per_frame < b.cpu_us_per_frame;
  });
  return rounds[rounds.size() / 2];
}

double mean_size(const std::vector<Frame>& frames) {
  double total = 0;
  for (const Frame& f : frames) total += static_cast<double>(f.size());
  return frames.empty() ? 0 : total / static_cast<double>(frames.size());
}

}  // namespace

EdgeBenchResult run_edge_bench(const EdgeBenchOptions& o) {
  if (o.count == 0 || o.devices == 0 || o.devices > o.count)
    throw std::runtime_error("--count and --devices: 1 <= devices <= count");
  EdgeBenchResult result;
  result.mqtt_client = o.mqtt_client.empty()
                           ? ::dsekp::edge::daemon::EdgeDaemonOptions{}.mqtt_client
                           : o.mqtt_client;
  result.cpus = std::thread::hardware_concurrency();
  getloadavg(result.load_before, 3);
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));

  const WorkDir work("dsekp-bench-edge-", o.keep_dir);
  const std::string& dir = work.path();
  if (o.keep_dir) result.work_dir = dir;

  BenchBroker broker(o.mosquitto, dir);
  const std::string host = "127.0.0.1";

  // The registry: the devices the frames come from.
  const std::string registry_path = dir + "/registry.db";
  std::vector<DeviceMaterial> materials(o.devices);
  {
    std::unique_ptr<DeviceRegistry> registry;
    if (const auto s = DeviceRegistry::open(registry_path, OpenMode::create_if_missing, registry);
        !s.ok())
      throw std::runtime_error("registry: " + s.message());
    for (std::size_t d = 0; d < o.devices; ++d)
      if (const auto s = registry->add("bench-" + std::to_string(d), materials[d]); !s.ok())
        throw std::runtime_error("registry: " + s.message());
  }

  std::vector<std::string> edge_argv = {o.dsekp_exe,
                                        "edge",
                                        "--broker",
                                        host + ":" + std::to_string(broker.port()),
                                        "--db",
                                        registry_path,
                                        "--logs-dir",
                                        dir + "/logs",
                                        "--metrics",
                                        "off",
                                        "--ready-file",
                                        dir + "/edge.ready",
                                        "--psk-baseline",
                                        "--client-id",
                                        "dsekp-bench-edge",
                                        "--mqtt-client",
                                        result.mqtt_client};
  if (!o.csv) edge_argv.push_back("--no-csv");
  if (o.batch_max > 0)
    edge_argv.insert(edge_argv.end(), {"--batch-max", std::to_string(o.batch_max)});
  if (o.batch_wait_ms)
    edge_argv.insert(edge_argv.end(), {"--batch-wait-ms", std::to_string(*o.batch_wait_ms)});
  const EdgeRunner runner(edge_argv, o.drain_wrapper, dir);

  // Handshakes through the edge, one per device; the edge's persistent session now exists.
  OpenSslCrypto crypto;
  OpenSslRng rng;
  std::vector<std::unique_ptr<BenchDevice>> devices;
  BenchMqttClient publisher("dsekp-bench-devices");
  std::string error;
  if (!publisher.connect(host, broker.port(), error)) throw std::runtime_error(error);
  if (!publisher.subscribe("dsekp/init/ack/#")) throw std::runtime_error("no SUBACK");
  std::size_t acked = 0;
  const Encoding enc = o.compact ? Encoding::compact : Encoding::json;
  {
    BenchProcess edge = runner.start();
    for (std::size_t d = 0; d < o.devices; ++d) {
      devices.push_back(std::make_unique<BenchDevice>(crypto, materials[d]));
      DeviceSession& s = devices.back()->session;
      InitFrame init;
      if (s.start_handshake(static_cast<std::uint32_t>(unix_ms_now() / 1000), rng, init) !=
              Error::ok ||
          s.note_init_sent(unix_ms_now(), rng) != Error::ok)
        throw std::runtime_error("cannot start a handshake");
      if (!publisher.publish("dsekp/init", encode_frame(init, enc)))
        throw std::runtime_error("cannot publish an INIT");
      ++acked;
      const auto ack_bytes = publisher.wait_message(
          "dsekp/init/ack/" + std::string(materials[d].credentials.dev_id.str()),
          std::chrono::seconds(10));
      AckFrame ack;
      if (!ack_bytes ||
          decode_ack(ByteView(ack_bytes->data(), ack_bytes->size()), ack) != Error::ok ||
          s.handle_ack(ack) != Error::ok)
        throw std::runtime_error("handshake of device " + std::to_string(d) + " failed (see " +
                                 dir + "/edge.log)");
    }
    (void)EdgeRunner::stop(edge, dir);
  }

  // Every round's frames sealed and encoded before it: distinct readings, round-robin over the
  // devices, each device's frames in sequence (its session's seqs go on from round to round).
  std::vector<Frame> dsekp_frames;
  std::vector<Frame> psk_frames;
  const std::uint64_t sendts = unix_ms_now();
  const auto seal_round = [&](std::size_t round) {
    dsekp_frames.clear();
    psk_frames.clear();
    seal_frames(devices, crypto, rng, round * o.count, o.count, sendts, enc, dsekp_frames,
                psk_frames);
  };

  seal_round(0);
  result.dsekp_frame_bytes = mean_size(dsekp_frames);
  result.psk_frame_bytes = mean_size(psk_frames);

  // The edge's batch size, which the ceiling's subscribers take too.
  const std::size_t batch_max =
      o.batch_max > 0 ? o.batch_max : ::dsekp::edge::daemon::EdgeDaemonOptions{}.batch_max;
  // The broker's ceiling first (the same DSEKP bytes on a topic of their own), drained by a light
  // subscriber on each client. Their connection notices would interleave with the report.
  ::dsekp::edge::logging::set_level(::dsekp::edge::logging::LogLevel::warn);
  const auto light_drain = [&](const std::string& client, const std::string& topic) {
    LightSubscriber light(client, host, broker.port(), batch_max, topic);
    light.create_session(timeout);
    queue_all(publisher, acked, topic, dsekp_frames, timeout);
    return light.drain(dsekp_frames.size(), timeout);
  };
  result.broker = light_drain("libmosquitto", "bench/light");
  result.broker_builtin = light_drain("builtin", "bench/light-builtin");
  result.broker_ceiling_rate = std::max(result.broker.rate, result.broker_builtin.rate);
  const ProcessCost idle = runner.idle_cost();
  result.idle_edge_cpu_s = idle.cpu_s();
  TelemetryReader telemetry(registry_path + ".state");
  std::vector<double> over_psk;
  const std::size_t rounds = std::max<std::size_t>(o.rounds, 1);
  for (std::size_t round = 0; round < rounds; ++round) {
    if (round > 0) seal_round(round);
    const auto drain_dsekp = [&] {
      queue_all(publisher, acked, "dsekp/data", dsekp_frames, timeout);
      result.dsekp_rounds.push_back(runner.drain(telemetry, "dsekp", o.count, idle, timeout));
    };
    const auto drain_psk = [&] {
      queue_all(publisher, acked, "psk/data", psk_frames, timeout);
      result.psk_rounds.push_back(runner.drain(telemetry, "psk", o.count, idle, timeout));
    };
    if (round % 2 == 0) {
      drain_dsekp();
      drain_psk();
    } else {
      drain_psk();
      drain_dsekp();
    }
    if (result.psk_rounds.back().cpu_us_per_frame > 0)
      over_psk.push_back(result.dsekp_rounds.back().cpu_us_per_frame /
                         result.psk_rounds.back().cpu_us_per_frame);
  }
  result.dsekp = median_round(result.dsekp_rounds);
  result.psk = median_round(result.psk_rounds);

  if (result.broker_ceiling_rate > 0) {
    result.ratio_dsekp = result.dsekp.rate / result.broker_ceiling_rate;
    result.ratio_psk = result.psk.rate / result.broker_ceiling_rate;
  }
  if (!over_psk.empty()) result.cpu_dsekp_over_psk = median_of(over_psk);
  bool complete = result.broker.complete && result.broker_builtin.complete;
  for (const auto* mode : {&result.dsekp_rounds, &result.psk_rounds})
    for (const DrainFigures& f : *mode) complete = complete && f.complete;
  result.complete = complete;
  result.cpu_target_met =
      complete && result.dsekp.cpu_us_per_frame <= EdgeBenchResult::kTargetCpuUs;
  result.over_psk_target_met =
      complete && result.cpu_dsekp_over_psk <= EdgeBenchResult::kTargetOverPsk;
  result.ratio_target_met = complete && result.ratio_dsekp >= EdgeBenchResult::kTargetRatio;
  getloadavg(result.load_after, 3);
  return result;
}

}  // namespace dsekp::bench::edge
