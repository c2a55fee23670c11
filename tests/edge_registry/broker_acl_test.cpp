// The broker files of `dsekp keys broker-config` on a real Mosquitto 2.0 broker: each test writes
// a registry with two devices, generates the password and ACL files, starts mosquitto on a free
// loopback port with exactly the printed mosquitto.conf lines, and checks with libmosquitto
// clients what each login can and cannot do.
//
// "Cannot read X" is checked without sleeping: after the message a client must not get, the
// edge publishes a marker on a topic that client may read. Mosquitto delivers one publisher's
// QoS 1 messages to a subscriber in order, so once the marker has arrived the forbidden message
// would have arrived before it had the broker delivered it at all.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "edge/registry/broker_config.hpp"
#include "edge/registry/device_registry.hpp"
#include "mosquitto_broker.hpp"
#include "mqtt_test_client.hpp"
#include "temp_dir.hpp"

namespace dsekp::edge {
namespace {

using test::MqttTestClient;

constexpr int kGrantedQos1 = 1;

class BrokerAclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        DeviceRegistry::open(dir_.file("registry.db"), OpenMode::create_if_missing, registry_)
            .ok());
    ASSERT_TRUE(registry_->add("dev-a", a_).ok());
    ASSERT_TRUE(registry_->add("dev-b", b_).ok());
    write_config();
    broker_ = std::make_unique<test::MosquittoBroker>(dir_.path().string(), files_.conf_lines);
  }

  void TearDown() override {
    if (HasFailure() && broker_) std::cerr << "mosquitto log:\n" << broker_->log();
    broker_.reset();  // stops the broker (SIGTERM, then SIGKILL)
  }

  void write_config() {
    const auto s = write_broker_config(*registry_, dir_.file("broker"),
                                       BrokerConfigOptions{"edge", "", true}, files_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  /// A client logged in as `user`; fails the test if the broker refuses it.
  std::unique_ptr<MqttTestClient> login(const std::string& user, const std::string& password) {
    auto client = std::make_unique<MqttTestClient>(user + "-client");
    const auto rc = client->connect(broker_->port(), user, password);
    EXPECT_EQ(rc, 0) << user << " was not let in";
    return client;
  }
  std::unique_ptr<MqttTestClient> edge() { return login("edge", files_.edge.password); }
  std::unique_ptr<MqttTestClient> device_a() { return login("dev-a", a_.broker_password); }
  std::unique_ptr<MqttTestClient> device_b() { return login("dev-b", b_.broker_password); }

  test::TempDir dir_;
  std::unique_ptr<DeviceRegistry> registry_;
  DeviceMaterial a_;
  DeviceMaterial b_;
  BrokerConfigFiles files_;
  std::unique_ptr<test::MosquittoBroker> broker_;
};

TEST_F(BrokerAclTest, AnonymousClientsAndWrongPasswordsAreRefused) {
  MqttTestClient anonymous("anonymous-client");
  const auto anonymous_rc = anonymous.connect(broker_->port(), "", "");
  ASSERT_TRUE(anonymous_rc.has_value()) << "no CONNACK";
  EXPECT_NE(*anonymous_rc, 0);

  MqttTestClient wrong("wrong-password-client");
  const auto wrong_rc = wrong.connect(broker_->port(), "dev-a", b_.broker_password);
  ASSERT_TRUE(wrong_rc.has_value()) << "no CONNACK";
  EXPECT_NE(*wrong_rc, 0);

  MqttTestClient stranger("stranger-client");
  const auto stranger_rc = stranger.connect(broker_->port(), "dev-c", a_.broker_password);
  ASSERT_TRUE(stranger_rc.has_value()) << "no CONNACK";
  EXPECT_NE(*stranger_rc, 0);
}

TEST_F(BrokerAclTest, DevicesAndTheEdgeLogInWithTheGeneratedPasswordHashes) {
  // Mosquitto verifies each login against our PBKDF2-SHA512 "$7$" lines.
  edge();
  device_a();
  device_b();
}

TEST_F(BrokerAclTest, ADeviceCannotReadAnotherDevicesAckOrDownlink) {
  auto e = edge();
  auto a = device_a();
  auto b = device_b();
  EXPECT_EQ(a->subscribe("dsekp/init/ack/dev-a"), kGrantedQos1);
  EXPECT_EQ(a->subscribe("dsekp/down/dev-a"), kGrantedQos1);
  EXPECT_EQ(b->subscribe("dsekp/init/ack/dev-b"), kGrantedQos1);
  // B tries A's topics by name and through wildcards. Whether Mosquitto refuses the SUBACK or
  // grants it and filters every message, B must receive nothing of A's.
  for (const char* topic :
       {"dsekp/init/ack/dev-a", "dsekp/down/dev-a", "dsekp/init/ack/+", "dsekp/down/#", "#"}) {
    const auto granted = b->subscribe(topic);
    ASSERT_TRUE(granted.has_value()) << "no SUBACK for " << topic;
    RecordProperty(std::string("suback_") + topic, *granted);
  }

  ASSERT_TRUE(e->publish("dsekp/init/ack/dev-a", "ack for a"));
  ASSERT_TRUE(e->publish("dsekp/down/dev-a", "downlink for a"));
  ASSERT_TRUE(e->publish("dsekp/init/ack/dev-b", "marker for b"));

  EXPECT_TRUE(a->wait_for_message("dsekp/init/ack/dev-a"));
  EXPECT_TRUE(a->wait_for_message("dsekp/down/dev-a"));
  ASSERT_TRUE(b->wait_for_message("dsekp/init/ack/dev-b"));
  for (const auto& m : b->received())
    EXPECT_EQ(m.topic, "dsekp/init/ack/dev-b") << "dev-b received " << m.payload;
}

TEST_F(BrokerAclTest, OnlyTheEdgeReadsDeviceTraffic) {
  auto e = edge();
  auto a = device_a();
  auto b = device_b();
  for (const char* topic : {"dsekp/init", "dsekp/data", "psk/data"})
    EXPECT_EQ(e->subscribe(topic), kGrantedQos1) << topic;
  EXPECT_EQ(b->subscribe("dsekp/down/dev-b"), kGrantedQos1);
  for (const char* topic : {"dsekp/init", "dsekp/data", "psk/data", "#"})
    ASSERT_TRUE(b->subscribe(topic).has_value()) << "no SUBACK for " << topic;

  ASSERT_TRUE(a->publish("dsekp/init", "init from a"));
  ASSERT_TRUE(a->publish("dsekp/data", "data from a"));
  ASSERT_TRUE(a->publish("psk/data", "psk from a"));

  // The edge gets every uplink frame.
  const auto init = e->wait_for_message("dsekp/init");
  const auto data = e->wait_for_message("dsekp/data");
  const auto psk = e->wait_for_message("psk/data");
  ASSERT_TRUE(init && data && psk);
  EXPECT_EQ(data->payload, "data from a");

  // Another device gets none of them.
  ASSERT_TRUE(e->publish("dsekp/down/dev-b", "marker for b"));
  ASSERT_TRUE(b->wait_for_message("dsekp/down/dev-b"));
  for (const auto& m : b->received())
    EXPECT_EQ(m.topic, "dsekp/down/dev-b") << "dev-b received " << m.payload;
}

TEST_F(BrokerAclTest, ADeviceCannotForgeAcksOrDownlinks) {
  auto e = edge();
  auto a = device_a();
  auto b = device_b();
  EXPECT_EQ(a->subscribe("dsekp/init/ack/dev-a"), kGrantedQos1);
  EXPECT_EQ(a->subscribe("dsekp/down/dev-a"), kGrantedQos1);

  // MQTT 3.1.1 has no way to refuse a PUBLISH: the broker acknowledges and drops it.
  (void)b->publish("dsekp/init/ack/dev-a", "forged ack");
  (void)b->publish("dsekp/down/dev-a", "forged downlink");
  // The marker comes from B too (on a topic A may read but B may not write, so it is dropped
  // as well) and then from the edge, which may write there.
  ASSERT_TRUE(e->publish("dsekp/down/dev-a", "marker from the edge"));
  const auto marker = a->wait_for_message("dsekp/down/dev-a");
  ASSERT_TRUE(marker);
  EXPECT_EQ(marker->payload, "marker from the edge");
  for (const auto& m : a->received()) EXPECT_EQ(m.payload, "marker from the edge");
}

TEST_F(BrokerAclTest, RegeneratedFilesTakeEffectOnReload) {
  ASSERT_TRUE(registry_->remove("dev-b").ok());
  DeviceMaterial c;
  ASSERT_TRUE(registry_->add("dev-c", c).ok());
  write_config();
  broker_->reload();  // SIGHUP: Mosquitto re-reads password_file and acl_file

  // The reload is asynchronous: poll, boundedly, until the removed device is refused.
  bool b_refused = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!b_refused && std::chrono::steady_clock::now() < deadline) {
    MqttTestClient b("dev-b-client");
    const auto rc = b.connect(broker_->port(), "dev-b", b_.broker_password);
    b_refused = rc.has_value() && *rc != 0;
    if (!b_refused) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(b_refused) << "dev-b still logs in after removal, regeneration and SIGHUP";

  auto e = edge();
  auto new_device = login("dev-c", c.broker_password);
  EXPECT_EQ(new_device->subscribe("dsekp/init/ack/dev-c"), kGrantedQos1);
  ASSERT_TRUE(e->publish("dsekp/init/ack/dev-c", "ack for c"));
  EXPECT_TRUE(new_device->wait_for_message("dsekp/init/ack/dev-c"));
}

}  // namespace
}  // namespace dsekp::edge
