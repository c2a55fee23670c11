// Provisioning (experiment/provision.hpp) and the private broker (experiment/broker.hpp) on a
// real Mosquitto: credentials files are private JSON arrays of `dsekp keys add` objects, and the
// broker started from the generated configuration lets exactly the provisioned accounts in.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "edge/registry/device_registry.hpp"
#include "experiment/broker.hpp"
#include "experiment/provision.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::experiment {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

unsigned mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

TEST(Provision, DeviceIdsSortInOrder) {
  EXPECT_EQ(device_ids("esp32-", 3),
            (std::vector<std::string>{"esp32-01", "esp32-02", "esp32-03"}));
  const auto many = device_ids("trial-", 120);
  EXPECT_EQ(many.front(), "trial-001");
  EXPECT_EQ(many.back(), "trial-120");
  EXPECT_TRUE(device_ids("x", 0).empty());
}

TEST(Provision, WritesPrivateCredentialArraysAndBrokerFiles) {
  TempDir dir;
  ProvisionRequest request;
  request.secrets_dir = dir.file("secrets");
  request.main_devices = device_ids("esp32-", 2);
  request.trial_devices = device_ids("trial-", 3);
  const Provisioned p = provision(request);

  EXPECT_EQ(mode_of(request.secrets_dir), 0700u);
  EXPECT_EQ(mode_of(p.main_credentials), 0600u);
  EXPECT_EQ(mode_of(p.trial_credentials), 0600u);
  EXPECT_EQ(mode_of(p.password_file), 0600u);
  const auto main = read_json(p.main_credentials);
  ASSERT_TRUE(main.is_array());
  ASSERT_EQ(main.size(), 2u);
  EXPECT_EQ(main[0]["dev_id"], "esp32-01");
  EXPECT_EQ(main[1]["dev_id"], "esp32-02");
  for (const auto& d : main) {
    EXPECT_EQ(d["dev_secret_hex"].get<std::string>().size(), 64u);
    EXPECT_EQ(d["psk_key_hex"].get<std::string>().size(), 32u);
    EXPECT_EQ(d["broker"]["username"], d["dev_id"]);
    EXPECT_FALSE(d["broker"]["password"].get<std::string>().empty());
  }
  EXPECT_EQ(read_json(p.trial_credentials).size(), 3u);

  std::unique_ptr<edge::DeviceRegistry> registry;
  ASSERT_TRUE(
      edge::DeviceRegistry::open(p.registry_db, edge::OpenMode::existing_only, registry).ok());
  std::vector<edge::DeviceInfo> devices;
  ASSERT_TRUE(registry->list(devices).ok());
  EXPECT_EQ(devices.size(), 5u);
  edge::BrokerAccount edge_account;
  ASSERT_TRUE(registry->edge_broker_account(edge_account).ok());
  EXPECT_EQ(edge_account.username, kEdgeBrokerUser);
  std::ifstream passwd(p.password_file);
  const std::string text(std::istreambuf_iterator<char>(passwd), {});
  for (const char* user : {"esp32-01:", "esp32-02:", "trial-03:", "dsekp-edge:"})
    EXPECT_NE(text.find(user), std::string::npos) << user;
}

TEST(Provision, WithoutBrokerAccountsTheEdgeStaysAnonymous) {
  TempDir dir;
  ProvisionRequest request;
  request.secrets_dir = dir.file("secrets");
  request.main_devices = {"esp32-01"};
  request.broker_accounts = false;
  const Provisioned p = provision(request);
  EXPECT_TRUE(p.password_file.empty());
  EXPECT_TRUE(p.trial_credentials.empty());
  std::unique_ptr<edge::DeviceRegistry> registry;
  ASSERT_TRUE(
      edge::DeviceRegistry::open(p.registry_db, edge::OpenMode::existing_only, registry).ok());
  edge::BrokerAccount account;
  EXPECT_FALSE(registry->edge_broker_account(account).ok());
}

TEST(PrivateBroker, StartsOnLoopbackAndAdmitsOnlyProvisionedAccounts) {
  TempDir dir;
  ProvisionRequest request;
  request.secrets_dir = dir.file("secrets");
  request.main_devices = {"esp32-01"};
  const Provisioned p = provision(request);
  MosquittoSettings settings;
  settings.password_file = p.password_file;
  settings.acl_file = p.acl_file;
  settings.log_file = dir.file("mosquitto.log");
  settings.user = current_user_name();
  ChildSet children;
  const StartedBroker broker = start_mosquitto(children, DSEKP_MOSQUITTO_PATH, settings,
                                               dir.file("mosquitto.conf"), dir.file("out.log"));
  ASSERT_NE(broker.child, nullptr);
  EXPECT_EQ(broker.address.host, "127.0.0.1");
  EXPECT_TRUE(accepts_tcp(broker.address));

  const auto device = read_json(p.main_credentials)[0];
  test::MqttTestClient anonymous("anon");
  EXPECT_EQ(anonymous.connect(broker.address.port, "", ""), 5);  // not authorised
  test::MqttTestClient dev("esp32-01");
  EXPECT_EQ(
      dev.connect(broker.address.port, "esp32-01", device["broker"]["password"].get<std::string>()),
      0);
  std::unique_ptr<edge::DeviceRegistry> registry;
  ASSERT_TRUE(
      edge::DeviceRegistry::open(p.registry_db, edge::OpenMode::existing_only, registry).ok());
  edge::BrokerAccount edge_account;
  ASSERT_TRUE(registry->edge_broker_account(edge_account).ok());
  test::MqttTestClient edge("edge");
  EXPECT_EQ(edge.connect(broker.address.port, edge_account.username, edge_account.password), 0);

  EXPECT_EQ(children.stop_all(std::chrono::seconds(5)), 1u);
  EXPECT_FALSE(accepts_tcp(broker.address));
  std::ifstream log(settings.log_file);
  const std::string text(std::istreambuf_iterator<char>(log), {});
  EXPECT_NE(text.find("mosquitto version"), std::string::npos) << text;
}

TEST(PrivateBroker, MosquittoVersionIsRead) {
  TempDir dir;
  EXPECT_EQ(
      mosquitto_version(DSEKP_MOSQUITTO_PATH, dir.file("v.txt")).rfind("mosquitto version", 0), 0u);
  EXPECT_EQ(mosquitto_version(dir.file("none"), dir.file("v2.txt")), "unknown");
}

}  // namespace
}  // namespace dsekp::experiment
