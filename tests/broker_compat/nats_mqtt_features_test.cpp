// What nats-server's MQTT support does with the MQTT features DSEKP uses or might use
// (mqtt_probes.hpp): MQTT 5, QoS 0/1/2, retained messages, persistent sessions, the per-device
// ACK and downlink topics, `$share/<group>/...` shared subscriptions, topic characters (a dev_id
// may hold '.'), payload size. Where NATS differs from Mosquitto 2.0 (mosquitto_features_test.cpp
// asserts the same probes there) the test asserts what NATS does today, with a comment, so that a
// NATS version that changes it fails here and gets noticed (docs/SCALING.md, "Broker
// independence").
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "fleet_fixture.hpp"
#include "mqtt_probes.hpp"
#include "nats_server.hpp"
#include "probe_client.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::broker_compat {
namespace {

using dsekp::test::ProbeClient;
using namespace std::chrono_literals;

class NatsMqtt : public ::testing::Test {
 protected:
  void SetUp() override {
    DSEKP_SKIP_WITHOUT_NATS();
    std::filesystem::create_directories(dir_.file("nats"));
    nats_ = std::make_unique<dsekp::test::NatsServer>(dir_.file("nats"));
  }
  void TearDown() override {
    if (HasFailure() && nats_)
      std::cerr << "nats-server log (tail):\n" << log_tail(nats_->log(), 4000);
  }
  int port() const { return nats_->mqtt_port(); }

  dsekp::test::TempDir dir_;
  std::unique_ptr<dsekp::test::NatsServer> nats_;
};

// The findings below, and those in docs/SCALING.md, are for the version printed here.
TEST_F(NatsMqtt, ReportsItsVersion) {
  const std::string version = dsekp::test::NatsServer::version(dir_.path().string());
  EXPECT_EQ(version.rfind("nats-server: v2.", 0), 0u) << version;
  std::cerr << "[ nats     ] " << version << "\n";
}

// NATS 2.9 implements MQTT 3.1.1 only. It answers an MQTT 5 CONNECT with the 3.1.1 CONNACK
// return code 1 (its log: "unacceptable protocol version of 5"), which libmosquitto reports to an
// MQTT 5 client as reason code 132 (unsupported protocol version); `dsekp edge --mqtt-version
// auto` falls back to 3.1.1 on either. Mosquitto 2.0 accepts MQTT 5.
TEST_F(NatsMqtt, Mqtt5ConnectIsRefused) {
  EXPECT_EQ(probe_mqtt5_connect(port()), std::optional<int>(132));
  EXPECT_NE(nats_->log().find("unacceptable protocol version of 5"), std::string::npos);
}

TEST_F(NatsMqtt, Qos0AndQos1AreDeliveredAtTheirQos) {
  for (const int qos : {0, 1}) {
    SCOPED_TRACE(qos);
    const QosObservation o = probe_qos(port(), qos, std::to_string(qos));
    EXPECT_EQ(o.granted, std::optional<int>(qos));
    EXPECT_TRUE(o.publish_completed);
    EXPECT_EQ(o.delivered, 1u);
    EXPECT_EQ(o.delivered_qos, qos);
  }
}

// NATS 2.9 has no QoS 2 (today's NATS documentation lists it, so a later version may): a QoS 2
// subscription is granted QoS 1, and a QoS 2 PUBLISH makes the server close the publisher's
// connection. Mosquitto 2.0 grants and delivers QoS 2. DSEKP uses QoS 0 and 1 only (`dsekp device
// --qos 0|1`), so this does not matter to it.
TEST_F(NatsMqtt, Qos2IsDowngradedOnSubscribeAndClosesThePublisher) {
  const QosObservation o = probe_qos(port(), 2, "2");
  EXPECT_EQ(o.granted, std::optional<int>(1));
  EXPECT_FALSE(o.publish_completed);
  EXPECT_TRUE(o.publisher_closed);
  EXPECT_EQ(o.delivered, 0u);
}

// Retained messages work (NATS keeps them in JetStream): a later subscriber gets only the last
// one, with the retain flag, and an empty retained message clears it. DSEKP does not use them.
TEST_F(NatsMqtt, RetainedMessagesWork) {
  const RetainedObservation o = probe_retained(port());
  EXPECT_TRUE(o.got_last);
  EXPECT_TRUE(o.retain_flag);
  EXPECT_EQ(o.count, 1u);
  EXPECT_TRUE(o.cleared);
}

// A client with clean_session = false (as the edge connects) finds its session again: session
// present, and the QoS 1 messages published while it was away, in order.
TEST_F(NatsMqtt, PersistentSessionQueuesQos1WhileAway) {
  const PersistentObservation o = probe_persistent_session(port());
  EXPECT_TRUE(o.session_present);
  EXPECT_EQ(o.queued_delivered, 10u);
  EXPECT_TRUE(o.in_order);
}

// What a device subscribes to (DEVICE.md, "Boot"): its own ACK and downlink topics at QoS 1; a
// message on another device's topic does not reach it; a single-level wildcard works.
TEST_F(NatsMqtt, PerDeviceAckAndDownlinkTopics) {
  ProbeClient device("esp32-00"), watcher("probe-watch"), edge("probe-edge");
  for (ProbeClient* c : {&device, &watcher, &edge})
    ASSERT_EQ(c->connect(port()), std::optional<int>(0));
  EXPECT_EQ(device.subscribe("dsekp/init/ack/esp32-00", 1), std::optional<int>(1));
  EXPECT_EQ(device.subscribe("dsekp/down/esp32-00", 1), std::optional<int>(1));
  EXPECT_EQ(watcher.subscribe("dsekp/init/ack/+", 1), std::optional<int>(1));
  ASSERT_TRUE(edge.publish("dsekp/init/ack/esp32-01", "not yours", 1));
  ASSERT_TRUE(edge.publish("dsekp/init/ack/esp32-00", "ack", 1));
  ASSERT_TRUE(edge.publish("dsekp/down/esp32-00", "down", 1));
  ASSERT_TRUE(device.wait_for_count(2));
  device.drain(300ms);
  ASSERT_EQ(device.received().size(), 2u);
  // Each of the device's own topics once, and nothing else. Not in publish order: NATS does not
  // keep the order across two subscriptions of one client (seen under load).
  std::set<std::string> topics;
  for (const auto& m : device.received()) topics.insert(m.topic);
  EXPECT_EQ(topics, (std::set<std::string>{"dsekp/init/ack/esp32-00", "dsekp/down/esp32-00"}));
  EXPECT_TRUE(watcher.wait_for_count(2));
}

// `$share/<group>/<topic>` (MQTT 5 shared subscriptions, which Mosquitto 2.0 also honours for
// 3.1.1 clients, splitting the messages between the members). NATS 2.9 has no shared
// subscriptions: it grants the subscription but takes `$share/g/dsekp/data` as an ordinary topic
// of that name, so the members silently get none of the messages on dsekp/data, and a message
// on the literal topic goes to every member. Several edges on NATS cannot split the traffic this
// way.
TEST_F(NatsMqtt, SharedSubscriptionIsGrantedButIsAnOrdinaryTopic) {
  const SharedObservation o = probe_shared_subscription(port());
  EXPECT_EQ(o.granted_a, std::optional<int>(1));
  EXPECT_EQ(o.granted_b, std::optional<int>(1));
  EXPECT_EQ(o.plain, 20u);  // NATS did route all 20 to an ordinary subscriber
  EXPECT_EQ(o.a, 0u);
  EXPECT_EQ(o.b, 0u);
  EXPECT_TRUE(o.literal_to_a);
  EXPECT_TRUE(o.literal_to_b);
}

// Topic characters. NATS maps topic levels to subject tokens separated by '.', so NATS 2.9
// refuses ' ' and '.' in a topic (its log: "characters ' ' and '.' not supported for MQTT
// topics"): a SUBACK with 0x80 for a filter, and it closes the connection of a client that
// publishes to one. Leading, trailing and empty levels and UTF-8 work. A dev_id may hold '.',
// and it goes into topics: see nats_dev_id_test.cpp for what that does.
TEST_F(NatsMqtt, DotAndSpaceInTopicsAreRefused) {
  struct Case {
    std::string topic;
    bool works;
  };
  int round = 0;
  for (const Case& c : std::vector<Case>{{"dsekp/init/ack/esp32_01-a", true},
                                         {"/dsekp/lead", true},
                                         {"dsekp//empty", true},
                                         {"dsekp/trail/", true},
                                         {"dsekp/\xc3\xa9t\xc3\xa9", true},
                                         {"dsekp/init/ack/kitchen.sensor", false},
                                         {"dsekp/x y", false}}) {
    SCOPED_TRACE(c.topic);
    const TopicObservation o = probe_topic(port(), c.topic, ++round);
    EXPECT_EQ(o.granted, std::optional<int>(c.works ? 1 : 128));
    EXPECT_EQ(o.publish_completed, c.works);
    EXPECT_EQ(o.publisher_closed, !c.works);
    EXPECT_EQ(o.delivered_topic, c.works ? std::optional<std::string>(c.topic) : std::nullopt);
  }
  EXPECT_NE(nats_->log().find("characters ' ' and '.' not supported for MQTT topics"),
            std::string::npos);
}

// Payload size: NATS 2.9 delivered MQTT publishes of 2 MiB at QoS 1 with its default config,
// past its max_payload (1 MB) for NATS clients. DSEKP frames are under 1 KiB.
TEST_F(NatsMqtt, PayloadsUpTo2MiBAreDelivered) {
  int round = 0;
  for (const std::size_t size : {std::size_t{65536}, std::size_t{1048577}, std::size_t{2} << 20})
    EXPECT_EQ(probe_payload(port(), size, ++round), std::optional<std::size_t>(size));
}

}  // namespace
}  // namespace dsekp::broker_compat
