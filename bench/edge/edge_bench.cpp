// run_edge_bench (see edge_bench.hpp).
#include "bench/edge/edge_bench.hpp"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/edge/bench_mqtt_client.hpp"
#include "bench/edge/bench_process.hpp"
#include "bench/metrics_scrape.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/psk_baseline.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::bench::edge {
namespace {

using ::dsekp::edge::DeviceMaterial;
using ::dsekp::edge::DeviceRegistry;
using ::dsekp::edge::OpenMode;
using Clock = std::chrono::steady_clock;
using Frame = std::vector<std::uint8_t>;

std::uint64_t unix_ms() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

template <typename F>
Frame encode_frame(const F& frame, Encoding enc) {
  Frame wire(kMaxFrameSize);
  std::size_t n = 0;
  if (encode(frame, enc, wire, n) != Error::ok) throw std::runtime_error("cannot encode a frame");
  wire.resize(n);
  return wire;
}

ByteView view(const std::string& s) {
  return ByteView(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

// A device of the benchmark: its session with the edge and its PSK key.
struct BenchDevice {
  BenchDevice(CryptoBackend& crypto, const DeviceMaterial& m)
      : psk_key(m.credentials.psk_key.clone()), session(crypto, credentials_of(m)) {}
  static DeviceCredentials credentials_of(const DeviceMaterial& m) {
    DeviceCredentials c;
    c.dev_id = m.credentials.dev_id;
    c.dev_secret = m.credentials.dev_secret.clone();
    c.edge_salt = m.edge_salt;
    return c;
  }
  PskKey psk_key;
  DeviceSession session;
};

// The number of telemetry rows of one mode, read from the edge's state database while it runs
// (WAL: readers do not block the edge's commits).
class TelemetryCounter {
 public:
  TelemetryCounter(const std::string& path, const char* mode) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "SELECT count(*) FROM telemetry WHERE mode = ?1", -1, &stmt_,
                           nullptr) != SQLITE_OK)
      throw std::runtime_error("cannot read " + path + ": " + sqlite3_errmsg(db_));
    sqlite3_bind_text(stmt_, 1, mode, -1, SQLITE_STATIC);
  }
  ~TelemetryCounter() {
    sqlite3_finalize(stmt_);
    sqlite3_close(db_);
  }
  std::int64_t count() {
    std::int64_t n = -1;
    if (sqlite3_step(stmt_) == SQLITE_ROW) n = sqlite3_column_int64(stmt_, 0);
    sqlite3_reset(stmt_);
    return n;
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

struct ProcessingTotals {
  double seconds = 0;
  double frames = 0;
};

// Zeros if the edge does not answer (the bench then reports no processing time).
ProcessingTotals processing_totals(int metrics_port) {
  const std::string text = scrape_metrics(metrics_port).value_or("");
  return {metric_value(text, "dsekp_frame_processing_seconds_sum").value_or(0),
          metric_value(text, "dsekp_frame_processing_seconds_count").value_or(0)};
}

void finish(RunFigures& r, Clock::time_point start, Clock::time_point end) {
  r.seconds = std::chrono::duration<double>(end - start).count();
  r.complete = r.delivered == r.messages;
  r.rate = r.complete && r.seconds > 0 ? static_cast<double>(r.delivered) / r.seconds : 0;
}

// Publishes every frame on `topic`, then waits until all were acknowledged by the broker.
void publish_all(BenchMqttClient& publisher, const std::string& topic,
                 const std::vector<Frame>& frames, std::size_t acked_before,
                 std::chrono::milliseconds timeout) {
  for (const Frame& f : frames)
    if (!publisher.publish(topic, f)) throw std::runtime_error("publish refused by libmosquitto");
  if (!publisher.wait_acked(acked_before + frames.size(), timeout))
    throw std::runtime_error("the broker did not acknowledge every publish");
}

RunFigures raw_run(const std::string& host, int port, const std::vector<Frame>& frames,
                   std::chrono::milliseconds timeout) {
  BenchMqttClient subscriber("dsekp-bench-raw-sub");
  BenchMqttClient publisher("dsekp-bench-raw-pub");
  std::string error;
  if (!subscriber.connect(host, port, error) || !publisher.connect(host, port, error))
    throw std::runtime_error("raw run: " + error);
  if (!subscriber.subscribe("bench/raw")) throw std::runtime_error("raw run: no SUBACK");
  RunFigures r;
  r.messages = frames.size();
  const auto start = Clock::now();
  std::thread sender([&] { publish_all(publisher, "bench/raw", frames, 0, timeout); });
  subscriber.wait_received(frames.size(), timeout);
  sender.join();
  // A moment for anything beyond N (there should be nothing) to show.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  r.delivered = subscriber.received();
  finish(r, start, subscriber.last_received_at());
  return r;
}

RunFigures edge_run(BenchMqttClient& publisher, std::size_t& acked, const std::string& topic,
                    const std::vector<Frame>& frames, TelemetryCounter& counter, int metrics_port,
                    std::chrono::milliseconds timeout) {
  RunFigures r;
  r.messages = frames.size();
  const std::int64_t before = counter.count();
  const ProcessingTotals p0 = processing_totals(metrics_port);
  const auto start = Clock::now();
  std::thread sender([&] { publish_all(publisher, topic, frames, acked, timeout); });
  const auto target = before + static_cast<std::int64_t>(frames.size());
  auto end = start;
  std::int64_t now = before;
  // The table grows by one row per accepted frame; poll it (a count costs well under 1 ms).
  while ((now = counter.count()) < target && Clock::now() - start < timeout)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  end = Clock::now();
  sender.join();
  acked += frames.size();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  r.delivered = static_cast<std::size_t>(counter.count() - before);
  finish(r, start, end);
  const ProcessingTotals p1 = processing_totals(metrics_port);
  if (p1.frames > p0.frames)
    r.mean_processing_us = (p1.seconds - p0.seconds) / (p1.frames - p0.frames) * 1e6;
  (void)now;
  return r;
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
  result.cpus = std::thread::hardware_concurrency();
  getloadavg(result.load_before, 3);
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));

  std::string tmpl = (std::filesystem::temp_directory_path() / "dsekp-bench-edge-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create a work directory");
  const std::string dir = tmpl;
  struct Cleanup {
    std::string dir;
    bool keep;
    ~Cleanup() {
      std::error_code ec;
      if (!keep) std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir, o.keep_dir};
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

  const int metrics_port = free_loopback_port();
  const std::string ready = dir + "/edge.ready";
  std::vector<std::string> edge_argv = {o.dsekp_exe,
                                        "edge",
                                        "--broker",
                                        host + ":" + std::to_string(broker.port()),
                                        "--db",
                                        registry_path,
                                        "--logs-dir",
                                        dir + "/logs",
                                        "--metrics",
                                        host + ":" + std::to_string(metrics_port),
                                        "--ready-file",
                                        ready,
                                        "--psk-baseline",
                                        "--client-id",
                                        "dsekp-bench-edge"};
  if (!o.csv) edge_argv.push_back("--no-csv");
  if (o.batch_max > 0)
    edge_argv.insert(edge_argv.end(), {"--batch-max", std::to_string(o.batch_max)});
  BenchProcess edge(edge_argv, dir + "/edge.log");
  for (const auto deadline = Clock::now() + std::chrono::seconds(15);
       !std::filesystem::exists(ready);) {
    if (Clock::now() > deadline || !edge.running())
      throw std::runtime_error("the edge did not become ready (see " + dir + "/edge.log)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  // Handshakes through the edge, one per device, before anything is measured.
  OpenSslCrypto crypto;
  OpenSslRng rng;
  std::vector<std::unique_ptr<BenchDevice>> devices;
  BenchMqttClient publisher("dsekp-bench-devices");
  std::string error;
  if (!publisher.connect(host, broker.port(), error)) throw std::runtime_error(error);
  if (!publisher.subscribe("dsekp/init/ack/#")) throw std::runtime_error("no SUBACK");
  std::size_t acked = 0;
  const Encoding enc = o.compact ? Encoding::compact : Encoding::json;
  for (std::size_t d = 0; d < o.devices; ++d) {
    devices.push_back(std::make_unique<BenchDevice>(crypto, materials[d]));
    DeviceSession& s = devices.back()->session;
    InitFrame init;
    if (s.start_handshake(static_cast<std::uint32_t>(unix_ms() / 1000), rng, init) != Error::ok ||
        s.note_init_sent(unix_ms(), rng) != Error::ok)
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
      throw std::runtime_error("handshake of device " + std::to_string(d) + " failed (see " + dir +
                               "/edge.log)");
  }

  // Every frame sealed and encoded before the clock starts: distinct readings, round-robin
  // over the devices, each device's frames in sequence.
  std::vector<Frame> dsekp_frames;
  std::vector<Frame> psk_frames;
  dsekp_frames.reserve(o.count);
  psk_frames.reserve(o.count);
  const std::uint64_t sendts = unix_ms();
  for (std::size_t i = 0; i < o.count; ++i) {
    BenchDevice& dev = *devices[i % o.devices];
    const std::string reading = R"({"t":21.5,"h":40.0,"i":)" + std::to_string(i) + "}";
    DataFrame data;
    if (dev.session.seal(view(reading), sendts, data) != Error::ok)
      throw std::runtime_error("cannot seal frame " + std::to_string(i));
    dsekp_frames.push_back(encode_frame(data, enc));
    PskFrame psk;
    if (psk_seal(crypto, dev.psk_key, dev.session.dev_id(),
                 static_cast<std::uint32_t>(i / o.devices), sendts, view(reading), rng,
                 psk) != Error::ok)
      throw std::runtime_error("cannot seal PSK frame " + std::to_string(i));
    psk_frames.push_back(encode_frame(psk, enc));
  }
  result.dsekp_frame_bytes = mean_size(dsekp_frames);
  result.psk_frame_bytes = mean_size(psk_frames);

  result.raw = raw_run(host, broker.port(), dsekp_frames, timeout);
  const std::string state = registry_path + ".state";
  {
    TelemetryCounter dsekp_rows(state, "dsekp");
    result.dsekp =
        edge_run(publisher, acked, "dsekp/data", dsekp_frames, dsekp_rows, metrics_port, timeout);
  }
  {
    TelemetryCounter psk_rows(state, "psk");
    result.psk =
        edge_run(publisher, acked, "psk/data", psk_frames, psk_rows, metrics_port, timeout);
  }
  if (const int code = edge.stop(std::chrono::seconds(30)); code != 0)
    std::fprintf(stderr, "dsekp bench edge: the edge exited with %d (see %s/edge.log)\n", code,
                 dir.c_str());

  if (result.raw.rate > 0) {
    result.ratio_dsekp = result.dsekp.rate / result.raw.rate;
    result.ratio_psk = result.psk.rate / result.raw.rate;
  }
  result.target_met = result.dsekp.complete && result.ratio_dsekp >= EdgeBenchResult::kTarget;
  getloadavg(result.load_after, 3);
  return result;
}

}  // namespace dsekp::bench::edge
