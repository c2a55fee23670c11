// The registry's accounts on RabbitMQ (`dsekp keys broker-config --rabbitmq-definitions`,
// edge/broker_admin/rabbitmq_definitions.hpp), imported into the program's node with
// anonymous MQTT logins switched off, as an operator runs it: devices log in with their own
// registry logins (the provisioning material, unchanged) and the edge with its account over AMQP,
// every frame once; anonymous and wrong logins are refused; a device account publishes and
// reads only its own topics (not another's uplink or ACK, not the uplink at large, not the
// republished readings), over MQTT and over AMQP, and cannot touch the edges' queue (but can
// route any key through an exchange of its own: why the AMQP listener must be private);
// `dsekp edge send` works with the downlink account; an account
// that takes another's client id gets nothing of that session; a removed device's account goes with
// `keys rabbitmq-stale-users` and cannot log in.
#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "probe_client.hpp"
#include "rabbitmq_fixture.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"

namespace dsekp::broker_compat {
namespace {

using dsekp::test::ProbeClient;
using namespace std::chrono_literals;

/// One AMQP 0-9-1 connection as `user`: what a device account can do besides MQTT (RabbitMQ
/// lets every user speak both). Each attempt reports "ok", "login refused" or the server's
/// channel close ("403 ACCESS_REFUSED - ...").
class AmqpProbe {
 public:
  AmqpProbe(int port, const std::string& user, const std::string& password)
      : conn_(amqp_new_connection()) {
    amqp_socket_t* socket = amqp_tcp_socket_new(conn_);
    if (socket == nullptr || amqp_socket_open(socket, "127.0.0.1", port) != AMQP_STATUS_OK) return;
    const amqp_rpc_reply_t login = amqp_login(conn_, "/", 0, 131072, 0, AMQP_SASL_METHOD_PLAIN,
                                              user.c_str(), password.c_str());
    logged_in_ = login.reply_type == AMQP_RESPONSE_NORMAL;
  }
  ~AmqpProbe() {
    if (logged_in_) (void)amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(conn_);
  }
  AmqpProbe(const AmqpProbe&) = delete;
  AmqpProbe& operator=(const AmqpProbe&) = delete;

  /// A confirmed publish on `exchange` under `key`, with the MQTT plugin's QoS header as an
  /// unsigned byte (which crashes the MQTT connections it reaches under RabbitMQ 3.10) or as
  /// the signed byte the plugin expects.
  std::string publish(const std::string& exchange, const std::string& key,
                      bool crashing_header = true) {
    if (!open_channel()) return outcome_;
    amqp_confirm_select(conn_, channel_);
    if (!replied()) return outcome_;
    amqp_table_entry_t header;
    header.key = amqp_cstring_bytes("x-mqtt-publish-qos");
    if (crashing_header) {
      header.value.kind = AMQP_FIELD_KIND_U8;
      header.value.value.u8 = 1;
    } else {
      header.value.kind = AMQP_FIELD_KIND_I8;
      header.value.value.i8 = 1;
    }
    amqp_basic_properties_t properties{};
    properties._flags = AMQP_BASIC_HEADERS_FLAG;
    properties.headers.num_entries = 1;
    properties.headers.entries = &header;
    amqp_basic_publish(conn_, channel_, amqp_cstring_bytes(exchange.c_str()),
                       amqp_cstring_bytes(key.c_str()), 0, 0, &properties,
                       amqp_cstring_bytes("forged"));
    amqp_frame_t frame;
    timeval timeout{3, 0};
    if (amqp_simple_wait_frame_noblock(conn_, &frame, &timeout) != AMQP_STATUS_OK)
      return "no answer";
    if (frame.frame_type == AMQP_FRAME_METHOD && frame.payload.method.id == AMQP_BASIC_ACK_METHOD)
      return "ok";
    if (frame.frame_type == AMQP_FRAME_METHOD &&
        frame.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD)
      return closed(*static_cast<amqp_channel_close_t*>(frame.payload.method.decoded));
    return "unexpected frame";
  }
  /// exchange.declare of `name` (direct, auto-delete) with `alternate` as its alternate
  /// exchange: what it cannot route goes there, under its own routing key.
  std::string declare_exchange(const std::string& name, const std::string& alternate) {
    if (!open_channel()) return outcome_;
    amqp_table_entry_t argument;
    argument.key = amqp_cstring_bytes("alternate-exchange");
    argument.value.kind = AMQP_FIELD_KIND_UTF8;
    argument.value.value.bytes = amqp_cstring_bytes(alternate.c_str());
    const amqp_table_t arguments{1, &argument};
    amqp_exchange_declare(conn_, channel_, amqp_cstring_bytes(name.c_str()),
                          amqp_cstring_bytes("direct"), 0, 0, 1, 0, arguments);
    return replied() ? "ok" : outcome_;
  }
  /// queue.delete of `queue` (the edges' quorum queue: it would take the uplink with it).
  std::string delete_queue(const std::string& queue) {
    if (!open_channel()) return outcome_;
    amqp_queue_delete(conn_, channel_, amqp_cstring_bytes(queue.c_str()), 0, 0);
    return replied() ? "ok" : outcome_;
  }
  /// basic.get from `queue` (taking the edges' messages).
  std::string get(const std::string& queue) {
    if (!open_channel()) return outcome_;
    (void)amqp_basic_get(conn_, channel_, amqp_cstring_bytes(queue.c_str()), 1);
    return replied() ? "ok" : outcome_;
  }

 private:
  bool open_channel() {
    if (!logged_in_) {
      outcome_ = "login refused";
      return false;
    }
    ++channel_;  // a refused operation closes its channel: each attempt gets a fresh one
    amqp_channel_open(conn_, channel_);
    return replied();
  }
  bool replied() {
    const amqp_rpc_reply_t r = amqp_get_rpc_reply(conn_);
    if (r.reply_type == AMQP_RESPONSE_NORMAL) return true;
    if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
      const auto& close = *static_cast<amqp_channel_close_t*>(r.reply.decoded);
      outcome_ = closed(close);
      amqp_channel_close_ok_t ok{};
      (void)amqp_send_method(conn_, channel_, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
    } else {
      outcome_ = "error";
    }
    return false;
  }
  static std::string closed(const amqp_channel_close_t& close) {
    return std::to_string(close.reply_code) + " " +
           std::string(static_cast<const char*>(close.reply_text.bytes), close.reply_text.len);
  }

  amqp_connection_state_t conn_;
  bool logged_in_ = false;
  amqp_channel_t channel_ = 0;
  std::string outcome_;
};

class RabbitMqAccounts : public RabbitMqTest {
 protected:
  // `mqtt.allow_anonymous = false` in rabbitmq.conf sets this application variable, which the
  // MQTT plugin reads at each CONNECT: set here at run time, as the rest of the program's tests
  // need anonymous logins.
  void SetUp() override {
    RabbitMqTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    set_anonymous(false);
  }
  void TearDown() override {
    if (SharedRabbit::get() != nullptr) set_anonymous(true);
    RabbitMqTest::TearDown();
  }
  void set_anonymous(bool allowed) {
    const auto r = SharedRabbit::get()->control(
        0,
        {"eval", std::string("application:set_env(rabbitmq_mqtt, allow_anonymous, ") +
                     (allowed ? "true" : "false") + ")."},
        60s);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  // Without the PSK baseline (the default): the edge then unbinds its queue from the PSK topic
  // (an earlier configuration's binding), which RabbitMQ checks against its topic permissions.
  RabbitMqAccounts() { edge_psk_baseline_ = false; }
  std::vector<std::string> edge_broker_args(const std::string&) const override {
    return {"--amqp", "127.0.0.1:" + std::to_string(SharedRabbit::get()->amqp_port(0)),
            "--amqp-queue", "uplink-accounts"};
  }
  /// broker-config --rabbitmq-definitions for the registry, imported into the node.
  void import_registry() {
    const auto r = dsekp::test::run_command(
        {::dsekp::test::cli_path(), "keys", "broker-config", "--db", registry_, "--edge-user",
         "edge", "--rabbitmq-definitions", definitions_, "--amqp-queue", "uplink-accounts"},
        dir_.path().string(), 30s);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("mqtt.allow_anonymous = false"), std::string::npos) << r.out;
    const auto imported =
        SharedRabbit::get()->control(0, {"import_definitions", definitions_}, 60s);
    ASSERT_EQ(imported.exit_code, 0) << imported.output;
  }
  /// A reader account in the registry (`dsekp keys account add NAME --role reader`).
  void add_reader(const std::string& name) {
    const auto r = dsekp::test::run_command({::dsekp::test::cli_path(), "keys", "account", "add",
                                             name, "--db", registry_, "--role", "reader"},
                                            dir_.path().string(), 30s);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  /// The registry's password of `user` (a device or an account).
  std::string password_of(const std::string& user) {
    std::unique_ptr<edge::DeviceRegistry> registry;
    EXPECT_TRUE(
        edge::DeviceRegistry::open(registry_, edge::OpenMode::existing_only, registry).ok());
    std::vector<edge::BrokerAccount> devices;
    EXPECT_TRUE(registry->device_broker_accounts(devices).ok());
    for (const auto& d : devices)
      if (d.username == user) return d.password;
    edge::ServiceAccount account;
    EXPECT_TRUE(registry->account(user, account).ok()) << user;
    return account.login.password;
  }
  /// A probe with client id `client_id` logged in as `user` (its registry password), connected.
  std::unique_ptr<ProbeClient> logged_in(const std::string& user, const std::string& client_id,
                                         bool clean_session = true) {
    auto probe =
        std::make_unique<ProbeClient>(client_id, ProbeClient::Version::v311, clean_session);
    probe->set_login(user, password_of(user));
    EXPECT_EQ(probe->connect(broker_port()), std::optional<int>(0)) << user << " as " << client_id;
    return probe;
  }

  std::string definitions_ = dir_.file("rabbitmq-definitions.json");
};

TEST_F(RabbitMqAccounts, DevicesAndTheEdgeLogInWithTheirRegistryAccounts) {
  provision(3);
  import_registry();
  start_edge("3.1.1");
  // No --anonymous: each device logs in with the user name and password of its material.
  const auto r =
      run_devices({"--mode", "dsekp", "--qos", "1", "--count", "20", "--interval-ms", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary().at("handshakes").at("ok"), 3);
  EXPECT_TRUE(wait_until([&] { return telemetry_rows() >= 60; }, 10s)) << telemetry_rows();
  EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
  expect_every_frame_once("dsekp", 60);
}

// `dsekp edge send` logs in with the downlink account under the client id `<user>:<pid>`, whose
// session queue that account may use; the edge (AMQP) answers it.
TEST_F(RabbitMqAccounts, EdgeSendWorksWithTheDownlinkAccount) {
  provision(1);
  import_registry();
  start_edge("3.1.1");
  const auto r = dsekp::test::run_command(
      {::dsekp::test::cli_path(), "edge", "send", "--broker", broker_address(), "--db", registry_,
       "--timeout", "5", "esp32-00", "hello"},
      dir_.path().string(), 60s);
  const auto answer = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(answer.is_object()) << r.out << r.err;
  EXPECT_EQ(answer.value("status", ""), "queued") << answer;  // the device is offline
  EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
}

TEST_F(RabbitMqAccounts, AnonymousLoginsAndWrongPasswordsAreRefused) {
  provision(1);
  import_registry();
  ProbeClient anonymous("anonymous-probe");
  EXPECT_NE(anonymous.connect(broker_port()), std::optional<int>(0));
  ProbeClient wrong("esp32-00");
  wrong.set_login("esp32-00", "not-its-password");
  EXPECT_NE(wrong.connect(broker_port()), std::optional<int>(0));
  ProbeClient unknown("nobody");
  unknown.set_login("nobody", password_of("esp32-00"));
  EXPECT_NE(unknown.connect(broker_port()), std::optional<int>(0));
  EXPECT_EQ(logged_in("esp32-00", "esp32-00")->lost(), false);
}

TEST_F(RabbitMqAccounts, ADeviceAccountReachesOnlyItsOwnTopics) {
  provision(2);
  add_reader("telegraf");
  import_registry();
  auto victim = logged_in("esp32-01", "esp32-01");
  for (const char* own : {"dsekp/init/ack/esp32-01", "dsekp/down/esp32-01", "dsekp/rekey/esp32-01"})
    ASSERT_EQ(victim->subscribe(own, 1), std::optional<int>(1)) << own;
  auto reader = logged_in("telegraf", "telegraf");  // republished readings: readers only
  ASSERT_EQ(reader->subscribe("plain/#", 1), std::optional<int>(1));
  auto watcher = logged_in("edge", "edge");  // reads the uplink, as the edges may
  ASSERT_EQ(watcher->subscribe("dsekp/data/+", 1), std::optional<int>(1));
  ASSERT_EQ(watcher->subscribe("dsekp/init/+", 1), std::optional<int>(1));

  EXPECT_TRUE(logged_in("esp32-00", "esp32-00")->publish("dsekp/data/esp32-00", "own", 1));
  ASSERT_TRUE(watcher->wait_for_topic("dsekp/data/esp32-00"));
  // Each refused publish closes the connection (MQTT 3.1.1 has no way to say "denied").
  for (const char* topic : {"dsekp/data/esp32-01", "dsekp/init/esp32-01", "dsekp/init/ack/esp32-01",
                            "dsekp/down/esp32-01", "dsekp/rekey/esp32-01", "plain/esp32-00/t"}) {
    auto attacker = logged_in("esp32-00", "esp32-00");
    EXPECT_FALSE(attacker->publish(topic, "forged", 1)) << topic;
  }
  for (const char* filter :
       {"dsekp/init/ack/esp32-01", "dsekp/#", "dsekp/data/+", "#", "plain/#", "dsekp/init/ack/+"}) {
    auto attacker = logged_in("esp32-00", "esp32-00");
    const std::optional<int> granted = attacker->subscribe(filter, 1);
    EXPECT_TRUE(!granted.has_value() || *granted == 128 || attacker->lost())
        << filter << ": granted " << granted.value_or(-1);
  }
  victim->drain(500ms);
  watcher->drain(500ms);
  reader->drain(100ms);
  EXPECT_TRUE(victim->received().empty()) << victim->received().front().topic;
  EXPECT_TRUE(reader->received().empty()) << reader->received().front().topic;
  ASSERT_EQ(watcher->received().size(), 1u);  // the device's own frame only
  EXPECT_EQ(watcher->received().front().payload, "own");
}

// RabbitMQ 3.10 cannot bind a client id to an account (Mosquitto's use_username_as_clientid):
// another account may connect under a device's client id. What it gets: none of that session's
// queued messages (the session queue is the device's own resource), and no publish or
// subscribe on the device's topics. What it does: the device's connection is closed.
// A device account over AMQP: the same topic permissions hold (no forged downlink, which with
// the unsigned QoS header above crashed every MQTT connection it reached under RabbitMQ 3.10),
// no publish to the default exchange (straight into the edges' queue under any key), and the
// edges' queue can be neither deleted nor read.
TEST_F(RabbitMqAccounts, ADeviceAccountOverAmqpCannotForgeDownlinksOrTouchTheEdgesQueue) {
  provision(2);
  import_registry();
  start_edge("3.1.1");  // declares uplink-accounts
  const int port = SharedRabbit::get()->amqp_port(0);
  AmqpProbe device(port, "esp32-00", password_of("esp32-00"));
  EXPECT_EQ(device.publish("amq.topic", "dsekp.data.esp32-00"), "ok");
  // The last: its own key with a trailing newline, which PCRE's `$` would let through (libmosquitto
  // refuses such a topic, AMQP does not).
  for (const char* key : {"dsekp.down.esp32-01", "dsekp.init.ack.esp32-01", "dsekp.data.esp32-01",
                          "dsekp.data.esp32-00\n"})
    EXPECT_TRUE(device.publish("amq.topic", key).starts_with("403 ACCESS_REFUSED")) << key;
  EXPECT_TRUE(device.publish("", "uplink-accounts").starts_with("403 ACCESS_REFUSED"));
  EXPECT_TRUE(device.delete_queue("uplink-accounts").starts_with("403 ACCESS_REFUSED"));
  EXPECT_TRUE(device.get("uplink-accounts").starts_with("403 ACCESS_REFUSED"));
  AmqpProbe wrong(port, "esp32-00", "not-its-password");
  EXPECT_EQ(wrong.publish("amq.topic", "dsekp.data.esp32-00"), "login refused");
  EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
}

TEST_F(RabbitMqAccounts, AnotherAccountsClientIdGetsNoneOfItsSession) {
  provision(2);
  import_registry();
  {
    auto victim = logged_in("esp32-01", "esp32-01", false);
    ASSERT_EQ(victim->subscribe("dsekp/init/ack/esp32-01", 1), std::optional<int>(1));
    victim->disconnect();
  }
  EXPECT_TRUE(logged_in("edge", "edge")->publish("dsekp/init/ack/esp32-01", "queued ack", 1));
  {
    ProbeClient thief("esp32-01", ProbeClient::Version::v311, false);
    thief.set_login("esp32-00", password_of("esp32-00"));
    const std::optional<int> connack = thief.connect(broker_port());
    if (connack == std::optional<int>(0)) thief.drain(1000ms);
    std::printf("[ figures  ] another account under esp32-01's client id: CONNACK %d, lost %d\n",
                connack.value_or(-1), thief.lost() ? 1 : 0);
    // Refused: RabbitMQ 3.10 answers 3 ("server unavailable") when it cannot open the session.
    EXPECT_NE(connack, std::optional<int>(0));
    EXPECT_TRUE(thief.received().empty());
  }
  // The session and its queued message are still the device's.
  auto victim = logged_in("esp32-01", "esp32-01", false);
  EXPECT_TRUE(victim->wait_for_topic("dsekp/init/ack/esp32-01"));
  // A connected device is disconnected by another account taking its client id.
  ProbeClient taker("esp32-01");
  taker.set_login("esp32-00", password_of("esp32-00"));
  (void)taker.connect(broker_port());
  victim->drain(1000ms);
  EXPECT_TRUE(victim->lost());
  // The taker's clean session could not delete the device's session queue either.
  EXPECT_TRUE(logged_in("edge", "edge")->publish("dsekp/init/ack/esp32-01", "second ack", 1));
  auto back = logged_in("esp32-01", "esp32-01", false);
  EXPECT_TRUE(back->wait_for_topic("dsekp/init/ack/esp32-01"));
  ASSERT_FALSE(back->received().empty());
  EXPECT_EQ(back->received().back().payload, "second ack");
}

// What RabbitMQ's permissions cannot prevent: its configure, write and read patterns name
// queues and exchanges alike, so the account that may declare its MQTT session queue may also
// declare an exchange of that name, with amq.topic as its alternate exchange; a publish there
// reaches amq.topic under any routing key, past the topic permissions (checked on amq.topic
// only for publishes to it). A device account that can reach the AMQP listener can so forge
// a downlink to another device. Hence docs/EDGE.md: the AMQP listener on an address only the
// edges reach. Asserted so that the docs change if RabbitMQ does.
TEST_F(RabbitMqAccounts, ADeviceAccountOverAmqpCanRouteAnyKeyThroughAnExchangeOfItsOwn) {
  provision(2);
  import_registry();
  auto victim = logged_in("esp32-01", "esp32-01");
  ASSERT_EQ(victim->subscribe("dsekp/down/esp32-01", 1), std::optional<int>(1));
  AmqpProbe device(SharedRabbit::get()->amqp_port(0), "esp32-00", password_of("esp32-00"));
  ASSERT_EQ(device.declare_exchange("mqtt-subscription-esp32-00qos1", "amq.topic"), "ok");
  EXPECT_EQ(device.publish("mqtt-subscription-esp32-00qos1", "dsekp.down.esp32-01", false), "ok");
  EXPECT_TRUE(victim->wait_for_topic("dsekp/down/esp32-01"));
  ASSERT_FALSE(victim->received().empty());
  EXPECT_EQ(victim->received().front().payload, "forged");
}

TEST_F(RabbitMqAccounts, ARemovedDevicesAccountIsPrunedAndCannotLogIn) {
  provision(2);
  import_registry();
  const std::string password = password_of("esp32-01");
  ASSERT_FALSE(logged_in("esp32-01", "esp32-01")->lost());
  const auto removed = dsekp::test::run_command(
      {::dsekp::test::cli_path(), "keys", "remove", "--db", registry_, "esp32-01"},
      dir_.path().string(), 30s);
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  import_registry();
  // The import left the removed account in place: the listing names it as stale.
  const auto listed =
      SharedRabbit::get()->control(0, {"-q", "list_users", "--formatter", "json"}, 60s);
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const std::string users = dir_.file("users.json");
  std::ofstream(users) << listed.output;
  const auto stale = dsekp::test::run_command(
      {"/bin/sh", "-c",
       "'" + ::dsekp::test::cli_path() + "' keys rabbitmq-stale-users --definitions '" +
           definitions_ + "' < '" + users + "'"},
      dir_.path().string(), 30s);
  ASSERT_EQ(stale.exit_code, 0) << stale.err;
  // The node also holds the accounts of the program's earlier tests (registries of their own).
  std::vector<std::string> names;
  for (std::size_t at = 0; at < stale.out.size();) {
    const std::size_t end = stale.out.find('\n', at);
    names.push_back(stale.out.substr(at, end - at));
    at = end == std::string::npos ? stale.out.size() : end + 1;
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "esp32-01"), names.end()) << stale.out;
  EXPECT_EQ(std::find(names.begin(), names.end(), "esp32-00"), names.end()) << stale.out;
  EXPECT_EQ(std::find(names.begin(), names.end(), "edge"), names.end()) << stale.out;
  for (const std::string& name : names)
    ASSERT_EQ(SharedRabbit::get()->control(0, {"delete_user", "--", name}, 60s).exit_code, 0)
        << name;
  EXPECT_EQ(logged_in("esp32-00", "esp32-00")->lost(), false);
  ProbeClient gone("esp32-01");
  gone.set_login("esp32-01", password);
  EXPECT_NE(gone.connect(broker_port()), std::optional<int>(0));
}

}  // namespace
}  // namespace dsekp::broker_compat
