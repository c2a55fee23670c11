// The clustered broker tier: three RabbitMQ nodes on loopback (one cluster, quorum queues),
// devices speaking MQTT to one node, `dsekp edge --amqp` consuming the uplink from its quorum
// queue with an acknowledgement after each commit (edge/amqp/amqp_transport.hpp). Each test
// asserts every frame the devices logged is in the edge's server CSV and telemetry table exactly
// once (FleetTest::expect_every_frame_once):
//   * the path itself: INIT in over MQTT -> queue -> AMQP, ACK out over AMQP -> MQTT QoS 1;
//   * the node the edge consumes from SIGKILLed mid-stream: the edge moves to the next node, the
//     queue (a majority of the nodes) keeps what it had not acknowledged; the time until frames
//     flow again is printed;
//   * the edge SIGKILLed mid-stream and restarted: the queue delivers the unacknowledged burst
//     again, the edge refuses what it had committed as replays;
//   * the edge's node cut off mid-stream (nodes in network namespaces of their own, needs root):
//     the edge leaves it by the missing heartbeats, the node rejoins after the heal.
// The three nodes serve the whole program (they take 20-40 s to start), so ctest runs it as one
// test (broker_compat.rabbitmq_cluster). Skips when rabbitmq-server is not installed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "fleet_fixture.hpp"
#include "shared_rabbitmq_cluster.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/host_network.hpp"
#include "tests/support/mqtt_test_client.hpp"

namespace dsekp::broker_compat {
namespace {

constexpr int kNodes = 3;
// The devices' node; the edge starts on another one.
constexpr int kDeviceNode = 1;
constexpr int kEdgeNode = 0;

/// The suite's nodes (one program, one set).
using SharedCluster = dsekp::test::SharedRabbitMqCluster<kNodes>;

class RabbitMqCluster : public FleetTest {
 protected:
  static void TearDownTestSuite() { SharedCluster::reset(); }
  /// The nodes this test runs on: the program's shared ones.
  [[nodiscard]] virtual engines::RabbitMqCluster* cluster() const { return SharedCluster::get(); }
  void SetUp() override {
    if (engines::RabbitMqCluster::executable().empty())
      GTEST_SKIP() << "rabbitmq-server is not installed (Debian: apt-get install "
                      "rabbitmq-server); the clustered broker tests need it";
    ASSERT_NE(SharedCluster::get(), nullptr) << SharedCluster::error();
    // Every test's faults start from a whole cluster (the last test's node may still rejoin).
    ASSERT_NO_THROW(SharedCluster::get()->await_whole());
  }
  std::string broker_host() const override {
    return cluster() ? cluster()->host(kDeviceNode) : "127.0.0.1";
  }
  int broker_port() const override { return cluster() ? cluster()->mqtt_port(kDeviceNode) : 0; }
  std::string broker_log() const override { return cluster() ? cluster()->logs() : ""; }
  // The uplink over AMQP from a queue of the test's own (a queue outlives its edge).
  std::vector<std::string> edge_broker_args(const std::string&) const override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::vector<std::string> args{"--amqp", cluster()->amqp_nodes(kEdgeNode), "--amqp-queue",
                                  std::string("uplink-") + info->name(), "--username", "guest",
                                  "--password", "guest",
                                  // Redeliveries after a hung node come late (SCALING.md, "What
                                  // is lost"): the widest window absorbs them at 10 frames/s.
                                  "--replay-window", "1024"};
    args.insert(args.end(), extra_edge_args_.begin(), extra_edge_args_.end());
    return args;
  }
  std::vector<std::string> extra_edge_args_;  // for this test's edge only
  /// `dsekp device` for the 5 provisioned devices, `count` DSEKP frames every `interval_ms`
  /// each, in the background.
  dsekp::test::ChildProcess start_devices(const std::string& count,
                                          const std::string& interval_ms) {
    return dsekp::test::ChildProcess(device_argv({"--anonymous", "--mode", "dsekp", "--qos", "1",
                                                  "--count", count, "--interval-ms", interval_ms}),
                                     dir_.file("device.out"), dir_.file("device.err"));
  }
  /// The devices end well, every one of their `frames` acknowledged by the broker, and every
  /// frame is in the edge's sinks exactly once.
  void expect_devices_done_and_every_frame_once(dsekp::test::ChildProcess& devices, int frames) {
    const auto status = devices.wait_for(std::chrono::seconds(120));
    device_err_ = dsekp::test::read_file(dir_.file("device.err"));
    EXPECT_EQ(status, std::optional<int>(0)) << device_err_;
    EXPECT_EQ(summary().at("packets_acked"), frames);
    EXPECT_TRUE(edge::testing::wait_until([&] { return telemetry_rows() >= frames; },
                                          std::chrono::seconds(30)))
        << telemetry_rows() << " of " << frames;
    EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
    expect_every_frame_once("dsekp", static_cast<std::size_t>(frames));
  }
  /// The edge's node struck by `fault` mid-stream (300 frames from each of the 5 devices, 100 ms
  /// apart): the edge must move to the next node and store frames from it within 90 s (the time
  /// is printed and recorded as `property`); `undo` then ends the fault, and every frame must be
  /// in the edge's sinks exactly once.
  void expect_the_edge_to_leave_its_node(const char* what, const char* property,
                                         const std::function<void()>& fault,
                                         const std::function<void()>& undo) {
    provision(5);
    start_edge("");
    dsekp::test::ChildProcess devices = start_devices("300", "100");
    EXPECT_TRUE(
        edge::testing::wait_until([&] { return telemetry_rows() >= 50; }, std::chrono::seconds(20)))
        << telemetry_rows();
    fault();
    const auto gap = time_until_frames_flow_via((kEdgeNode + 1) % kNodes, std::chrono::seconds(90));
    EXPECT_TRUE(gap.has_value()) << "no frame through the next node: " << edge_->stderr_text();
    if (gap) {
      std::cout << "frames flowed again " << gap->count() << " ms after the edge's node " << what
                << "\n";
      RecordProperty(property, static_cast<int>(gap->count()));
    }
    undo();
    expect_devices_done_and_every_frame_once(devices, 1500);
  }
  /// From now until the edge, connected again to `node`, has stored a frame it received on that
  /// connection (at most `timeout`); nothing if that did not happen.
  std::optional<std::chrono::milliseconds> time_until_frames_flow_via(
      int node, std::chrono::seconds timeout) {
    const auto start = std::chrono::steady_clock::now();
    const std::string reconnected =
        "connected to " + cluster()->host(node) + ":" + std::to_string(cluster()->amqp_port(node));
    if (!edge::testing::wait_until(
            [&] { return edge_->stderr_text().find(reconnected) != std::string::npos; }, timeout))
      return std::nullopt;
    const std::int64_t rows = telemetry_rows();
    if (!edge::testing::wait_until([&] { return telemetry_rows() > rows; }, timeout))
      return std::nullopt;
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  }
};

// RabbitMQ checks an MQTT login against its own users; the devices' registry logins are not
// there (`dsekp keys broker-config` writes Mosquitto files only), so they connect anonymously.
TEST_F(RabbitMqCluster, DevicesOnOneNodeReachTheEdgeConsumingFromAnotherExactlyOnce) {
  provision(5);
  start_edge("");
  const auto r = run_devices(
      {"--anonymous", "--mode", "dsekp", "--qos", "1", "--count", "20", "--interval-ms", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary().at("handshakes").at("ok"), 5);  // the ACKs came back over AMQP -> MQTT
  EXPECT_EQ(summary().at("packets_acked"), 100);
  EXPECT_TRUE(
      edge::testing::wait_until([&] { return telemetry_rows() >= 100; }, std::chrono::seconds(10)));
  EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
  expect_every_frame_once("dsekp", 100);
}

// A publisher with a broker account can send the edge's queue a message of any size (RabbitMQ
// takes MQTT publishes of megabytes): the edge reads it frame by frame, keeps only what the
// service needs to refuse it (frame_too_large), and goes on; the devices' frames are unaffected.
TEST_F(RabbitMqCluster, AnOversizedMessageIsRefusedAndTheStreamGoesOn) {
  provision(5);
  start_edge("");
  dsekp::test::MqttTestClient flooder("oversized-publisher");
  ASSERT_EQ(flooder.connect(broker_port(), "", ""), std::optional<int>(0));
  const long before_kb = edge_->peak_rss_kb();
  ASSERT_TRUE(flooder.publish("dsekp/data", std::string(16 * 1024 * 1024, 'x')));
  EXPECT_TRUE(edge::testing::wait_until(
      [&] { return edge_->stderr_text().find("frame_too_large") != std::string::npos; },
      std::chrono::seconds(30)))
      << edge_->stderr_text();
  // Read frame by frame: the edge's peak memory does not grow by the message's 16 MiB.
  const long after_kb = edge_->peak_rss_kb();
  std::printf("edge peak RSS %ld kB before the 16 MiB message, %ld kB after\n", before_kb,
              after_kb);
  EXPECT_LT(after_kb - before_kb, 4 * 1024);
  const auto r = run_devices(
      {"--anonymous", "--mode", "dsekp", "--qos", "1", "--count", "10", "--interval-ms", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(
      edge::testing::wait_until([&] { return telemetry_rows() >= 50; }, std::chrono::seconds(10)));
  EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
  expect_every_frame_once("dsekp", 50);
}

TEST_F(RabbitMqCluster, TheEdgesNodeKilledMidStreamLosesNothing) {
  provision(5);
  start_edge("");
  ASSERT_NE(edge_->stderr_text().find("connected to 127.0.0.1:" +
                                      std::to_string(SharedCluster::get()->amqp_port(kEdgeNode))),
            std::string::npos)
      << edge_->stderr_text();
  dsekp::test::ChildProcess devices = start_devices("60", "40");
  EXPECT_TRUE(
      edge::testing::wait_until([&] { return telemetry_rows() >= 50; }, std::chrono::seconds(20)))
      << telemetry_rows();
  SharedCluster::get()->kill(kEdgeNode);
  // The edge tries the nodes in turn: the next one is the node after its own.
  const auto gap = time_until_frames_flow_via((kEdgeNode + 1) % kNodes, std::chrono::seconds(30));
  EXPECT_TRUE(gap.has_value()) << "no frame through the next node after the kill";
  if (gap) {
    std::cout << "frames flowed again " << gap->count() << " ms after the edge's node was killed\n";
    RecordProperty("recovery_ms", static_cast<int>(gap->count()));
  }
  EXPECT_NE(edge_->stderr_text().find("AMQP connection to 127.0.0.1:" +
                                      std::to_string(SharedCluster::get()->amqp_port(kEdgeNode)) +
                                      " lost"),
            std::string::npos);
  expect_devices_done_and_every_frame_once(devices, 300);
  // The cluster whole again for the tests after this one.
  SharedCluster::get()->start(kEdgeNode);
}

// The devices' node dies: their MQTT connections go with it, and they connect again once it is
// back (a device knows one broker address); what they had sent and the plugin had PUBACKed is in
// the quorum queue, what they had not is sent again.
TEST_F(RabbitMqCluster, TheDevicesNodeKilledMidStreamLosesNothing) {
  provision(5);
  start_edge("");
  dsekp::test::ChildProcess devices = start_devices("100", "40");
  EXPECT_TRUE(
      edge::testing::wait_until([&] { return telemetry_rows() >= 50; }, std::chrono::seconds(20)))
      << telemetry_rows();
  SharedCluster::get()->kill(kDeviceNode);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  SharedCluster::get()->start(kDeviceNode);
  expect_devices_done_and_every_frame_once(devices, 500);
}

// Every node in turn stopped cleanly and started again while the devices send and the edge
// consumes (an upgrade): the queue keeps a majority throughout, the edge follows the nodes,
// the devices reconnect when theirs comes back.
TEST_F(RabbitMqCluster, ARollingRestartOfEveryNodeLosesNothing) {
  provision(5);
  start_edge("");
  dsekp::test::ChildProcess devices = start_devices("200", "100");
  EXPECT_TRUE(
      edge::testing::wait_until([&] { return telemetry_rows() >= 20; }, std::chrono::seconds(20)))
      << telemetry_rows();
  for (int node = 0; node < kNodes; ++node) {
    const std::int64_t before = telemetry_rows();
    SharedCluster::get()->restart(node);
    // Frames still arrive after each restart before the next one begins.
    EXPECT_TRUE(edge::testing::wait_until([&] { return telemetry_rows() > before; },
                                          std::chrono::seconds(30)))
        << "no frame after node " << node << " restarted";
  }
  expect_devices_done_and_every_frame_once(devices, 1000);
}

// The kills placed exactly (edge/daemon/test_hold.hpp: the edge pauses at each moment that
// matters and says so): "before" leaves deliveries read but not committed, so none may have
// been acknowledged (had the edge acknowledged a delivery on receipt, it would be lost);
// "committed" and "after" leave a committed burst not acknowledged, which the queue delivers
// again and the restarted edge refuses as replays.
TEST_F(RabbitMqCluster, KillsAtEachCriticalMomentLoseAndDoubleNothing) {
  using edge::testing::occurrences;
  constexpr int kFrames = 20;  // 5 devices x 4
  const std::vector<std::string> moments = {"before", "committed", "after", "before", "committed"};
  provision(5);
  extra_edge_args_ = {"--test-hold-ms", "150"};
  start_edge("");
  dsekp::test::ChildProcess devices = start_devices("4", "20");
  std::map<std::string, int> landed;  // kills that hit their pause
  for (const std::string& moment : moments) {
    const std::string marker = "test hold: " + moment + "\n";
    const std::size_t seen = occurrences(edge_->stderr_text(), marker);
    ASSERT_TRUE(edge::testing::wait_until(
        [&] { return occurrences(edge_->stderr_text(), marker) > seen; }, std::chrono::seconds(30)))
        << moment << ": " << edge_->stderr_text();
    edge_->kill();
    if (edge_->stderr_text().ends_with(marker)) ++landed[moment];
    ASSERT_TRUE(edge_->start(/*wait_ready=*/false)) << "restart after " << moment;
  }
  EXPECT_GE(landed["before"], 1);
  EXPECT_GE(landed["committed"], 1);
  EXPECT_GE(landed["after"], 1);
  expect_devices_done_and_every_frame_once(devices, kFrames);
  EXPECT_GE(occurrences(edge_->all_stderr(), "rejected replay"),
            static_cast<std::size_t>(landed["committed"] + landed["after"]));
  std::printf("landed kills: before %d, committed %d, after %d\n", landed["before"],
              landed["committed"], landed["after"]);
}

TEST_F(RabbitMqCluster, AnEdgeKilledMidStreamLosesNothing) {
  const std::int64_t at_kill = kill_and_restart_mid_run({"--anonymous"});
  EXPECT_GT(at_kill, 0);
  EXPECT_LT(at_kill, 200);
}

// The edge's node hangs (SIGSTOP) with its sockets open: the edge notices the missing AMQP
// heartbeats (two 10 s intervals at most) and moves to the next node, where it consumes again
// once the cluster has counted the frozen node down and moved the queue's leader (net_ticktime,
// 15 s in these nodes); nothing is lost.
TEST_F(RabbitMqCluster, TheEdgesNodeFrozenMidStreamIsLeftAndNothingIsLost) {
  expect_the_edge_to_leave_its_node(
      "froze", "frozen_recovery_ms", [&] { SharedCluster::get()->freeze(kEdgeNode); },
      [&] { SharedCluster::get()->thaw(kEdgeNode); });
  // The cluster whole again for whatever runs after this test.
  SharedCluster::get()->kill(kEdgeNode);
  SharedCluster::get()->start(kEdgeNode);
}

// Partitions: the three nodes each in a network namespace of their own on a bridge
// (tests/support/host_network.hpp), with long node names and an epmd in each namespace; the
// devices and the edge stay on the machine's side of the bridge.
class RabbitMqClusterCutOff : public RabbitMqCluster {
 protected:
  void SetUp() override {
    if (engines::RabbitMqCluster::executable().empty())
      GTEST_SKIP() << "rabbitmq-server is not installed (Debian: apt-get install "
                      "rabbitmq-server); the clustered broker tests need it";
    if (const std::string why = dsekp::test::HostNetwork::unavailable_reason(); !why.empty())
      GTEST_SKIP() << why;
    hosts_ = std::make_unique<dsekp::test::HostNetwork>(kNodes);
    std::vector<engines::ServerPlacement> placements;
    for (int i = 0; i < kNodes; ++i) placements.push_back({hosts_->address(i), hosts_->netns(i)});
    ASSERT_NO_THROW(cluster_ = std::make_unique<engines::RabbitMqCluster>(dir_.file("rabbitmq-cut"),
                                                                          kNodes, placements));
  }
  void TearDown() override {
    RabbitMqCluster::TearDown();
    cluster_.reset();  // the nodes before their namespaces
    hosts_.reset();
  }
  engines::RabbitMqCluster* cluster() const override { return cluster_.get(); }
  std::unique_ptr<dsekp::test::HostNetwork> hosts_;
  std::unique_ptr<engines::RabbitMqCluster> cluster_;
};

// The node the edge consumes from (where it declared the queue) is cut off mid-stream: its link
// drops every packet both ways, it keeps running. The edge's AMQP connection hangs without a
// reset until the missing heartbeats tell it (two 10 s intervals at most), then it consumes
// through the next node once the majority has counted the cut node down (net_ticktime 15 s) and
// moved the queue's leader; the cut node, in a minority, pauses itself (pause_minority). After
// the link is back it rejoins. Nothing the plugin PUBACKed is lost, nothing is stored twice.
TEST_F(RabbitMqClusterCutOff, TheEdgesNodeCutOffMidStreamIsLeftAndNothingIsLost) {
  expect_the_edge_to_leave_its_node(
      "was cut off", "cut_off_recovery_ms", [&] { hosts_->cut(kEdgeNode); },
      [&] { hosts_->heal(kEdgeNode); });
  // Asked through a node of the majority (the cut one may still be pausing).
  EXPECT_NO_THROW(cluster_->await_whole((kEdgeNode + 1) % kNodes))
      << "the cut-off node did not rejoin";
}

}  // namespace
}  // namespace dsekp::broker_compat
