// `dsekp keys` on a real Mosquitto 2.0 broker with its dynamic-security plugin: each test
// initialises the plugin's file with `mosquitto_ctrl dynsec init`, starts mosquitto with the
// lines `dynamic_security_conf_lines()` prints, points `dsekp keys broker-config
// --dynamic-security` at it, and checks with libmosquitto clients that every later `keys`
// change is on the broker at once (no file, no reload), that nothing the operator created is
// touched, and that DSEKP's roles stay closed whatever the broker's defaults.
//
// "Cannot" is checked without sleeping, as in broker_acl_test.cpp: after the message a client
// must not get, a marker it may get is published by the same publisher; QoS 1 messages of one
// publisher arrive in order, so the forbidden one would have come first.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "control_api_process.hpp"
#include "edge/registry/broker_config.hpp"
#include "edge/registry/device_registry.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/temp_dir.hpp"

#ifndef DSEKP_MOSQUITTO_CTRL_PATH
#error "DSEKP_MOSQUITTO_CTRL_PATH must name mosquitto_ctrl"
#endif

namespace dsekp::edge {
namespace {

using nlohmann::json;
using test::MqttTestClient;

constexpr int kGrantedQos1 = 1;
constexpr int kSubscriptionRefused = 0x80;
constexpr int kNotAuthorised = 5;  // MQTT 3.1.1 CONNACK
constexpr const char* kAdminPassword = "plugin-admin-password";

class DynamicSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string plugin_file = dir_.file("dynamic-security.json");
    const auto init = test::run_command(
        {DSEKP_MOSQUITTO_CTRL_PATH, "dynsec", "init", plugin_file, "admin", kAdminPassword},
        dir_.path().string());
    ASSERT_EQ(init.exit_code, 0) << init.err;
    std::string lines = dynamic_security_conf_lines();
    const std::string placeholder = "/var/lib/mosquitto/dynamic-security.json";
    const std::string option = "plugin_opt_config_file " + placeholder;
    ASSERT_NE(lines.find(option), std::string::npos) << lines;
    lines.replace(lines.find(option), option.size(), "plugin_opt_config_file " + plugin_file);
    broker_ = std::make_unique<test::MosquittoBroker>(dir_.path().string(), lines);
    {
      std::ofstream out(admin_password_file_);
      out << kAdminPassword << "\n";
    }
    ASSERT_EQ(::chmod(admin_password_file_.c_str(), 0600), 0);
  }

  void TearDown() override {
    if (HasFailure() && broker_) std::cerr << "mosquitto log:\n" << broker_->log();
    broker_.reset();
  }

  test::RunResult keys(std::vector<std::string> args) {
    args.insert(args.begin(), {::dsekp::test::cli_path(), "keys"});
    return test::run_command(args, dir_.path().string());
  }

  /// `keys` that must succeed.
  test::RunResult keys_ok(const std::vector<std::string>& args) {
    auto r = keys(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r;
  }

  test::RunResult broker_config() {
    return keys({"broker-config", "--db", db_, "--dynamic-security",
                 "127.0.0.1:" + std::to_string(broker_->port()), "--admin-user", "admin",
                 "--admin-password-file", admin_password_file_, "--edge-user", "edge-1",
                 // The test's broker is on a free port above 1024.
                 "--allow-unprivileged-port"});
  }

  /// mosquitto_ctrl as the plugin's admin, as an operator would use it.
  test::RunResult ctrl(std::vector<std::string> args) {
    args.insert(args.begin(),
                {DSEKP_MOSQUITTO_CTRL_PATH, "-h", "127.0.0.1", "-p",
                 std::to_string(broker_->port()), "-u", "admin", "-P", kAdminPassword, "dynsec"});
    auto r = test::run_command(args, dir_.path().string());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return r;
  }

  std::string password_of(const std::string& user) {
    std::unique_ptr<DeviceRegistry> registry;
    EXPECT_TRUE(DeviceRegistry::open(db_, OpenMode::existing_only, registry).ok());
    if (DeviceMaterial m; registry->material(user, m).ok()) return m.broker_password;
    ServiceAccount account;
    EXPECT_TRUE(registry->account(user, account).ok()) << user;
    return account.login.password;
  }

  std::unique_ptr<MqttTestClient> login(const std::string& user, const std::string& password) {
    auto client = std::make_unique<MqttTestClient>(user + "-client");
    EXPECT_EQ(client->connect(broker_->port(), user, password), 0) << user << " was not let in";
    return client;
  }
  std::unique_ptr<MqttTestClient> login(const std::string& user) {
    return login(user, password_of(user));
  }
  std::optional<int> connack_for(const std::string& user, const std::string& password) {
    MqttTestClient client(user + "-probe");
    return client.connect(broker_->port(), user, password);
  }

  test::TempDir dir_;
  std::string db_ = dir_.file("registry.db");
  std::string admin_password_file_ = dir_.file("admin-password");
  std::unique_ptr<test::MosquittoBroker> broker_;
};

TEST_F(DynamicSecurityTest, EveryKeysChangeIsOnTheBrokerAtOnceWithoutAReload) {
  keys_ok({"add", "dev-a", "--db", db_});
  const auto configured = broker_config();
  ASSERT_EQ(configured.exit_code, 0) << configured.err;
  EXPECT_NE(configured.out.find("plugin_opt_config_file"), std::string::npos);

  auto edge = login("edge-1");
  ASSERT_EQ(edge->subscribe("dsekp/data/+"), kGrantedQos1);
  auto a = login("dev-a");
  ASSERT_TRUE(a->publish("dsekp/data/dev-a", "frame 1"));
  ASSERT_TRUE(edge->wait_for_message("dsekp/data/dev-a"));

  // Added: in at once.
  keys_ok({"add", "dev-b", "--db", db_});
  auto b = login("dev-b");
  ASSERT_TRUE(b->publish("dsekp/data/dev-b", "frame from b"));
  ASSERT_TRUE(edge->wait_for_message("dsekp/data/dev-b"));

  // Rotated: the session on the old password is closed and the old password refused.
  const std::string old_password = password_of("dev-a");
  keys_ok({"rotate", "dev-a", "--db", db_});
  EXPECT_TRUE(a->wait_for_disconnect()) << "the connection on the old password stayed open";
  EXPECT_EQ(connack_for("dev-a", old_password), kNotAuthorised);
  auto rotated = login("dev-a");
  ASSERT_TRUE(rotated->publish("dsekp/data/dev-a", "frame 2"));

  // Removed: disconnected and refused.
  const std::string b_password = password_of("dev-b");
  keys_ok({"remove", "dev-b", "--db", db_});
  EXPECT_TRUE(b->wait_for_disconnect());
  EXPECT_EQ(connack_for("dev-b", b_password), kNotAuthorised);

  // The edge's own connection lived through all of it: a change to one client disconnects
  // only that one.
  ASSERT_TRUE(edge->wait_for_count(3)) << "the edge missed frame 2";
  EXPECT_EQ(edge->received().back().payload, "frame 2");
  EXPECT_TRUE(edge->publish("dsekp/down/dev-a", "downlink"));
  EXPECT_EQ(broker_->log().find("Reloading config"), std::string::npos);
}

// The control API (`dsekp keys serve`) changes the plugin as `dsekp keys` does: an added
// device logs in when the answer comes, a removed one is out.
TEST_F(DynamicSecurityTest, TheControlApisChangesAreOnTheBrokerWhenItAnswers) {
  keys_ok({"add", "dev-a", "--db", db_});
  ASSERT_EQ(broker_config().exit_code, 0);
  test::ControlApiProcess api;
  ASSERT_TRUE(api.start(dir_, ::dsekp::test::cli_path(), db_)) << api.stderr_text();
  auto c = api.client();
  auto r = c.Post("/v1/devices", R"({"dev_id":"dev-c"})", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  const nlohmann::json added = nlohmann::json::parse(r->body);
  EXPECT_EQ(added["broker_update"]["update"], "plugin") << r->body;
  EXPECT_EQ(added["broker_update"]["clients_created"], 1);
  auto device = login("dev-c", added["broker"]["password"].get<std::string>());
  r = c.Delete("/v1/devices/dev-c");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(device->wait_for_disconnect());
  EXPECT_EQ(connack_for("dev-c", added["broker"]["password"].get<std::string>()), kNotAuthorised);
  // A name the operator already has on the plugin is refused before the registry takes it.
  ctrl({"createClient", "operators-own", "-p", "pw"});
  r = c.Post("/v1/devices", R"({"dev_id":"operators-own"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 409) << r->body;
  DeviceInfo info;
  std::unique_ptr<DeviceRegistry> registry;
  ASSERT_TRUE(DeviceRegistry::open(db_, OpenMode::existing_only, registry).ok());
  EXPECT_EQ(registry->info("operators-own", info).code(), RegistryErrc::not_found);
}

TEST_F(DynamicSecurityTest, ASyncWithNothingChangedSendsNoCommand) {
  keys_ok({"add", "dev-a", "--db", db_});
  ASSERT_EQ(broker_config().exit_code, 0);
  auto edge = login("edge-1");
  auto a = login("dev-a");
  const auto again = broker_config();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("clients 0 created, 0 changed, 0 deleted; roles 0 created, 0 changed, "
                           "0 deleted"),
            std::string::npos)
      << again.err;
  const auto sync = keys_ok({"broker-sync", "--db", db_});
  EXPECT_NE(sync.err.find("clients 0 created, 0 changed, 0 deleted"), std::string::npos)
      << sync.err;
  EXPECT_TRUE(edge->publish("dsekp/down/dev-a", "still connected"));
  EXPECT_TRUE(a->publish("dsekp/data/dev-a", "still connected"));

  // --reset-passwords is the one sync that sets (and so disconnects) every DSEKP client.
  const auto reset = keys_ok({"broker-sync", "--db", db_, "--reset-passwords"});
  EXPECT_NE(reset.err.find("clients 0 created, 3 changed"), std::string::npos) << reset.err;
  EXPECT_TRUE(a->wait_for_disconnect());
  login("dev-a");
}

TEST_F(DynamicSecurityTest, TheOperatorsOwnClientsAndRolesAreNeverTouched) {
  ctrl({"createRole", "telegraf-role"});
  ctrl({"addRoleACL", "telegraf-role", "publishClientSend", "metrics/#", "allow", "5"});
  ctrl({"createClient", "telegraf", "-p", "telegraf-password"});
  ctrl({"addClientRole", "telegraf", "telegraf-role"});
  auto telegraf = login("telegraf", "telegraf-password");

  keys_ok({"add", "dev-a", "--db", db_});
  ASSERT_EQ(broker_config().exit_code, 0);
  keys_ok({"add", "dev-b", "--db", db_});
  keys_ok({"remove", "dev-a", "--db", db_});
  keys_ok({"account", "add", "grafana", "--role", "reader", "--db", db_});
  keys_ok({"broker-sync", "--db", db_, "--reset-passwords"});

  EXPECT_TRUE(telegraf->publish("metrics/cpu", "1")) << "the operator's client was disconnected";
  const auto client = ctrl({"getClient", "telegraf"});
  EXPECT_NE(client.out.find("telegraf-role"), std::string::npos) << client.out;
  const auto role = ctrl({"getRole", "telegraf-role"});
  EXPECT_NE(role.out.find("metrics/#"), std::string::npos) << role.out;
  EXPECT_EQ(connack_for("admin", kAdminPassword), 0);

  // A client name the operator already uses is refused before the registry takes it.
  ctrl({"createClient", "dev-x", "-p", "operator-password"});
  const auto clash = keys({"add", "dev-x", "--db", db_, "--out", dir_.file("dev-x.json")});
  EXPECT_EQ(clash.exit_code, 1);
  EXPECT_NE(clash.err.find("\"dev-x\" that dsekp did not create"), std::string::npos) << clash.err;
  EXPECT_EQ(connack_for("dev-x", "operator-password"), 0);
  EXPECT_NE(keys({"show", "dev-x", "--db", db_}).exit_code, 0) << "not in the registry";

  // A clash found later (an unmarked role of a device's name) leaves that device out and
  // reports it, and does not hold up the rest: a removal still revokes the login.
  ctrl({"createRole", "dsekp-device-dev-c"});
  const auto later = keys({"add", "dev-c", "--db", db_});
  EXPECT_EQ(later.exit_code, 1);
  EXPECT_NE(later.err.find("role \"dsekp-device-dev-c\""), std::string::npos) << later.err;
  auto b = login("dev-b");
  const std::string b_password = password_of("dev-b");
  const auto removed = keys({"remove", "dev-b", "--db", db_});
  EXPECT_EQ(removed.exit_code, 1) << "the clash is still reported";
  EXPECT_TRUE(b->wait_for_disconnect()) << removed.err;
  EXPECT_EQ(connack_for("dev-b", b_password), kNotAuthorised);
}

// The finding: a rotation whose own sync failed left the old password valid on the broker, and
// `broker-sync` then said all was in line. The registry remembers the generation the plugin was
// last in line with; every device changed after it gets its password set by the next sync.
TEST_F(DynamicSecurityTest, ARotationThatDidNotReachTheBrokerIsFinishedByBrokerSync) {
  keys_ok({"add", "dev-a", "--db", db_});
  ASSERT_EQ(broker_config().exit_code, 0);
  const std::string old_password = password_of("dev-a");
  DynamicSecuritySettings good;
  {
    std::unique_ptr<DeviceRegistry> registry;
    ASSERT_TRUE(DeviceRegistry::open(db_, OpenMode::existing_only, registry).ok());
    ASSERT_TRUE(registry->dynamic_security(good).ok());
    DynamicSecuritySettings broken = good;
    broken.admin.password = "not-the-admin-password";
    ASSERT_TRUE(registry->set_dynamic_security(broken).ok());
  }
  const auto rotated = keys({"rotate", "dev-a", "--db", db_});
  EXPECT_EQ(rotated.exit_code, 1);
  EXPECT_NE(rotated.err.find("broker-sync"), std::string::npos) << rotated.err;
  EXPECT_EQ(connack_for("dev-a", old_password), 0) << "the broker did not get the rotation";
  {
    std::unique_ptr<DeviceRegistry> registry;
    ASSERT_TRUE(DeviceRegistry::open(db_, OpenMode::existing_only, registry).ok());
    ASSERT_TRUE(registry->set_dynamic_security(good).ok());
  }
  const auto synced = keys_ok({"broker-sync", "--db", db_});
  EXPECT_NE(synced.err.find("1 changed"), std::string::npos) << synced.err;
  EXPECT_EQ(connack_for("dev-a", old_password), kNotAuthorised);
  EXPECT_EQ(connack_for("dev-a", password_of("dev-a")), 0);
  const auto again = keys_ok({"broker-sync", "--db", db_});
  EXPECT_NE(again.err.find("clients 0 created, 0 changed"), std::string::npos) << again.err;
}

TEST_F(DynamicSecurityTest, ADeviceStaysClosedWhenTheBrokerDefaultsAllowEverything) {
  keys_ok({"add", "dev-a", "--db", db_});
  keys_ok({"add", "dev-b", "--db", db_});
  ASSERT_EQ(broker_config().exit_code, 0);
  // mosquitto_ctrl 2.0.11's setDefaultACLAccess has no effect, so the command goes in by hand.
  {
    auto admin = login("admin", kAdminPassword);
    ASSERT_EQ(admin->subscribe("$CONTROL/dynamic-security/v1/response"), kGrantedQos1);
    ASSERT_TRUE(admin->publish(
        "$CONTROL/dynamic-security/v1",
        R"({"commands":[{"command":"setDefaultACLAccess","acls":[)"
        R"({"acltype":"publishClientSend","allow":true},{"acltype":"subscribe","allow":true}]}]})"));
    ASSERT_TRUE(admin->wait_for_message("$CONTROL/dynamic-security/v1/response"));
  }
  const auto defaults = ctrl({"getDefaultACLAccess"});
  ASSERT_NE(defaults.out.find("publishClientSend    : allow"), std::string::npos) << defaults.out;
  ASSERT_NE(defaults.out.find("subscribe            : allow"), std::string::npos) << defaults.out;

  auto edge = login("edge-1");
  ASSERT_EQ(edge->subscribe("dsekp/data/+"), kGrantedQos1);
  EXPECT_EQ(edge->subscribe("dsekp/init/ack/+"), kSubscriptionRefused) << "the edge writes ACKs";
  auto b = login("dev-b");
  ASSERT_EQ(b->subscribe("dsekp/init/ack/dev-b"), kGrantedQos1);
  auto a = login("dev-a");
  for (const char* topic : {"dsekp/data/+", "dsekp/init/ack/dev-b", "#", "$SYS/#",
                            "$CONTROL/dynamic-security/v1/response"})
    EXPECT_EQ(a->subscribe(topic), kSubscriptionRefused) << topic;
  EXPECT_EQ(a->subscribe("dsekp/init/ack/dev-a"), kGrantedQos1);

  // Neither another device's uplink nor an ACK; then a marker the edge may get.
  ASSERT_TRUE(a->publish("dsekp/data/dev-b", "forged frame"));
  ASSERT_TRUE(a->publish("dsekp/init/ack/dev-b", "forged ack"));
  ASSERT_TRUE(a->publish("dsekp/data/dev-a", "marker"));
  ASSERT_TRUE(edge->wait_for_message("dsekp/data/dev-a"));
  for (const auto& m : edge->received())
    EXPECT_EQ(m.topic, "dsekp/data/dev-a") << "the edge got " << m.payload << " on " << m.topic;
  // The broker handled the forged ACK before the marker the edge now has: had it forwarded the
  // ACK, dev-b's queue would hold it before the edge's genuine one.
  ASSERT_TRUE(edge->publish("dsekp/init/ack/dev-b", "genuine ack"));
  ASSERT_TRUE(b->wait_for_message("dsekp/init/ack/dev-b"));
  for (const auto& m : b->received()) EXPECT_EQ(m.payload, "genuine ack");
  // Nor can a device administer the broker.
  ASSERT_TRUE(a->publish("$CONTROL/dynamic-security/v1",
                         R"({"commands":[{"command":"deleteClient","username":"edge-1"}]})"));
  EXPECT_TRUE(edge->publish("dsekp/down/dev-a", "edge still exists"));
  EXPECT_EQ(connack_for("edge-1", password_of("edge-1")), 0);
}

TEST_F(DynamicSecurityTest, ABrokerThatCannotBeReachedLeavesTheChangeToBrokerSync) {
  keys_ok({"add", "dev-a", "--db", db_});
  ASSERT_EQ(broker_config().exit_code, 0);
  broker_.reset();
  const auto r = keys({"add", "dev-b", "--db", db_, "--out", dir_.file("dev-b.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not updated"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dsekp keys broker-sync --db"), std::string::npos) << r.err;
  EXPECT_FALSE(test::read_file(dir_.file("dev-b.json")).empty());
}

TEST_F(DynamicSecurityTest, PasswordsNeverCrossTheNetworkInClear) {
  keys_ok({"add", "dev-a", "--db", db_});
  const auto r =
      keys({"broker-config", "--db", db_, "--dynamic-security", "192.0.2.10:1883", "--admin-user",
            "admin", "--admin-password-file", admin_password_file_, "--edge-user", "edge-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a loopback address"), std::string::npos) << r.err;
  // Nor to a port any local user could take while the broker is down.
  const auto unprivileged =
      keys({"broker-config", "--db", db_, "--dynamic-security",
            "127.0.0.1:" + std::to_string(broker_->port()), "--admin-user", "admin",
            "--admin-password-file", admin_password_file_, "--edge-user", "edge-1"});
  EXPECT_EQ(unprivileged.exit_code, 2);
  EXPECT_NE(unprivileged.err.find("below 1024"), std::string::npos) << unprivileged.err;
  // A wrong admin password says so (and changes nothing).
  const std::string wrong_file = dir_.file("wrong-password");
  {
    std::ofstream out(wrong_file);
    out << "not-the-password\n";
  }
  ASSERT_EQ(::chmod(wrong_file.c_str(), 0600), 0);
  const auto wrong = keys({"broker-config", "--db", db_, "--dynamic-security",
                           "127.0.0.1:" + std::to_string(broker_->port()), "--admin-user", "admin",
                           "--admin-password-file", wrong_file, "--edge-user", "edge-1",
                           "--allow-unprivileged-port"});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("refused the admin login \"admin\""), std::string::npos) << wrong.err;
  // Nor on the command line, nor from a file others may read.
  ASSERT_EQ(::chmod(admin_password_file_.c_str(), 0644), 0);
  const auto open_file = broker_config();
  EXPECT_NE(open_file.exit_code, 0);
  EXPECT_NE(open_file.err.find(admin_password_file_), std::string::npos) << open_file.err;
}

}  // namespace
}  // namespace dsekp::edge
