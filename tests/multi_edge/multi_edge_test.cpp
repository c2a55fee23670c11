// Several edges, one fleet (issue 7; docs/SCALING.md "Running several edges"): three real
// `dsekp edge` processes with `--store redis://...` and `--shared-group`, one real Mosquitto
// (MQTT 5 shared subscriptions), one real redis-server with AOF, and scripted devices. Each
// edge keeps its own sinks (telemetry table and server CSV log in its own state directory); the
// checks are on the union of the three.
//
//   * a session set up through one edge carries DATA handled by other edges (a device's rows in
//     more than one edge's sink), every INIT is answered exactly once, every frame recorded once;
//   * frames sent again (replays) are refused wherever they land, nothing recorded twice;
//   * one edge SIGKILLed mid-stream and restarted: every sent frame in the union exactly once
//     (the crash window between the Redis commit and the local sink commit is discussed in
//     SCALING.md; a kill that lands in it would lose a frame, and this test would say which);
//   * Redis SIGKILLed mid-stream and restarted from its AOF: while it is down every edge answers
//     /healthz with 503, reports dsekp_store_up 0 and records nothing; afterwards every frame is
//     recorded exactly once and no edge has exited;
//   * on a Redis Cluster (3 primaries + 3 replicas, `--store redis+cluster://...`): the same
//     exactly-once union, also with the primary of a device's slot SIGKILLed mid-stream (its
//     replica promoted); the time until that device's frames are recorded again is printed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsekp/device_ratchet.hpp"
#include "edge/store/redis/redis_key_slot.hpp"
#include "edge/store/redis/redis_session_store.hpp"
#include "engines/redis_cluster_nodes.hpp"
#include "engines/redis_server.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/host_network.hpp"
#include "tests/support/memory_secret_store.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr int kEdges = 3;
const std::string kGroup = "edges";

std::string device_reading(int device, int i) {
  return R"({"d":)" + std::to_string(device) + R"(,"i":)" + std::to_string(i) + "}";
}

/// One `dsekp edge` of the group, with its own state database, logs, ready file and stderr.
class GroupEdge {
 public:
  GroupEdge(const dsekp::test::TempDir& dir, int index, std::vector<std::string> args)
      : dir_(dir), name_("edge" + std::to_string(index)), args_(std::move(args)) {
    std::filesystem::create_directories(dir_.file(name_));
    args_.insert(args_.end(), {"--state-db", state_db(), "--logs-dir", logs(), "--client-id",
                               "dsekp-" + name_, "--metrics", "127.0.0.1:0"});
  }
  [[nodiscard]] std::string state_db() const { return dir_.file(name_ + "/state.db"); }
  [[nodiscard]] std::string logs() const { return dir_.file(name_ + "/logs"); }

  /// `extra`: more flags for this start only.
  ::testing::AssertionResult start(const std::vector<std::string>& extra = {}) {
    const std::string ready = dir_.file(name_ + "/ready");
    std::filesystem::remove(ready);
    std::vector<std::string> argv = args_;
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--ready-file", ready});
    err_file_ = dir_.file(name_ + "/stderr-" + std::to_string(++starts_));
    process_ =
        std::make_unique<dsekp::test::ChildProcess>(argv, dir_.file(name_ + "/stdout"), err_file_);
    if (!wait_until([&] { return std::filesystem::exists(ready); }, std::chrono::seconds(15)))
      return ::testing::AssertionFailure() << name_ << " not up: " << stderr_text();
    metrics_port_ = metrics_port(dsekp::test::read_file(err_file_));  // this start's port
    return ::testing::AssertionSuccess();
  }
  void kill() {
    process_->signal(SIGKILL);
    EXPECT_EQ(process_->wait_for(std::chrono::seconds(5)), std::optional<int>(128 + SIGKILL));
  }
  std::optional<int> terminate() {
    process_->signal(SIGTERM);
    return process_->wait_for(std::chrono::seconds(10));
  }
  [[nodiscard]] bool running() { return process_ && process_->running(); }
  /// Every start's stderr, in order.
  [[nodiscard]] std::string stderr_text() const {
    std::string out;
    for (int i = 1; i <= starts_; ++i)
      out += dsekp::test::read_file(dir_.file(name_ + "/stderr-" + std::to_string(i)));
    return out;
  }
  [[nodiscard]] std::string metrics() const { return http_get(metrics_port_, "/metrics"); }
  [[nodiscard]] std::string healthz() const { return http_get(metrics_port_, "/healthz"); }
  [[nodiscard]] std::vector<std::string> readings() const { return telemetry_readings(state_db()); }
  /// The plaintext column of the DSEKP server CSV log's rows.
  [[nodiscard]] std::vector<std::string> csv_readings() const {
    std::vector<std::string> out;
    const std::vector<Row> rows =
        parse_csv(dsekp::test::read_file(logs() + "/server_logs_dsekp.csv"));
    for (std::size_t i = 1; i < rows.size(); ++i)
      if (rows[i].size() > 7) out.push_back(rows[i][7]);
    return out;
  }

 private:
  const dsekp::test::TempDir& dir_;
  std::string name_;
  std::vector<std::string> args_;
  std::unique_ptr<dsekp::test::ChildProcess> process_;
  std::string err_file_;
  int starts_ = 0;
  int metrics_port_ = -1;
};

/// A device: its scripted protocol session and its own MQTT client (one thread uses both).
/// A ratcheting device's config: its ratchet over its flash (PROTOCOL.md 6.6).
DeviceConfig ratchet_config(DeviceRatchet* ratchet) {
  DeviceConfig config;
  config.ratchet = ratchet;
  return config;
}

struct Device {
  Device(const DeviceMaterial& material, int index, bool ratcheting)
      : id("dev-" + std::to_string(index)),
        client(id),
        ratchet(ratcheting ? std::make_unique<DeviceRatchet>(flash) : nullptr),
        session(device_credentials(material), ratchet_config(ratchet.get()), 1000 + index) {}
  std::string id;
  dsekp::test::MqttTestClient client;
  dsekp::test::MemorySecretStore flash;    // ratcheting devices' secret
  std::unique_ptr<DeviceRatchet> ratchet;  // null: a v1 device
  ScriptedDevice session;
  std::uint32_t last_t = 0;              // of its newest INIT
  std::vector<std::string> sent_frames;  // the wire bytes of every DATA frame, for replays
  std::vector<std::uint32_t> seqs;       // and their seqs
};

/// Redis + Mosquitto + `devices` registered devices + three edges in one shared group.
class MultiEdgeBed {
 public:
  /// `edge_args`: more flags for every edge; `ratchet`: the devices ratchet their secrets;
  /// `cluster`: the store is a Redis Cluster of 3 primaries and 3 replicas, not one server;
  /// `hosts`: its node i runs in hosts' namespace i (partition tests), else all on loopback.
  explicit MultiEdgeBed(int devices, const std::vector<std::string>& edge_args = {},
                        bool ratchet = false, bool cluster = false,
                        const dsekp::test::HostNetwork* hosts = nullptr)
      : ratchet_(ratchet) {
    std::filesystem::create_directories(dir_.file("redis"));
    std::filesystem::create_directories(dir_.file("broker"));
    if (cluster) {
      std::vector<dsekp::engines::ServerPlacement> placements;
      for (int i = 0; hosts != nullptr && i < hosts->size(); ++i)
        placements.push_back({hosts->address(i), hosts->netns(i)});
      cluster_ =
          std::make_unique<dsekp::engines::RedisClusterNodes>(dir_.file("redis"), 3, 1, placements);
      store_ = "redis+cluster://" + cluster_->seeds() + "/t:";
    } else {
      redis_ = std::make_unique<dsekp::engines::RedisServer>(dir_.file("redis"));
      store_ = "redis://127.0.0.1:" + std::to_string(redis_->port()) + "/t:";
    }
    broker_ = std::make_unique<dsekp::test::MosquittoBroker>(
        dir_.file("broker"), "allow_anonymous true\nmax_queued_messages 100000\n");
    const std::string registry = dir_.file("registry.db");
    for (int d = 0; d < devices; ++d) {
      DeviceMaterial material;
      EXPECT_TRUE(register_device(registry, "dev-" + std::to_string(d), material, ratchet));
      materials_.push_back(std::move(material));
    }
    const std::string& store = store_;
    for (int e = 0; e < kEdges; ++e) {
      std::vector<std::string> args{::dsekp::test::cli_path(),
                                    "edge",
                                    "--broker",
                                    "127.0.0.1:" + std::to_string(broker_->port()),
                                    "--db",
                                    registry,
                                    "--store",
                                    store,
                                    "--shared-group",
                                    kGroup,
                                    "--downlink-lane",
                                    std::to_string(e) + "/" + std::to_string(kEdges),
                                    "--no-republish"};
      args.insert(args.end(), edge_args.begin(), edge_args.end());
      edges_.push_back(std::make_unique<GroupEdge>(dir_, e, std::move(args)));
    }
  }

  ::testing::AssertionResult start_edges() {
    for (auto& e : edges_)
      if (auto r = e->start(); !r) return r;
    return ::testing::AssertionSuccess();
  }

  /// Connects every device and runs its handshake (INIT through the group, ACK back).
  ::testing::AssertionResult connect_devices() {
    for (std::size_t d = 0; d < materials_.size(); ++d) {
      devices_.push_back(std::make_unique<Device>(materials_[d], static_cast<int>(d), ratchet_));
      Device& dev = *devices_.back();
      if (dev.client.connect(broker_->port(), "", "") != std::optional<int>(0))
        return ::testing::AssertionFailure() << dev.id << ": no CONNACK";
      if (dev.client.subscribe(ack_topic(dev)) != std::optional<int>(1))
        return ::testing::AssertionFailure() << dev.id << ": SUBACK";
      if (auto r = handshake(dev); !r) return r;
    }
    return ::testing::AssertionSuccess();
  }

  /// A new session of `dev`: an INIT through the group (at a later `t` than its last), its ACK.
  ::testing::AssertionResult handshake(Device& dev) {
    dev.last_t =
        std::max<std::uint32_t>(dev.last_t + 1, static_cast<std::uint32_t>(unix_ms_now() / 1000));
    const std::size_t acks = dev.client.received().size();
    if (!dev.client.publish("dsekp/init", as_string(dev.session.init(Encoding::json, dev.last_t))))
      return ::testing::AssertionFailure() << dev.id << ": INIT not published";
    if (!dev.client.wait_for_count(acks + 1))
      return ::testing::AssertionFailure() << dev.id << ": no ACK; " << all_stderr();
    if (const Error e = dev.session.take_ack(bytes_of(dev.client.received().back().payload));
        e != Error::ok)
      return ::testing::AssertionFailure() << dev.id << ": ACK refused: " << error_name(e);
    return ::testing::AssertionSuccess();
  }

  /// Frame `i` of device `d` (published at QoS 1; returns once the broker holds it).
  bool send(int d, int i) {
    Device& dev = *devices_[static_cast<std::size_t>(d)];
    const Encoding enc = i % 3 == 0 ? Encoding::compact : Encoding::json;
    DataFrame sealed;
    const std::string wire =
        as_string(dev.session.data(device_reading(d, i), unix_ms_now(), enc, &sealed));
    dev.sent_frames.push_back(wire);
    dev.seqs.push_back(sealed.seq);
    return dev.client.publish("dsekp/data", wire);
  }

  /// Every edge's telemetry readings (index: edge).
  std::vector<std::vector<std::string>> readings() const {
    std::vector<std::vector<std::string>> out;
    for (const auto& e : edges_) out.push_back(e->readings());
    return out;
  }
  std::size_t total_rows() const {
    std::size_t n = 0;
    for (const auto& r : readings()) n += r.size();
    return n;
  }
  bool wait_rows(std::size_t n, std::chrono::seconds timeout) const {
    return wait_until([&] { return total_rows() >= n; }, timeout);
  }
  std::string all_stderr() const {
    std::string out;
    for (const auto& e : edges_) out += e->stderr_text();
    return out;
  }
  /// The sum over the edges of one metric series.
  double metric_sum(const std::string& series) const {
    double sum = 0;
    for (const auto& e : edges_) sum += std::max(0.0, metric_value(e->metrics(), series));
    return sum;
  }

  /// Every frame of `frames` per device in the union of the telemetry tables exactly once (and
  /// nothing else), and the CSV logs' union equal to it.
  void expect_each_frame_once(int frames) const {
    std::map<std::string, int> seen;
    std::map<std::string, int> seen_csv;
    for (const auto& e : edges_) {
      for (const std::string& r : e->readings()) ++seen[r];
      for (const std::string& r : e->csv_readings()) ++seen_csv[r];
    }
    int missing = 0;
    int doubled = 0;
    std::size_t expected = 0;
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      for (int i = 0; i < frames; ++i, ++expected) {
        const auto it = seen.find(device_reading(static_cast<int>(d), i));
        if (it == seen.end()) {
          ++missing;
          ADD_FAILURE() << "frame " << i << " of dev-" << d << " is in no edge's sink";
        } else if (it->second != 1) {
          ++doubled;
          ADD_FAILURE() << "frame " << i << " of dev-" << d << " is recorded " << it->second
                        << " times";
        }
      }
    }
    EXPECT_EQ(missing, 0);
    EXPECT_EQ(doubled, 0);
    EXPECT_EQ(seen.size(), expected) << "rows that no device sent";
    EXPECT_EQ(seen_csv, seen) << "the CSV logs differ from the telemetry tables";
  }

  /// Waits until every device's `frames` are recorded (40 s at most), then
  /// expect_each_frame_once().
  void expect_all_recorded_once(int frames) const {
    const std::size_t all = devices_.size() * static_cast<std::size_t>(frames);
    EXPECT_TRUE(wait_rows(all, std::chrono::seconds(40))) << total_rows() << " of " << all << "\n"
                                                          << all_stderr();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // nothing more comes
    expect_each_frame_once(frames);
  }

  static std::string ack_topic(const Device& d) { return "dsekp/init/ack/" + d.id; }

  bool ratchet_ = false;
  std::string store_;  // the edges' --store
  dsekp::test::TempDir dir_;
  std::unique_ptr<dsekp::engines::RedisServer> redis_;          // one server, or
  std::unique_ptr<dsekp::engines::RedisClusterNodes> cluster_;  // a cluster
  std::unique_ptr<dsekp::test::MosquittoBroker> broker_;
  std::vector<DeviceMaterial> materials_;
  std::vector<std::unique_ptr<GroupEdge>> edges_;
  std::vector<std::unique_ptr<Device>> devices_;
};

// An edge that ran alone and then joins a group keeps its client id and so its persistent
// session, whose plain subscriptions would deliver every frame a second time next to the
// shared one (found on the running system: every frame accepted once and refused once as a
// replay). The edge drops them on connect.
TEST(MultiEdge, AnEdgeThatJoinsAGroupDropsThePlainSubscriptionsOfItsEarlierRuns) {
  MultiEdgeBed bed(1);
  {
    GroupEdge alone(
        bed.dir_, 0,
        {::dsekp::test::cli_path(), "edge", "--broker",
         "127.0.0.1:" + std::to_string(bed.broker_->port()), "--db", bed.dir_.file("registry.db"),
         "--store",
         "redis://127.0.0.1:" + std::to_string(bed.redis_->port()) + "/t:", "--no-republish"});
    ASSERT_TRUE(alone.start());
    ASSERT_EQ(alone.terminate(), std::optional<int>(0));
  }
  ASSERT_TRUE(bed.start_edges());
  ASSERT_TRUE(bed.connect_devices());
  constexpr int kFrames = 12;
  for (int i = 0; i < kFrames; ++i) ASSERT_TRUE(bed.send(0, i));
  ASSERT_TRUE(bed.wait_rows(kFrames, std::chrono::seconds(30))) << bed.all_stderr();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // room for a second copy
  bed.expect_each_frame_once(kFrames);
  EXPECT_EQ(bed.metric_sum(R"(dsekp_rejections_total{reason="replay"})"), 0.0) << bed.all_stderr();
}

TEST(MultiEdge, SessionsCrossEdgesEveryInitAnsweredOnceEveryFrameOnce) {
  // 5 devices over 3 edges: with a count divisible by 3, Mosquitto's round robin would give
  // each device the same edge for every frame (the broker rotates per message, not per device).
  constexpr int kDevices = 5;
  constexpr int kFrames = 40;
  MultiEdgeBed bed(kDevices);
  ASSERT_TRUE(bed.start_edges());
  ASSERT_TRUE(bed.connect_devices());
  for (int i = 0; i < kFrames; ++i)
    for (int d = 0; d < kDevices; ++d) ASSERT_TRUE(bed.send(d, i));
  ASSERT_TRUE(bed.wait_rows(kDevices * kFrames, std::chrono::seconds(30)))
      << bed.total_rows() << " of " << kDevices * kFrames << "\n"
      << bed.all_stderr();
  bed.expect_each_frame_once(kFrames);

  // Cross-edge: the shared subscription spread every device's frames; a device whose rows are
  // in two edges' sinks used its one session (set up through one edge) at another edge.
  const auto per_edge = bed.readings();
  int edges_with_rows = 0;
  for (const auto& r : per_edge) edges_with_rows += r.empty() ? 0 : 1;
  EXPECT_GE(edges_with_rows, 2);
  int crossing_devices = 0;
  for (int d = 0; d < kDevices; ++d) {
    int edges_of_device = 0;
    for (const auto& rows : per_edge) {
      const std::string marker = R"({"d":)" + std::to_string(d) + ",";
      for (const std::string& r : rows)
        if (r.rfind(marker, 0) == 0) {
          ++edges_of_device;
          break;
        }
    }
    if (edges_of_device >= 2) ++crossing_devices;
  }
  EXPECT_GE(crossing_devices, 1) << "no device's frames were handled by two edges";

  // Each INIT handled by exactly one edge, and each device got exactly one ACK.
  EXPECT_EQ(bed.metric_sum(R"(dsekp_handshakes_total{outcome="accepted"})"), kDevices);
  for (const auto& dev : bed.devices_) {
    std::size_t acks = 0;
    for (const auto& m : dev->client.received())
      if (m.topic == MultiEdgeBed::ack_topic(*dev)) ++acks;
    EXPECT_EQ(acks, 1u) << dev->id;
  }
  EXPECT_EQ(bed.metric_sum(R"(dsekp_frames_total{mode="dsekp",outcome="accepted"})"),
            kDevices * kFrames);
  // Session keys are cached per edge (edge/store/uplink_session_cache.hpp): after the first
  // frame of a device at an edge, its frames cost no state read, only their share of a batch's
  // one script run. Without the cache every frame costs a read and a script run (2 per frame).
  const double round_trips = bed.metric_sum("dsekp_store_round_trips_total");
  EXPECT_LT(round_trips / (kDevices * kFrames), 1.5) << round_trips << " round trips";
  std::printf("Redis round trips per accepted frame: %.2f\n", round_trips / (kDevices * kFrames));
  // Every frame counted once; misses: each device's confirming frame and its first frame at
  // each other edge (3 per device; a little more if a frame overtakes its session's
  // confirmation at another edge).
  const double misses = bed.metric_sum(R"(dsekp_session_cache_lookups_total{result="miss"})");
  const double hits = bed.metric_sum(R"(dsekp_session_cache_lookups_total{result="hit"})");
  EXPECT_EQ(hits + misses, kDevices * kFrames);
  EXPECT_LE(misses, 4 * kDevices) << misses;
  std::printf("session cache: %.0f hits, %.0f misses\n", hits, misses);
  std::printf("rows per edge:");
  for (const auto& r : per_edge) std::printf(" %zu", r.size());
  std::printf("; devices handled by two or more edges: %d of %d\n", crossing_devices, kDevices);

  // Replays: the last 5 frames of every device, each sent again three times (the group spreads
  // the copies over the edges): all refused, nothing recorded again.
  const double replays_before = bed.metric_sum(R"(dsekp_rejections_total{reason="replay"})");
  int resent = 0;
  for (auto& dev : bed.devices_) {
    for (std::size_t i = dev->sent_frames.size() - 5; i < dev->sent_frames.size(); ++i)
      for (int copy = 0; copy < 3; ++copy, ++resent)
        ASSERT_TRUE(dev->client.publish("dsekp/data", dev->sent_frames[i]));
  }
  EXPECT_TRUE(wait_until(
      [&] {
        return bed.metric_sum(R"(dsekp_rejections_total{reason="replay"})") - replays_before >=
               resent;
      },
      std::chrono::seconds(20)))
      << bed.metric_sum(R"(dsekp_rejections_total{reason="replay"})") - replays_before << " of "
      << resent << "\n"
      << bed.all_stderr() << bed.edges_[0]->metrics();
  EXPECT_EQ(bed.metric_sum(R"(dsekp_rejections_total{reason="replay"})") - replays_before, resent);
  int edges_refusing = 0;
  for (const auto& e : bed.edges_)
    edges_refusing += metric_value(e->metrics(), R"(dsekp_rejections_total{reason="replay"})") > 0;
  EXPECT_GE(edges_refusing, 2) << "the replays did not reach two edges";
  bed.expect_each_frame_once(kFrames);
  for (auto& e : bed.edges_) EXPECT_EQ(e->terminate(), std::optional<int>(0)) << e->stderr_text();
}

// Ratcheting devices (PROTOCOL.md 6.6) over three edges sharing Redis: each session's INIT and
// confirming frame may land on any edge, and the step is one conditional write of the shared
// state, so the shared secret follows each device exactly (never stepped twice or not at all:
// either would lock the device out at its next INIT), every frame is stored once, and the
// registry (one file for the three edges here) no longer holds the provisioned secrets.
TEST(MultiEdge, RatchetingDevicesStepOnceWhicheverEdgeHandlesTheirSessions) {
  constexpr int kDevices = 5;
  constexpr int kSessions = 4;
  constexpr int kFramesPerSession = 6;
  MultiEdgeBed bed(kDevices, {}, /*ratchet=*/true);
  ASSERT_TRUE(bed.start_edges());
  ASSERT_TRUE(bed.connect_devices());
  for (int s = 0; s < kSessions; ++s) {
    if (s > 0) {
      for (auto& dev : bed.devices_) ASSERT_TRUE(bed.handshake(*dev));
    }
    for (int i = 0; i < kFramesPerSession; ++i) {
      for (int d = 0; d < kDevices; ++d) ASSERT_TRUE(bed.send(d, s * kFramesPerSession + i));
    }
    ASSERT_TRUE(bed.wait_rows(static_cast<std::size_t>(kDevices * kFramesPerSession * (s + 1)),
                              std::chrono::seconds(30)))
        << bed.all_stderr();
  }
  bed.expect_each_frame_once(kSessions * kFramesPerSession);
  EXPECT_EQ(bed.metric_sum("dsekp_ratchet_steps_total"), kDevices * kSessions);
  for (auto& e : bed.edges_) EXPECT_EQ(e->terminate(), std::optional<int>(0)) << e->stderr_text();
  for (const auto& dev : bed.devices_) {
    EXPECT_EQ(dev->session.session().epoch(), static_cast<std::uint32_t>(kSessions)) << dev->id;
    EXPECT_EQ(dev->flash.writes(), kSessions) << dev->id;
    const auto show =
        dsekp::test::run_command({::dsekp::test::cli_path(), "keys", "show", dev->id, "--db",
                                  bed.dir_.file("registry.db"), "--store", bed.store_},
                                 bed.dir_.path().string());
    ASSERT_EQ(show.exit_code, 0) << show.err;
    const auto info = nlohmann::json::parse(show.out);
    EXPECT_EQ(info.at("ratchet_epoch"), kSessions) << dev->id << ": the shared state's secret";
    EXPECT_FALSE(info.at("secret_erased").is_null()) << dev->id;
  }
}

TEST(MultiEdge, OneEdgeSigkilledMidStreamEveryFrameExactlyOnce) {
  constexpr int kDevices = 4;
  constexpr int kFrames = 400;
  constexpr int kKills = 3;
  // The frames the broker queues for the dead edge arrive after its restart, when the other
  // edges have accepted newer frames of the same devices: the replay window must reach back
  // over the outage (here up to ~0.5 s at one frame per ~5 ms and device; the default 64 frames
  // would not, and those frames would be refused as too_old: SCALING.md).
  MultiEdgeBed bed(kDevices, {std::string("--replay-window"), std::string("1024")});
  ASSERT_TRUE(bed.start_edges());
  ASSERT_TRUE(bed.connect_devices());
  std::atomic<int> round{0};
  std::atomic<bool> send_failed{false};
  std::thread sender([&] {
    for (int i = 0; i < kFrames; ++i) {
      for (int d = 0; d < kDevices; ++d)
        if (!bed.send(d, i)) {
          send_failed = true;
          return;
        }
      round = i + 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(4));
    }
  });
  std::mt19937 rng(20261130);
  int kills_during_stream = 0;
  GroupEdge& victim = *bed.edges_[1];
  for (int k = 0; k < kKills; ++k) {
    const std::size_t rows = victim.readings().size();
    wait_until([&] { return victim.readings().size() > rows + 10; }, std::chrono::seconds(5));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    if (round.load() < kFrames) ++kills_during_stream;
    victim.kill();
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 300));
    ASSERT_TRUE(victim.start()) << "restart " << k;
  }
  sender.join();
  ASSERT_FALSE(send_failed.load());
  {  // The sessions carry the edges' window size (set when the INIT was accepted).
    RedisStoreOptions options;
    options.endpoint.port = bed.redis_->port();
    options.prefix = "t:";
    std::string error;
    auto store = RedisSessionStore::open(options, error);
    ASSERT_NE(store, nullptr) << error;
    EdgeDeviceState state;
    std::uint64_t generation = 0;
    DevId dev0;
    ASSERT_EQ(dev0.assign("dev-0"), Error::ok);
    ASSERT_TRUE(store->load(dev0, state, generation).ok());
    ASSERT_EQ(state.established_count, 1u);
    EXPECT_EQ(state.established[0].uplink_window.size(), 1024u);
  }
  EXPECT_GE(kills_during_stream, 2) << "the stream ended before the kills";
  // Exactly once: a kill between a batch's Redis commit and its local commit is repaired by the
  // restarted edge from its pending rows in Redis (edge/daemon/pending_rows.hpp); the frames
  // the dead edge had not acknowledged come again and are accepted or refused as replays.
  EXPECT_TRUE(bed.wait_rows(kDevices * kFrames, std::chrono::seconds(30)))
      << bed.total_rows() << " of " << kDevices * kFrames << " rows";
  // A moment more, so that a row recorded twice would show.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  bed.expect_each_frame_once(kFrames);
  for (const auto& e : bed.edges_) EXPECT_FALSE(e->readings().empty());
  // What the recoveries did (informative): rows re-inserted at the victim's start-ups (the kill
  // fell between its two commits) and after failed commits (conflicts with the other edges).
  std::size_t startup_rows = 0, after_failure_rows = 0;
  for (const auto& e : bed.edges_) {
    std::istringstream log(e->stderr_text());
    for (std::string line; std::getline(log, line);) {
      const auto at = line.find(" of them not yet local");
      if (at == std::string::npos) continue;
      const auto comma = line.rfind(", ", at);
      const std::size_t n = std::stoul(line.substr(comma + 2, at - comma - 2));
      (line.find("at start-up") != std::string::npos ? startup_rows : after_failure_rows) += n;
    }
  }
  if (std::getenv("DSEKP_TEST_SHOW")) std::printf("%s", bed.all_stderr().c_str());
  std::printf(
      "kills: %d (%d while streaming); rows recovered from the pending lists: %zu at "
      "start-up, %zu after failed commits; rows per edge:",
      kKills, kills_during_stream, startup_rows, after_failure_rows);
  for (const auto& r : bed.readings()) std::printf(" %zu", r.size());
  std::printf("\n");
  for (auto& e : bed.edges_) EXPECT_EQ(e->terminate(), std::optional<int>(0)) << e->stderr_text();
}

// The crash window itself, deterministically: one edge holds (--test-hold-ms) between the
// batch's Redis commit (states + the rows' write-ahead) and its local SQLite commit, and is
// SIGKILLed there; or right after the local commit. Restarted, it must hold the batch's frame
// exactly once: re-inserted from the pending list in the first case, found present (not
// inserted again) in the second.
void kill_at_hold_and_restart(const std::string& moment, std::size_t expect_inserted) {
  constexpr int kFrames = 3;
  MultiEdgeBed bed(1);
  GroupEdge& edge = *bed.edges_[0];
  ASSERT_TRUE(edge.start({"--test-hold-ms", "1500"}));  // the only edge of the group
  ASSERT_TRUE(bed.connect_devices());
  ASSERT_TRUE(bed.send(0, 0));
  ASSERT_TRUE(wait_until(
      [&] { return edge.stderr_text().find("test hold: " + moment) != std::string::npos; },
      std::chrono::seconds(20)))
      << edge.stderr_text();
  edge.kill();
  const std::string pending_key = "t:pending:{dsekp-edge0}";
  EXPECT_EQ(bed.redis_->command({"LLEN", pending_key}), "1") << "the batch's row write-ahead";
  EXPECT_EQ(edge.readings().size(), moment == "redis committed" ? 0u : 1u);
  for (int i = 1; i < kFrames; ++i) ASSERT_TRUE(bed.send(0, i));
  ASSERT_TRUE(edge.start());  // no hold
  EXPECT_TRUE(bed.wait_rows(kFrames, std::chrono::seconds(20))) << edge.stderr_text();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  bed.expect_each_frame_once(kFrames);
  const std::string log = edge.stderr_text();
  EXPECT_NE(log.find("pending rows at start-up: 1 in " + pending_key + ", " +
                     std::to_string(expect_inserted) + " of them not yet local"),
            std::string::npos)
      << log;
  // Frame 0 was never acknowledged: the broker delivered it again, refused as a replay.
  EXPECT_NE(log.find("rejected replay on \"dsekp/data\""), std::string::npos) << log;
  EXPECT_EQ(edge.terminate(), std::optional<int>(0)) << edge.stderr_text();
}

TEST(MultiEdge, KillBetweenRedisAndLocalCommitLosesNothing) {
  kill_at_hold_and_restart("redis committed", 1);
}

TEST(MultiEdge, KillAfterLocalCommitRecordsNothingTwice) {
  kill_at_hold_and_restart("committed", 0);
}

TEST(MultiEdge, RedisRestartPausesEveryEdgeThenAllContinue) {
  constexpr int kDevices = 3;
  constexpr int kFrames = 120;
  MultiEdgeBed bed(kDevices);
  ASSERT_TRUE(bed.start_edges());
  ASSERT_TRUE(bed.connect_devices());
  for (const auto& e : bed.edges_) {
    EXPECT_NE(e->healthz().find(" 200 "), std::string::npos) << e->healthz();
    EXPECT_EQ(metric_value(e->metrics(), "dsekp_store_up"), 1);
  }
  int i = 0;
  const auto send_round = [&] {
    for (int d = 0; d < kDevices; ++d) ASSERT_TRUE(bed.send(d, i));
    ++i;
  };
  for (; i < kFrames / 3;) send_round();
  ASSERT_TRUE(bed.wait_rows(static_cast<std::size_t>(kDevices * i), std::chrono::seconds(20)));

  bed.redis_->kill();
  // Frames keep coming while Redis is down (the broker takes them).
  for (int k = 0; k < 10; ++k) send_round();
  EXPECT_TRUE(wait_until(
      [&] {
        for (const auto& e : bed.edges_)
          if (e->healthz().find(" 503 ") == std::string::npos) return false;
        return true;
      },
      std::chrono::seconds(10)))
      << bed.edges_[0]->healthz();
  for (const auto& e : bed.edges_) {
    EXPECT_NE(e->healthz().find("store unreachable"), std::string::npos) << e->healthz();
    EXPECT_EQ(metric_value(e->metrics(), "dsekp_store_up"), 0);
  }
  // Nothing is recorded while the store is down.
  const std::size_t during = bed.total_rows();
  for (int k = 0; k < 10; ++k) send_round();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(bed.total_rows(), during);
  EXPECT_LT(during, static_cast<std::size_t>(kDevices * i));

  bed.redis_->restart();
  for (; i < kFrames;) send_round();
  bed.expect_all_recorded_once(kFrames);
  for (const auto& e : bed.edges_) {
    EXPECT_TRUE(e->running()) << "an edge exited: " << e->stderr_text();
    EXPECT_TRUE(wait_until([&] { return e->healthz().find(" 200 ") != std::string::npos; },
                           std::chrono::seconds(5)));
    EXPECT_EQ(metric_value(e->metrics(), "dsekp_store_up"), 1);
  }
  EXPECT_NE(bed.all_stderr().find("store unreachable"), std::string::npos);
  for (auto& e : bed.edges_) EXPECT_EQ(e->terminate(), std::optional<int>(0)) << e->stderr_text();
}

/// Four devices streaming through three edges on a Redis Cluster; after a third of the frames,
/// `fault(victim)` strikes the primary serving dev-0's slot. Asserts that dev-0's frames are
/// recorded again within 30 s (and prints after how long), that every frame of every device is in
/// the union of the edges' sinks exactly once, and that no edge exited.
void expect_a_primary_fault_survived(MultiEdgeBed& bed, const char* what,
                                     const std::function<void(int victim)>& fault) {
  constexpr int kDevices = 4;
  constexpr int kFrames = 90;
  ASSERT_TRUE(bed.start_edges());
  ASSERT_TRUE(bed.connect_devices());
  int i = 0;
  const auto send_round = [&] {
    for (int d = 0; d < kDevices; ++d) ASSERT_TRUE(bed.send(d, i));
    ++i;
  };
  for (; i < kFrames / 3;) send_round();
  ASSERT_TRUE(bed.wait_rows(static_cast<std::size_t>(kDevices * i), std::chrono::seconds(20)))
      << bed.all_stderr();
  const int victim = bed.cluster_->primary_of(redis::key_slot("t:dev2:{dev-0}"));
  ASSERT_GE(victim, 0);
  const std::size_t before = bed.total_rows();
  const auto struck = std::chrono::steady_clock::now();
  fault(victim);
  for (; i < 2 * kFrames / 3;) send_round();
  // dev-0's frames are recorded again once another node serves the slot.
  const auto dev0_rows = [&] {
    std::size_t n = 0;
    for (const auto& rows : bed.readings())
      for (const std::string& r : rows) n += r.starts_with(R"({"d":0,)") ? 1 : 0;
    return n;
  };
  const std::size_t dev0_before = static_cast<std::size_t>(kFrames / 3);
  EXPECT_TRUE(wait_until([&] { return dev0_rows() > dev0_before; }, std::chrono::seconds(30)))
      << bed.all_stderr();
  std::printf("dev-0's frames recorded again %lld ms after its primary was %s (%zu rows before)\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - struck)
                                         .count()),
              what, before);
  for (; i < kFrames;) send_round();
  bed.expect_all_recorded_once(kFrames);
  for (const auto& e : bed.edges_)
    EXPECT_TRUE(e->running()) << "an edge exited: " << e->stderr_text();
}

// Three edges on a Redis Cluster; the primary serving dev-0's slot is SIGKILLed mid-stream. Its
// replica is promoted within a few seconds (node timeout 1 s); meanwhile the edges pause on
// that slot (a burst with dev-0's frames waits, fail closed), then every frame of every device
// is in the union exactly once.
TEST(MultiEdge, OnARedisClusterAPrimaryKilledMidStreamLosesAndDoublesNothing) {
  MultiEdgeBed bed(4, {}, false, /*cluster=*/true);
  expect_a_primary_fault_survived(bed, "killed", [&](int victim) { bed.cluster_->kill(victim); });
  for (auto& e : bed.edges_) EXPECT_EQ(e->terminate(), std::optional<int>(0)) << e->stderr_text();
}

// The same with the primary cut off instead: each Redis node runs in a network namespace of its
// own, and the victim's link is dropped both ways mid-stream. Unlike a kill, it keeps running and
// the edges' connections to it hang (no reset): the edges must give up on it by their command
// timeout, find the promoted replica through the other nodes, and not have had a write confirmed
// that only the cut-off primary holds (WAIT for its replica cannot succeed across the cut). Once
// the link is back, the old primary rejoins as a replica of the promoted one.
TEST(MultiEdge, OnARedisClusterAPrimaryCutOffMidStreamLosesAndDoublesNothing) {
  if (const std::string why = dsekp::test::HostNetwork::unavailable_reason(); !why.empty())
    GTEST_SKIP() << why;
  dsekp::test::HostNetwork hosts(6);
  MultiEdgeBed bed(4, {}, false, /*cluster=*/true, &hosts);
  int cut = -1;
  expect_a_primary_fault_survived(bed, "cut off", [&](int victim) {
    cut = victim;
    hosts.cut(victim);
  });
  ASSERT_GE(cut, 0);
  hosts.heal(cut);
  ASSERT_TRUE(bed.cluster_->wait_until_ok(std::chrono::seconds(60))) << bed.cluster_->logs();
  // The slot stayed with the promoted replica; the old primary follows it.
  const int serving = bed.cluster_->primary_of(redis::key_slot("t:dev2:{dev-0}"));
  EXPECT_NE(serving, cut) << "the cut-off primary serves the slot again";
  const std::vector<int> followers = bed.cluster_->replicas_of(serving);
  EXPECT_NE(std::find(followers.begin(), followers.end(), cut), followers.end())
      << "the cut-off primary is not a replica of the promoted one";
  for (auto& e : bed.edges_) EXPECT_EQ(e->terminate(), std::optional<int>(0)) << e->stderr_text();
}

// --shared-group with MQTT 3.1.1 is refused before anything starts, with a reason.
TEST(MultiEdge, SharedGroupWithMqtt311IsRefused) {
  dsekp::test::TempDir dir;
  DeviceMaterial material;
  ASSERT_TRUE(register_device(dir.file("registry.db"), "dev-0", material));
  dsekp::test::ChildProcess edge(
      {::dsekp::test::cli_path(), "edge", "--broker", "127.0.0.1:1", "--db",
       dir.file("registry.db"), "--no-csv", "--shared-group", "g", "--mqtt-version", "3.1.1"},
      dir.file("out"), dir.file("err"));
  const auto status = edge.wait_for(std::chrono::seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_NE(*status, 0);
  EXPECT_NE(dsekp::test::read_file(dir.file("err")).find("--shared-group needs MQTT 5"),
            std::string::npos)
      << dsekp::test::read_file(dir.file("err"));
}

}  // namespace
}  // namespace dsekp::edge::testing
