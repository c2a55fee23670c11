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

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "edge/registry/broker_config.hpp"
#include "edge/registry/device_registry.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/temp_dir.hpp"

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
    ASSERT_TRUE(registry_->add_account("telegraf", AccountRole::reader, reader_).ok());
    // Most tests here are about grants that do not depend on it: they run on the paper's shared
    // uplink topics; PerDeviceUplinkTopicsBindEachAccountToItsOwnDevId is about the default.
    ASSERT_TRUE(registry_->set_uplink_topics(UplinkTopics::shared).ok());
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
  ServiceAccount reader_;
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

// The finding: the edge always connected as `dsekp-edge` and the broker let any account use any
// client id, so a device account kicked the edge off (and lost what the broker had queued for
// it). With use_username_as_clientid every client id is the account's own name.
TEST_F(BrokerAclTest, ADeviceAccountCannotTakeTheEdgesClientId) {
  MqttTestClient e("edge-session");
  ASSERT_EQ(e.connect(broker_->port(), "edge", files_.edge.password), std::optional<int>(0));
  ASSERT_EQ(e.subscribe("dsekp/data"), kGrantedQos1);
  std::size_t frames = 0;
  for (const char* taken : {"edge-session", "edge", "dsekp-edge"}) {
    MqttTestClient thief(taken);
    ASSERT_EQ(thief.connect(broker_->port(), "dev-a", a_.broker_password), std::optional<int>(0))
        << taken;
    ASSERT_TRUE(thief.publish("dsekp/data", std::string("from a thief as ") + taken));
    // Still connected: the edge gets the frame on its own session.
    ASSERT_TRUE(e.wait_for_count(++frames)) << "the edge lost its session to " << taken;
  }
  EXPECT_EQ(e.received().size(), 3u);
}

// Republished readings are plaintext: only the accounts the operator named as readers get them.
TEST_F(BrokerAclTest, OnlyReaderAccountsReadRepublishedReadings) {
  auto e = edge();
  auto reader = login("telegraf", reader_.login.password);
  auto a = device_a();
  EXPECT_EQ(reader->subscribe("plain/+"), kGrantedQos1);
  for (const char* topic : {"plain/dev-a", "plain/#", "#"})
    ASSERT_TRUE(a->subscribe(topic).has_value()) << topic;
  ASSERT_TRUE(e->publish("plain/dev-a", "reading in clear"));
  ASSERT_TRUE(e->publish("dsekp/down/dev-a", "marker for a"));
  const auto got = reader->wait_for_message("plain/dev-a");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->payload, "reading in clear");
  ASSERT_TRUE(a->wait_for_message("dsekp/down/dev-a"));
  for (const auto& m : a->received()) EXPECT_NE(m.topic, "plain/dev-a") << "a device read it";
  // A reader reads nothing else: not the uplink, not anyone's ACK.
  ASSERT_TRUE(reader->subscribe("dsekp/#").has_value());
  ASSERT_TRUE(a->publish("dsekp/data", "frame"));
  ASSERT_TRUE(e->publish("plain/dev-a", "marker for the reader"));
  ASSERT_TRUE(reader->wait_for_count(2));
  for (const auto& m : reader->received()) EXPECT_EQ(m.topic, "plain/dev-a") << m.payload;
}

// The finding: device grants were `pattern` lines, which Mosquitto applies to every account, so
// a reader (or any operator account) could publish into the edge's uplink like a device.
TEST_F(BrokerAclTest, OnlyDevicesPublishUplinkFrames) {
  for (const UplinkTopics topics : {UplinkTopics::shared, UplinkTopics::per_device}) {
    ASSERT_TRUE(registry_->set_uplink_topics(topics).ok());
    write_config();
    broker_->reload();
    // The reload is asynchronous: wait until dev-a may publish on this form's topic.
    const std::string a_topic = topics == UplinkTopics::shared ? "dsekp/data" : "dsekp/data/dev-a";
    auto e = edge();
    ASSERT_EQ(e->subscribe("dsekp/data"), kGrantedQos1);
    ASSERT_EQ(e->subscribe("dsekp/data/+"), kGrantedQos1);
    auto a = device_a();
    bool flowing = false;
    for (int attempt = 0; attempt < 3 && !flowing; ++attempt) {
      ASSERT_TRUE(a->publish(a_topic, "probe"));
      flowing = e->wait_for_message(a_topic).has_value();
    }
    ASSERT_TRUE(flowing) << "dev-a cannot publish on " << a_topic;
    const std::size_t before = e->received().size();
    auto reader = login("telegraf", reader_.login.password);
    ASSERT_TRUE(reader->publish("dsekp/data", "a frame from a reader"));
    ASSERT_TRUE(reader->publish("dsekp/data/telegraf", "a frame from a reader"));
    ASSERT_TRUE(a->publish(a_topic, "marker from dev-a"));
    ASSERT_TRUE(e->wait_for_count(before + 1));
    for (std::size_t i = before; i < e->received().size(); ++i)
      EXPECT_EQ(e->received()[i].payload, "marker from dev-a") << e->received()[i].topic;
  }
}

// Without --psk-baseline the ACL grants nobody psk/data; with a prefix every grant is under it.
TEST_F(BrokerAclTest, ThePskTopicNeedsTheBaselineAndEveryGrantFollowsThePrefix) {
  BrokerConfigFiles files;
  const auto s = write_broker_config(*registry_, dir_.file("prefixed"),
                                     BrokerConfigOptions{"edge", "site1/", false}, files);
  ASSERT_TRUE(s.ok()) << s.message();
  test::MosquittoBroker prefixed(dir_.file("prefixed"), files.conf_lines);
  const auto log_in = [&](MqttTestClient& c, const std::string& user, const std::string& pw) {
    ASSERT_EQ(c.connect(prefixed.port(), user, pw), std::optional<int>(0)) << user;
  };
  MqttTestClient e("e");
  MqttTestClient a("a");
  log_in(e, "edge", files.edge.password);
  log_in(a, "dev-a", a_.broker_password);
  for (const char* topic : {"site1/dsekp/data", "site1/psk/data", "dsekp/data", "psk/data"})
    ASSERT_TRUE(e.subscribe(topic).has_value()) << topic;
  ASSERT_EQ(a.subscribe("site1/dsekp/down/dev-a"), kGrantedQos1);
  ASSERT_TRUE(a.publish("site1/psk/data", "psk frame"));
  ASSERT_TRUE(a.publish("psk/data", "psk frame, no prefix"));
  ASSERT_TRUE(a.publish("dsekp/data", "frame, no prefix"));
  ASSERT_TRUE(a.publish("site1/dsekp/data", "frame"));
  const auto got = e.wait_for_message("site1/dsekp/data");
  ASSERT_TRUE(got);
  for (const auto& m : e.received()) EXPECT_EQ(m.topic, "site1/dsekp/data") << m.payload;
  ASSERT_TRUE(e.publish("site1/dsekp/down/dev-a", "downlink"));
  EXPECT_TRUE(a.wait_for_message("site1/dsekp/down/dev-a"));
  EXPECT_FALSE(write_broker_config(*registry_, dir_.file("bad"),
                                   BrokerConfigOptions{"edge", "site1/#", false}, files)
                   .ok())
      << "a wildcard in the prefix would widen every grant";
}

// The default of a new registry: each device account may publish only on its own uplink topics,
// so it cannot put frames naming another device where the edge reads them (the edge refuses a
// frame whose dev_id is not its topic's;
// EdgeServiceTest.AFrameOnAPerDeviceTopicMustNameThatDevice).
TEST_F(BrokerAclTest, PerDeviceUplinkTopicsBindEachAccountToItsOwnDevId) {
  DeviceRegistry* registry = registry_.get();
  std::unique_ptr<DeviceRegistry> fresh;
  ASSERT_TRUE(DeviceRegistry::open(dir_.file("fresh.db"), OpenMode::create_if_missing, fresh).ok());
  UplinkTopics topics = UplinkTopics::shared;
  ASSERT_TRUE(fresh->uplink_topics(topics).ok());
  EXPECT_EQ(topics, UplinkTopics::per_device) << "a new registry starts per-device";
  ASSERT_TRUE(registry->set_uplink_topics(UplinkTopics::per_device).ok());
  BrokerConfigFiles files;
  ASSERT_TRUE(write_broker_config(*registry, dir_.file("per-device"),
                                  BrokerConfigOptions{"edge", "", false}, files)
                  .ok());
  test::MosquittoBroker broker(dir_.file("per-device"), files.conf_lines);
  MqttTestClient e("e");
  MqttTestClient a("a");
  ASSERT_EQ(e.connect(broker.port(), "edge", files.edge.password), std::optional<int>(0));
  ASSERT_EQ(a.connect(broker.port(), "dev-a", a_.broker_password), std::optional<int>(0));
  for (const char* filter : {"dsekp/init/+", "dsekp/data/+", "dsekp/init", "dsekp/data"})
    ASSERT_EQ(e.subscribe(filter), kGrantedQos1) << filter;
  // Refused by the ACL (MQTT 3.1.1: acknowledged, dropped): another's topic, the shared ones.
  ASSERT_TRUE(a.publish("dsekp/data/dev-b", "a frame under b's name"));
  ASSERT_TRUE(a.publish("dsekp/init/dev-b", "an INIT under b's name"));
  ASSERT_TRUE(a.publish("dsekp/data", "a frame on the shared topic"));
  ASSERT_TRUE(a.publish("dsekp/init/dev-a", "init from a"));
  ASSERT_TRUE(a.publish("dsekp/data/dev-a", "data from a"));
  ASSERT_TRUE(e.wait_for_message("dsekp/data/dev-a"));
  ASSERT_EQ(e.received().size(), 2u);
  EXPECT_EQ(e.received()[0].topic, "dsekp/init/dev-a");
  EXPECT_EQ(e.received()[1].topic, "dsekp/data/dev-a");
}

// The broker refuses a packet over max_packet_size from any client: it never reaches the edge.
TEST_F(BrokerAclTest, TheBrokerRefusesPacketsOverTheLimit) {
  auto e = edge();
  ASSERT_EQ(e->subscribe("dsekp/data"), kGrantedQos1);
  {
    auto a = device_a();
    EXPECT_FALSE(a->publish("dsekp/data", std::string(16 * 1024, 'x')))
        << "the broker acknowledged a 16 KiB packet";
  }
  auto b = device_b();
  ASSERT_TRUE(b->publish("dsekp/data", "a frame of normal size"));
  ASSERT_TRUE(e->wait_for_message("dsekp/data"));
  for (const auto& m : e->received()) EXPECT_EQ(m.payload, "a frame of normal size");
}

// Polls (boundedly) until `user` logs in: a SIGHUP reload is asynchronous.
bool logs_in_within_10s(int port, const std::string& user, const std::string& password) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    MqttTestClient client(user + "-probe");
    const auto rc = client.connect(port, user, password);
    if (rc.has_value() && *rc == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// The finding: Mosquitto warned on every load about each pattern without %u (the shared uplink
// topics and psk/data, which this fixture grants).
TEST_F(BrokerAclTest, LoadingTheAclLogsNoWarning) {
  device_a();
  broker_->reload();
  ASSERT_TRUE(logs_in_within_10s(broker_->port(), "dev-b", b_.broker_password));
  // (Mosquitto also warns that it runs as root here: not about the ACL.)
  const std::string log = broker_->log();
  EXPECT_EQ(log.find("does not contain"), std::string::npos) << log;
  EXPECT_EQ(log.find("Warning: ACL"), std::string::npos) << log;
}

// The finding: every run of broker-config rewrote passwd from the registry alone, deleting the
// accounts an operator had added. Accounts in passwd.local / acl.local survive every run.
TEST_F(BrokerAclTest, TheOperatorsOwnAccountsSurviveEveryRegeneration) {
  const std::string local_passwd = dir_.file("broker") + "/passwd.local";
  ASSERT_EQ(std::system(("mosquitto_passwd -c -b " + local_passwd + " ops ops-secret").c_str()), 0);
  // Password hashes open to others are refused, whatever mosquitto_passwd's umask gave.
  std::filesystem::permissions(local_passwd, std::filesystem::perms(0644));
  BrokerConfigFiles open_to_others;
  EXPECT_EQ(write_broker_config(*registry_, dir_.file("broker"),
                                BrokerConfigOptions{"edge", "", true}, open_to_others)
                .code(),
            RegistryErrc::insecure_file);
  std::filesystem::permissions(local_passwd, std::filesystem::perms(0600));
  {
    std::ofstream acl(dir_.file("broker") + "/acl.local");
    acl << "user ops\ntopic read dsekp/data\n";
  }
  DeviceMaterial c;
  ASSERT_TRUE(registry_->add("dev-c", c).ok());
  write_config();
  write_config();  // idempotent: a second run keeps them as well
  broker_->reload();
  ASSERT_TRUE(logs_in_within_10s(broker_->port(), "ops", "ops-secret"));
  ASSERT_TRUE(logs_in_within_10s(broker_->port(), "dev-c", c.broker_password));
  auto ops = login("ops", "ops-secret");
  ASSERT_EQ(ops->subscribe("dsekp/data"), kGrantedQos1);
  auto a = device_a();
  ASSERT_TRUE(a->publish("dsekp/data", "a reading ops may see"));
  EXPECT_TRUE(ops->wait_for_message("dsekp/data"));
  device_b();  // the registry's accounts are all still there

  // What the broker would trust but should not: a leading topic line (it would belong to the
  // last generated account), a name with a blank the broker trims, a symbolic link.
  const std::string local_acl = dir_.file("broker") + "/acl.local";
  const auto refused_with = [&](RegistryErrc code, const std::string& text) {
    BrokerConfigFiles ignored;
    const auto s = write_broker_config(*registry_, dir_.file("broker"),
                                       BrokerConfigOptions{"edge", "", true}, ignored);
    EXPECT_EQ(s.code(), code) << s.message();
    EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
  };
  {
    std::ofstream acl(local_acl);
    acl << "# ops\ntopic read dsekp/#\n";
  }
  refused_with(RegistryErrc::invalid_argument, "before any user line");
  {
    std::ofstream acl(local_acl);
    acl << "user ops\ntopic read dsekp/data\n";
  }
  const std::string good_passwd = test::read_file(local_passwd);
  {
    std::ofstream append(local_passwd, std::ios::app);
    append << " dev-a:" << good_passwd.substr(good_passwd.find(':') + 1);
  }
  refused_with(RegistryErrc::invalid_argument, "user names are");
  std::filesystem::rename(local_passwd, local_passwd + ".real");
  std::filesystem::create_symlink(local_passwd + ".real", local_passwd);
  refused_with(RegistryErrc::insecure_file, "symbolic link");
  std::filesystem::remove(local_passwd);
  std::filesystem::create_hard_link(local_passwd + ".real", local_passwd);
  refused_with(RegistryErrc::insecure_file, "other hard links");
  std::filesystem::remove(local_passwd + ".real");
  {
    std::ofstream rewrite(local_passwd, std::ios::trunc);
    rewrite << good_passwd << good_passwd;
  }
  refused_with(RegistryErrc::invalid_argument, "defined twice");
  {
    std::ofstream rewrite(local_passwd, std::ios::trunc);
    rewrite << good_passwd;
  }
  // Lines Mosquitto would not parse (a SIGHUP would then leave the broker with no ACL at all) or
  // that would grant more than they say.
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {"user ops\nuser\n", "expected `user NAME`"},
           {"user ops\ntopic rw x\n", "expected `topic read"},
           {"user ops\ntopic read a/#/b\n", "expected `topic read"},
           {"user ops\ntopic read\n", "expected `topic read"},
           {"user\tops\n", "single spaces"},
           {"user ops\ntopic read x \n", "single spaces"},
           {"pattern read ops/%u\ntopic readwrite #\n", "no pattern lines"},
           {"user ops\npattern read dsekp/#\n", "no pattern lines"},
           {"user ops\nacl_file /etc/x\n", "only user and topic lines"}}) {
    {
      std::ofstream acl(local_acl, std::ios::trunc);
      acl << bad;
    }
    refused_with(RegistryErrc::invalid_argument, why);
  }
  {
    std::ofstream acl(local_acl, std::ios::trunc);
    acl << "# ops\nuser ops\ntopic read dsekp/data\n";
  }

  // A local account may not shadow a registry one; nothing is written then.
  ASSERT_EQ(std::system(("mosquitto_passwd -b " + local_passwd + " dev-a other").c_str()), 0);
  const std::string before = test::read_file(files_.password_file);
  BrokerConfigFiles refused;
  const auto s = write_broker_config(*registry_, dir_.file("broker"),
                                     BrokerConfigOptions{"edge", "", true}, refused);
  EXPECT_EQ(s.code(), RegistryErrc::name_conflict);
  EXPECT_NE(s.message().find("dev-a"), std::string::npos) << s.message();
  EXPECT_EQ(test::read_file(files_.password_file), before);
}

// The finding: broker-config made its directory 0700 and passwd 0600 for root, so Mosquitto,
// which reads passwd after dropping to its own user, could not open it, and every rerun (after
// each keys add/rotate/remove) undid a manual chown. Here the broker runs as Debian's does.
TEST(BrokerFiles, ABrokerRunningAsMosquittoReadsTheFilesAfterEveryRegeneration) {
  if (::geteuid() != 0 || ::getpwnam("mosquitto") == nullptr || ::getgrnam("mosquitto") == nullptr)
    GTEST_SKIP() << "needs root and Debian's mosquitto user and group";
  test::TempDir dir;
  // The broker's user must be able to reach the directory broker-config writes into.
  std::filesystem::permissions(
      dir.path(), std::filesystem::perms::owner_all | std::filesystem::perms::others_exec);
  std::unique_ptr<DeviceRegistry> registry;
  ASSERT_TRUE(
      DeviceRegistry::open(dir.file("registry.db"), OpenMode::create_if_missing, registry).ok());
  DeviceMaterial a;
  ASSERT_TRUE(registry->add("dev-a", a).ok());
  // A directory others may write into is refused (they could replace the files the broker
  // trusts); one made private by an earlier run without a broker group is fixed on this one.
  std::filesystem::create_directory(dir.file("broker"));
  std::filesystem::permissions(dir.file("broker"), std::filesystem::perms(0777));
  {
    BrokerConfigOptions group_options{"edge", "", false};
    group_options.broker_group = "mosquitto";
    BrokerConfigFiles refused;
    EXPECT_EQ(write_broker_config(*registry, dir.file("broker"), group_options, refused).code(),
              RegistryErrc::insecure_file);
  }
  std::filesystem::permissions(dir.file("broker"), std::filesystem::perms::owner_all);
  BrokerConfigOptions options{"edge", "", false};
  options.broker_group = "mosquitto";
  BrokerConfigFiles files;
  ASSERT_TRUE(write_broker_config(*registry, dir.file("broker"), options, files).ok());

  const auto mode = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return std::pair<unsigned, gid_t>(st.st_mode & 07777, st.st_gid);
  };
  const gid_t mosquitto_gid = ::getgrnam("mosquitto")->gr_gid;
  EXPECT_EQ(mode(dir.file("broker")), std::make_pair(0750u, mosquitto_gid));
  EXPECT_EQ(mode(files.password_file), std::make_pair(0640u, mosquitto_gid));

  test::MosquittoBroker broker(dir.path().string(), files.conf_lines, "mosquitto");
  ASSERT_TRUE(logs_in_within_10s(broker.port(), "dev-a", a.broker_password)) << broker.log();
  DeviceMaterial b;
  ASSERT_TRUE(registry->add("dev-b", b).ok());
  ASSERT_TRUE(write_broker_config(*registry, dir.file("broker"), options, files).ok());
  EXPECT_EQ(mode(files.password_file), std::make_pair(0640u, mosquitto_gid));
  broker.reload();
  EXPECT_TRUE(logs_in_within_10s(broker.port(), "dev-b", b.broker_password)) << broker.log();
  EXPECT_TRUE(logs_in_within_10s(broker.port(), "dev-a", a.broker_password)) << broker.log();

  // Without a broker group the files stay private to the invoking user, as before.
  BrokerConfigFiles private_files;
  ASSERT_TRUE(write_broker_config(*registry, dir.file("private"),
                                  BrokerConfigOptions{"edge", "", false}, private_files)
                  .ok());
  EXPECT_EQ(mode(dir.file("private")).first, 0700u);
  EXPECT_EQ(mode(private_files.password_file).first, 0600u);
  options.broker_group = "no-such-group-dsekp";
  EXPECT_EQ(write_broker_config(*registry, dir.file("other"), options, private_files).code(),
            RegistryErrc::invalid_argument);
}

}  // namespace
}  // namespace dsekp::edge
