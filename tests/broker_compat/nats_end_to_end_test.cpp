// The end-to-end path on NATS instead of Mosquitto: the real `dsekp edge` and a fleet of 5 real
// `dsekp device`s (QoS 1) through nats-server's MQTT listener, DSEKP and PSK, with the edge's
// MQTT version forced to 3.1.1 and left on auto. Every frame the devices logged must be in the
// edge's server CSV and telemetry table exactly once (fleet_fixture.hpp).
#include <gtest/gtest.h>

#include <string>

#include "fleet_fixture.hpp"
#include "tests/support/build_paths.hpp"

namespace dsekp::broker_compat {
namespace {

using NatsEndToEnd = NatsFleetTest;

constexpr int kDevices = 5;
constexpr int kFrames = 20;
constexpr std::size_t kTotal = kDevices * kFrames;

class NatsFleet : public NatsFleetTest {
 protected:
  void run_and_check(const std::string& mode) {
    const auto r = run_devices(
        {"--mode", mode, "--qos", "1", "--count", std::to_string(kFrames), "--interval-ms", "20"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json s = summary();
    EXPECT_EQ(s.at("devices"), kDevices);
    EXPECT_EQ(s.at("packets_sent"), kTotal);
    EXPECT_EQ(s.at("packets_acked"), kTotal);  // every QoS 1 PUBACK came from NATS
    EXPECT_EQ(s.at("publish_errors"), 0);
    EXPECT_EQ(s.at("disconnects"), 0);
    if (mode == "dsekp") {
      EXPECT_EQ(s.at("handshakes").at("ok"), kDevices);  // the per-device ACK topic works
      EXPECT_EQ(s.at("handshakes").at("timeout"), 0);
    }
    // The edge commits a frame before it acknowledges it to NATS; wait for the last commits.
    EXPECT_TRUE(wait_until([&] { return telemetry_rows() >= static_cast<std::int64_t>(kTotal); },
                           std::chrono::seconds(10)))
        << telemetry_rows() << " of " << kTotal;
    EXPECT_EQ(edge_->terminate(), std::optional<int>(0));  // flushes the CSV logs
    expect_every_frame_once(mode, kTotal);
  }
};

TEST_F(NatsFleet, DsekpQos1WithEdgeOnMqtt311) {
  provision(kDevices);
  start_edge("3.1.1");
  EXPECT_NE(edge_->stderr_text().find("(MQTT 3.1.1)"), std::string::npos) << edge_->stderr_text();
  run_and_check("dsekp");
}

TEST_F(NatsFleet, PskQos1WithEdgeOnMqtt311) {
  provision(kDevices);
  start_edge("3.1.1");
  run_and_check("psk");
}

// NATS 2.9 speaks MQTT 3.1.1 only: it answers the edge's MQTT 5 CONNECT with CONNACK return
// code 1 (unacceptable protocol version), and `--mqtt-version auto` (the default) falls back to
// 3.1.1 at once: the fallback path against a real 3.1.1-only broker.
TEST_F(NatsFleet, DsekpWithEdgeOnAutoFallsBackTo311) {
  provision(kDevices);
  start_edge("auto");
  const std::string err = edge_->stderr_text();
  EXPECT_NE(err.find("the broker refused MQTT 5; falling back to MQTT 3.1.1"), std::string::npos)
      << err;
  EXPECT_NE(err.find("(MQTT 3.1.1)"), std::string::npos) << err;
  run_and_check("dsekp");
}

// Forcing MQTT 5 on NATS: the edge must say why it cannot connect, not hang or pretend.
TEST_F(NatsEndToEnd, EdgeForcedToMqtt5IsRefusedWithAClearMessage) {
  provision(1);
  const std::string err = dir_.file("edge-v5.err");
  dsekp::test::ChildProcess edge(
      {::dsekp::test::cli_path(), "edge", "--broker", nats_->mqtt_address(), "--db", registry_,
       "--logs-dir", edge_logs_, "--metrics", "off", "--mqtt-version", "5"},
      dir_.file("edge-v5.out"), err);
  EXPECT_TRUE(
      wait_until([&] { return dsekp::test::read_file(err).find("refused") != std::string::npos; },
                 std::chrono::seconds(10)))
      << dsekp::test::read_file(err);
  EXPECT_EQ(dsekp::test::read_file(err).find("ready"), std::string::npos);
  edge.stop();
}

}  // namespace
}  // namespace dsekp::broker_compat
