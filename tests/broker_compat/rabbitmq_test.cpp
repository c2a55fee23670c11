// The end-to-end path and the MQTT probes on RabbitMQ's MQTT plugin (rabbitmq-server 3.10 in
// Debian 12), the other clusterable broker Debian ships. One private node serves the whole
// program (it takes 10-20 s to start here), so ctest runs this program as one test
// (broker_compat.rabbitmq); each edge has its own client id. Skips when rabbitmq-server is not
// installed. Where RabbitMQ differs from Mosquitto the test asserts what
// it does today, with a comment (docs/SCALING.md, "Broker independence").
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "fleet_fixture.hpp"
#include "mqtt_probes.hpp"
#include "rabbitmq_fixture.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/registry_bed.hpp"

namespace dsekp::broker_compat {
namespace {

using RabbitMq = RabbitMqTest;

// These devices connect anonymously (the node allows it); with the registry's accounts
// imported (`dsekp keys broker-config --rabbitmq-definitions`) they log in as themselves:
// rabbitmq_accounts_test.cpp.
TEST_F(RabbitMq, DsekpQos1WithEdgeOnMqtt311) {
  provision(5);
  start_edge("3.1.1");
  const auto r = run_devices(
      {"--anonymous", "--mode", "dsekp", "--qos", "1", "--count", "20", "--interval-ms", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary().at("packets_acked"), 100);
  EXPECT_EQ(summary().at("handshakes").at("ok"), 5);
  EXPECT_TRUE(wait_until([&] { return telemetry_rows() >= 100; }, std::chrono::seconds(10)));
  EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
  expect_every_frame_once("dsekp", 100);
}

TEST_F(RabbitMq, EdgeKilledMidRunAndRestartedLosesNothingAndAcceptsNothingTwice) {
  const std::int64_t at_kill = kill_and_restart_mid_run({"--anonymous"});
  std::cerr << "[ figures  ] telemetry rows at the kill: " << at_kill << " of 200\n";
}

// RabbitMQ 3.10 speaks MQTT 3.1 and 3.1.1 only, and it does not answer an MQTT 5 CONNECT with a
// CONNACK: it cannot parse the CONNECT's properties and closes the connection (its log: "MQTT
// cannot parse a frame"). `dsekp edge --mqtt-version auto` (the default) counts two such closes in
// a row as a refusal and falls back to 3.1.1 (edge/mqtt/mqtt_client.cpp, note_silent_close).
TEST_F(RabbitMq, EdgeOnAutoFallsBackAfterTwoUnansweredMqtt5Connects) {
  provision(1);
  const std::string err = dir_.file("edge-auto.err");
  dsekp::test::ChildProcess edge(
      {::dsekp::test::cli_path(), "edge", "--broker", broker_address(), "--db", registry_,
       "--logs-dir", edge_logs_, "--metrics", "off", "--client-id", "edge-auto"},
      dir_.file("edge-auto.out"), err);
  EXPECT_TRUE(
      wait_until([&] { return dsekp::test::read_file(err).find("ready") != std::string::npos; },
                 std::chrono::seconds(20)))
      << dsekp::test::read_file(err);
  const std::string text = dsekp::test::read_file(err);
  EXPECT_NE(text.find("without a CONNACK; falling back to MQTT 3.1.1"), std::string::npos) << text;
  EXPECT_NE(text.find("(MQTT 3.1.1)"), std::string::npos) << text;
  EXPECT_NE(broker_log().find("MQTT cannot parse a frame"), std::string::npos);
  edge.signal(SIGTERM);
  EXPECT_EQ(edge.wait_for(std::chrono::seconds(10)), std::optional<int>(0));
}

TEST_F(RabbitMq, Mqtt5ConnectGetsNoConnack) {
  EXPECT_EQ(probe_mqtt5_connect(broker_port()), std::nullopt);
}

TEST_F(RabbitMq, Qos0AndQos1AreDeliveredAtTheirQos) {
  for (const int qos : {0, 1}) {
    SCOPED_TRACE(qos);
    const QosObservation o = probe_qos(broker_port(), qos, "r" + std::to_string(qos));
    EXPECT_EQ(o.granted, std::optional<int>(qos));
    EXPECT_TRUE(o.publish_completed);
    EXPECT_EQ(o.delivered, 1u);
    EXPECT_EQ(o.delivered_qos, qos);
  }
}

// No QoS 2 in RabbitMQ 3.10: a QoS 2 subscription is granted QoS 1, and a QoS 2 publish is
// delivered at QoS 1 but its flow never completes for the publisher (no PUBREC; libmosquitto
// ends the connection).
TEST_F(RabbitMq, Qos2IsDowngradedToQos1) {
  const QosObservation o = probe_qos(broker_port(), 2, "r2");
  EXPECT_EQ(o.granted, std::optional<int>(1));
  EXPECT_FALSE(o.publish_completed);
  EXPECT_EQ(o.delivered, 1u);
  EXPECT_EQ(o.delivered_qos, 1);
}

TEST_F(RabbitMq, RetainedMessagesWork) {
  const RetainedObservation o = probe_retained(broker_port());
  EXPECT_TRUE(o.got_last);
  EXPECT_TRUE(o.retain_flag);
  EXPECT_EQ(o.count, 1u);
  EXPECT_TRUE(o.cleared);
}

TEST_F(RabbitMq, PersistentSessionQueuesQos1WhileAway) {
  const PersistentObservation o = probe_persistent_session(broker_port());
  EXPECT_TRUE(o.session_present);
  EXPECT_EQ(o.queued_delivered, 10u);
  EXPECT_TRUE(o.in_order);
}

// No shared subscriptions in RabbitMQ 3.10: as on NATS the filter is granted but is an ordinary
// topic, so the members silently get nothing, and a publish on the literal topic reaches both.
TEST_F(RabbitMq, SharedSubscriptionIsGrantedButIsAnOrdinaryTopic) {
  const SharedObservation o = probe_shared_subscription(broker_port());
  EXPECT_EQ(o.granted_a, std::optional<int>(1));
  EXPECT_EQ(o.granted_b, std::optional<int>(1));
  EXPECT_EQ(o.plain, 20u);
  EXPECT_EQ(o.a, 0u);
  EXPECT_EQ(o.b, 0u);
  EXPECT_TRUE(o.literal_to_a);
  EXPECT_TRUE(o.literal_to_b);
}

// RabbitMQ routes MQTT topics as AMQP routing keys, swapping '/' and '.': a message published on
// dsekp/init/ack/kitchen.sensor reaches the subscriber of that topic, but arrives named
// dsekp/init/ack/kitchen/sensor. A space and empty levels pass unchanged.
TEST_F(RabbitMq, ADotInATopicArrivesAsASlash) {
  int round = 0;
  const TopicObservation dot = probe_topic(broker_port(), "dsekp/init/ack/kitchen.sensor", ++round);
  EXPECT_EQ(dot.granted, std::optional<int>(1));
  EXPECT_TRUE(dot.publish_completed);
  EXPECT_EQ(dot.delivered_topic, std::optional<std::string>("dsekp/init/ack/kitchen/sensor"));
  for (const std::string topic : {"dsekp/x y", "/dsekp/lead", "dsekp//empty", "dsekp/trail/"}) {
    SCOPED_TRACE(topic);
    const TopicObservation o = probe_topic(broker_port(), topic, ++round);
    EXPECT_EQ(o.granted, std::optional<int>(1));
    EXPECT_EQ(o.delivered_topic, std::optional<std::string>(topic));
  }
}

// So a device whose dev_id holds '.' (which the registry allows) never sees its ACK: it
// subscribed to dsekp/init/ack/kitchen.sensor, the edge answers there, the ACK arrives named
// dsekp/init/ack/kitchen/sensor, and the device, which dispatches on the topic it subscribed to,
// drops it. Its handshakes time out (shortened here) and it gives up.
TEST_F(RabbitMq, ADeviceWithADotInItsIdNeverSeesItsAck) {
  edge::DeviceMaterial dotted;
  ASSERT_TRUE(edge::testing::register_device(registry_, "kitchen.sensor", dotted));
  std::ofstream(credentials_) << edge::material_json(
      dotted, {"127.0.0.1", static_cast<std::uint16_t>(broker_port())});
  start_edge("3.1.1");
  const auto r = run_devices({"--anonymous", "--mode", "dsekp", "--count", "3", "--interval-ms",
                              "20", "--retransmit-initial-ms", "50", "--init-max-age-ms", "400",
                              "--max-handshake-failures", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("kitchen.sensor: 2 handshake(s) in a row ended without a valid ACK"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(summary().at("handshakes").at("ok"), 0);
  EXPECT_EQ(summary().at("packets_sent"), 0);
  EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
}

TEST_F(RabbitMq, PayloadsUpTo2MiBAreDelivered) {
  int round = 0;
  for (const std::size_t size : {std::size_t{65536}, std::size_t{1048577}, std::size_t{2} << 20})
    EXPECT_EQ(probe_payload(broker_port(), size, ++round), std::optional<std::size_t>(size));
}

}  // namespace
}  // namespace dsekp::broker_compat
