// A dev_id may hold '.' (A-Z a-z 0-9 . _ -), and it goes into MQTT topics: the device's
// dsekp/init/ack/{dev_id} and dsekp/down/{dev_id}, and the edge's republish on plain/{dev_id}.
// NATS maps MQTT topic levels to NATS subject tokens separated by '.', so NATS 2.9 refuses a
// topic holding '.': a SUBACK with 0x80, and it closes the connection of a client that
// publishes to one. These tests record what that does to the real edge and devices.
#include <gtest/gtest.h>

#include <string>

#include "fleet_fixture.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/scripted_device.hpp"

namespace dsekp::broker_compat {
namespace {

using dsekp::test::MqttTestClient;
using edge::testing::as_string;
using edge::testing::ScriptedDevice;

using NatsDevId = NatsFleetTest;

// The device simulator gives up on a refused subscription (DEVICE.md, "Connections"): a device
// whose dev_id holds '.' cannot run DSEKP on NATS 2.9. On Mosquitto it works.
TEST_F(NatsDevId, ADeviceWithADotInItsIdGivesUpOnItsRefusedAckSubscription) {
  edge::DeviceMaterial dotted;
  ASSERT_TRUE(edge::testing::register_device(registry_, "kitchen.sensor", dotted));
  std::ofstream(credentials_) << edge::material_json(
      dotted, {"127.0.0.1", static_cast<std::uint16_t>(nats_->mqtt_port())});
  const auto r = run_devices({"--mode", "dsekp", "--count", "3", "--interval-ms", "20"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("kitchen.sensor: the broker refused the subscription to "
                       "dsekp/init/ack/kitchen.sensor"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(summary().at("devices_failed"), 1);
  EXPECT_EQ(summary().at("packets_sent"), 0);
}

// One INIT from such a device (sent here by a scripted device that does not subscribe) takes
// the edge off NATS: the edge answers on dsekp/init/ack/kitchen.sensor, NATS closes the edge's
// connection before its PUBACK for the INIT, redelivers the INIT on the reconnect (persistent
// session), and so on, about once a second, until the INIT is older than --max-skew. Meanwhile
// the other devices get no ACK. The edge itself stays up and stops cleanly on SIGTERM.
// (The same holds for any frame of such a device with the republish on plain/{dev_id} on, once.)
TEST_F(NatsDevId, OneInitFromADottedDevIdPutsTheEdgeInAReconnectLoop) {
  edge::DeviceMaterial dotted, plain;
  ASSERT_TRUE(edge::testing::register_device(registry_, "kitchen.sensor", dotted));
  ASSERT_TRUE(edge::testing::register_device(registry_, "esp32-00", plain));
  start_edge("3.1.1");
  const auto now_s = static_cast<std::uint32_t>(edge::testing::unix_ms_now() / 1000);

  MqttTestClient dotted_client("kitchen.sensor");
  ASSERT_EQ(dotted_client.connect(nats_->mqtt_port(), "", ""), std::optional<int>(0));
  ScriptedDevice dotted_device(dotted, 7);
  ASSERT_TRUE(
      dotted_client.publish("dsekp/init", as_string(dotted_device.init(Encoding::json, now_s))));
  const auto losses = [&] {
    const std::string err = edge_->all_stderr();
    std::size_t n = 0;
    for (auto at = err.find("connection lost"); at != std::string::npos;
         at = err.find("connection lost", at + 1))
      ++n;
    return n;
  };
  EXPECT_TRUE(wait_until([&] { return losses() >= 2; }, std::chrono::seconds(10)))
      << edge_->all_stderr();

  MqttTestClient client("esp32-00");
  ASSERT_EQ(client.connect(nats_->mqtt_port(), "", ""), std::optional<int>(0));
  ASSERT_EQ(client.subscribe("dsekp/init/ack/esp32-00"), std::optional<int>(1));
  ScriptedDevice device(plain, 8);
  ASSERT_TRUE(client.publish("dsekp/init", as_string(device.init(Encoding::json, now_s))));
  EXPECT_FALSE(client.wait_for_message("dsekp/init/ack/esp32-00"));  // waits 5 s
  EXPECT_GE(losses(), 4u);
  // The edge's client id is "edge-" and the test's name (fleet_fixture.hpp).
  EXPECT_NE(nats_->log().find("\"edge-OneInitFromADottedDevIdPutsTheEdgeInAReconnectLoop\" - "
                              "characters ' ' and '.' not supported"),
            std::string::npos);
  EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
  std::cerr << "[ figures  ] edge connection losses in about 6 s: " << losses() << "\n";
}

}  // namespace
}  // namespace dsekp::broker_compat
