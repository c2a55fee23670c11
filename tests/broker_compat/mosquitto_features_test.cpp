// The same broker probes as nats_mqtt_features_test.cpp (mqtt_probes.hpp) against Mosquitto
// 2.0, the reference broker of every other suite, so that the comparison table in
// docs/SCALING.md ("Broker independence") is measured on both sides, not recalled.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "mqtt_probes.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::broker_compat {
namespace {

class MosquittoMqtt : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.file("broker"));
    broker_ = std::make_unique<dsekp::test::MosquittoBroker>(dir_.file("broker"),
                                                             "allow_anonymous true\n");
  }
  void TearDown() override {
    if (HasFailure() && broker_) std::cerr << "mosquitto log:\n" << broker_->log();
  }
  int port() const { return broker_->port(); }

  dsekp::test::TempDir dir_;
  std::unique_ptr<dsekp::test::MosquittoBroker> broker_;
};

TEST_F(MosquittoMqtt, Mqtt5ConnectIsAccepted) {
  EXPECT_EQ(probe_mqtt5_connect(port()), std::optional<int>(0));
}

TEST_F(MosquittoMqtt, Qos0To2AreDeliveredAtTheirQos) {
  for (const int qos : {0, 1, 2}) {
    SCOPED_TRACE(qos);
    const QosObservation o = probe_qos(port(), qos, std::to_string(qos));
    EXPECT_EQ(o.granted, std::optional<int>(qos));
    EXPECT_TRUE(o.publish_completed);
    EXPECT_FALSE(o.publisher_closed);
    EXPECT_EQ(o.delivered, 1u);
    EXPECT_EQ(o.delivered_qos, qos);
  }
}

TEST_F(MosquittoMqtt, RetainedMessagesWork) {
  const RetainedObservation o = probe_retained(port());
  EXPECT_TRUE(o.got_last);
  EXPECT_TRUE(o.retain_flag);
  EXPECT_EQ(o.count, 1u);
  EXPECT_TRUE(o.cleared);
}

TEST_F(MosquittoMqtt, PersistentSessionQueuesQos1WhileAway) {
  const PersistentObservation o = probe_persistent_session(port());
  EXPECT_TRUE(o.session_present);
  EXPECT_EQ(o.queued_delivered, 10u);
  EXPECT_TRUE(o.in_order);
}

// Mosquitto 2.0 honours $share/ for 3.1.1 clients too and splits the messages between the
// members (round robin), each message to exactly one of them. A publish on the filter's literal
// text reaches neither.
TEST_F(MosquittoMqtt, SharedSubscriptionSplitsTheMessages) {
  const SharedObservation o = probe_shared_subscription(port());
  EXPECT_EQ(o.granted_a, std::optional<int>(1));
  EXPECT_EQ(o.granted_b, std::optional<int>(1));
  EXPECT_EQ(o.plain, 20u);
  EXPECT_EQ(o.a + o.b, 20u);
  EXPECT_GT(o.a, 0u);
  EXPECT_GT(o.b, 0u);
  EXPECT_FALSE(o.literal_to_a);
  EXPECT_FALSE(o.literal_to_b);
  std::cerr << "[ $share   ] split a=" << o.a << " b=" << o.b << ", literal to a=" << o.literal_to_a
            << " b=" << o.literal_to_b << "\n";
}

TEST_F(MosquittoMqtt, DotAndSpaceInTopicsWork) {
  int round = 0;
  for (const std::string topic :
       {"dsekp/init/ack/kitchen.sensor", "dsekp/x y", "/dsekp/lead", "dsekp//empty"}) {
    SCOPED_TRACE(topic);
    const TopicObservation o = probe_topic(port(), topic, ++round);
    EXPECT_EQ(o.granted, std::optional<int>(1));
    EXPECT_TRUE(o.publish_completed);
    EXPECT_EQ(o.delivered_topic, std::optional<std::string>(topic));
  }
}

TEST_F(MosquittoMqtt, PayloadsUpTo2MiBAreDelivered) {
  int round = 0;
  for (const std::size_t size : {std::size_t{65536}, std::size_t{1048577}, std::size_t{2} << 20})
    EXPECT_EQ(probe_payload(port(), size, ++round), std::optional<std::size_t>(size));
}

}  // namespace
}  // namespace dsekp::broker_compat
