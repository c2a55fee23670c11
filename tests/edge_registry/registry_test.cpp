// DeviceRegistry on a real SQLite file: creation with mode 0600, add/find/list/remove/rotate,
// refused inputs, a stable EDGE_SALT, and a second connection (the running edge) seeing every
// change without reopening.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "edge/registry/device_material.hpp"
#include "edge/registry/device_registry.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge {
namespace {

mode_t file_mode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

bool equal(ByteView a, ByteView b) {
  return constant_time_equal(a, b);
}

class RegistryTest : public ::testing::Test {
 protected:
  std::unique_ptr<DeviceRegistry> open(OpenMode mode = OpenMode::create_if_missing) {
    std::unique_ptr<DeviceRegistry> registry;
    const auto status = DeviceRegistry::open(db_, mode, registry);
    EXPECT_TRUE(status.ok()) << status.message();
    return registry;
  }

  DeviceMaterial add(DeviceRegistry& registry, const std::string& dev_id) {
    DeviceMaterial material;
    const auto status = registry.add(dev_id, material);
    EXPECT_TRUE(status.ok()) << status.message();
    return material;
  }

  /// Runs `sql` on the file through a connection of its own (an older build's schema, say).
  void run_sql(const char* sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }

  test::TempDir dir_;
  std::string db_ = dir_.file("registry.db");
};

TEST_F(RegistryTest, CreatesTheDatabaseAndItsWalWithMode0600) {
  ::umask(0);  // the most permissive umask must not matter
  auto registry = open();
  ::umask(022);
  EXPECT_EQ(file_mode(db_), 0600u);
  add(*registry, "sensor-1");
  // While a connection is open in WAL mode the -wal and -shm files exist: same mode.
  EXPECT_EQ(file_mode(db_ + "-wal"), 0600u);
  EXPECT_EQ(file_mode(db_ + "-shm"), 0600u);
}

TEST_F(RegistryTest, ExistingOnlyDoesNotCreateAMissingFile) {
  std::unique_ptr<DeviceRegistry> registry;
  const auto status = DeviceRegistry::open(db_, OpenMode::existing_only, registry);
  EXPECT_EQ(status.code(), RegistryErrc::not_found) << status.message();
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(RegistryTest, RefusesAFileOpenToGroupOrOthers) {
  open();
  ASSERT_EQ(::chmod(db_.c_str(), 0640), 0);
  std::unique_ptr<DeviceRegistry> registry;
  const auto status = DeviceRegistry::open(db_, OpenMode::existing_only, registry);
  EXPECT_EQ(status.code(), RegistryErrc::insecure_file);
  EXPECT_NE(status.message().find("chmod 600"), std::string::npos) << status.message();
}

TEST_F(RegistryTest, RefusesFilesThatAreNotARegistry) {
  {
    std::ofstream(db_) << "this is not a database, just some text that is long enough......"
                       << std::string(200, 'x');
  }
  ASSERT_EQ(::chmod(db_.c_str(), 0600), 0);
  std::unique_ptr<DeviceRegistry> registry;
  auto status = DeviceRegistry::open(db_, OpenMode::create_if_missing, registry);
  EXPECT_EQ(status.code(), RegistryErrc::not_a_registry) << status.message();

  // Another application's SQLite database is refused, not modified.
  const std::string other = dir_.file("other.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  ASSERT_EQ(::chmod(other.c_str(), 0600), 0);
  status = DeviceRegistry::open(other, OpenMode::create_if_missing, registry);
  EXPECT_EQ(status.code(), RegistryErrc::not_a_registry) << status.message();
}

TEST_F(RegistryTest, AddThenFindReturnsTheSameCredentials) {
  auto registry = open();
  const DeviceMaterial added = add(*registry, "sensor-1");
  EXPECT_EQ(added.credentials.dev_id.str(), "sensor-1");
  EXPECT_EQ(added.broker_username, "sensor-1");
  EXPECT_EQ(added.broker_password.size(), 2 * kBrokerPasswordBytes);
  EXPECT_GT(added.credentials.generation, 0u);
  EXPECT_TRUE(equal(added.edge_salt.view(), registry->edge_salt().view()));

  DeviceCredentials found;
  ASSERT_TRUE(registry->find("sensor-1", found).ok());
  EXPECT_EQ(found.dev_id.str(), "sensor-1");
  EXPECT_TRUE(equal(found.dev_secret.view(), added.credentials.dev_secret.view()));
  EXPECT_TRUE(equal(found.psk_key.view(), added.credentials.psk_key.view()));
  EXPECT_EQ(found.generation, added.credentials.generation);

  DeviceMaterial shown;
  ASSERT_TRUE(registry->material("sensor-1", shown).ok());
  EXPECT_TRUE(equal(shown.credentials.dev_secret.view(), added.credentials.dev_secret.view()));
  EXPECT_EQ(shown.broker_password, added.broker_password);

  DeviceCredentials missing;
  EXPECT_EQ(registry->find("sensor-2", missing).code(), RegistryErrc::not_found);
}

TEST_F(RegistryTest, EveryDeviceGetsItsOwnRandomKeys) {
  auto registry = open();
  const DeviceMaterial a = add(*registry, "a");
  const DeviceMaterial b = add(*registry, "b");
  EXPECT_FALSE(equal(a.credentials.dev_secret.view(), b.credentials.dev_secret.view()));
  EXPECT_FALSE(equal(a.credentials.psk_key.view(), b.credentials.psk_key.view()));
  EXPECT_NE(a.broker_password, b.broker_password);
  EXPECT_NE(a.credentials.generation, b.credentials.generation);
}

TEST_F(RegistryTest, InvalidDevIdsAreRefusedAndNothingIsStored) {
  auto registry = open();
  for (const std::string& bad :
       {std::string(), std::string("has space"), std::string("a/b"), std::string("a+b"),
        std::string("#"), std::string("caf\xc3\xa9"), std::string(65, 'x')}) {
    DeviceMaterial material;
    EXPECT_EQ(registry->add(bad, material).code(), RegistryErrc::invalid_dev_id) << bad;
    DeviceCredentials found;
    EXPECT_EQ(registry->find(bad, found).code(), RegistryErrc::invalid_dev_id) << bad;
  }
  std::vector<DeviceInfo> devices;
  ASSERT_TRUE(registry->list(devices).ok());
  EXPECT_TRUE(devices.empty());
  add(*registry, std::string(64, 'x'));  // the longest valid dev_id
}

TEST_F(RegistryTest, DuplicateAddIsRefusedAndKeepsTheOriginalKeys) {
  auto registry = open();
  const DeviceMaterial first = add(*registry, "sensor-1");
  DeviceMaterial second;
  const auto status = registry->add("sensor-1", second);
  EXPECT_EQ(status.code(), RegistryErrc::already_exists);
  DeviceCredentials found;
  ASSERT_TRUE(registry->find("sensor-1", found).ok());
  EXPECT_TRUE(equal(found.dev_secret.view(), first.credentials.dev_secret.view()));
  EXPECT_EQ(found.generation, first.credentials.generation);
}

TEST_F(RegistryTest, ListIsOrderedByDevIdAndCarriesNoSecrets) {
  auto registry = open();
  add(*registry, "zeta");
  add(*registry, "alpha");
  add(*registry, "mid.1");
  std::vector<DeviceInfo> devices;
  ASSERT_TRUE(registry->list(devices).ok());
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].dev_id, "alpha");
  EXPECT_EQ(devices[1].dev_id, "mid.1");
  EXPECT_EQ(devices[2].dev_id, "zeta");
  EXPECT_FALSE(devices[0].rotated_ms.has_value());
  EXPECT_GT(devices[0].created_ms, 0);
}

TEST_F(RegistryTest, RemoveForgetsTheDeviceAndReAddGetsNewKeysAndGeneration) {
  auto registry = open();
  const DeviceMaterial first = add(*registry, "sensor-1");
  ASSERT_TRUE(registry->remove("sensor-1").ok());
  DeviceCredentials found;
  EXPECT_EQ(registry->find("sensor-1", found).code(), RegistryErrc::not_found);
  EXPECT_EQ(registry->remove("sensor-1").code(), RegistryErrc::not_found);

  const DeviceMaterial again = add(*registry, "sensor-1");
  EXPECT_GT(again.credentials.generation, first.credentials.generation);
  EXPECT_FALSE(equal(again.credentials.dev_secret.view(), first.credentials.dev_secret.view()));
}

// The credential cache keeps its answers while the change mark holds, so the mark must hold
// while nothing changes (or the cache would never answer) and move with any commit, also one
// that leaves the generation where it was (a file restored from an older copy).
TEST_F(RegistryTest, TheChangeMarkHoldsUntilTheFileChanges) {
  auto registry = open();
  add(*registry, "sensor-1");
  RegistryChangeMark first, second, after_edit, after_add;
  ASSERT_TRUE(registry->change_mark(first).ok());
  ASSERT_TRUE(registry->change_mark(second).ok());
  EXPECT_EQ(first, second);

  run_sql("UPDATE devices SET dev_secret = zeroblob(32) WHERE dev_id = 'sensor-1'");
  ASSERT_TRUE(registry->change_mark(after_edit).ok());
  EXPECT_EQ(after_edit.generation, first.generation);
  EXPECT_NE(after_edit, first);

  add(*registry, "sensor-2");
  ASSERT_TRUE(registry->change_mark(after_add).ok());
  EXPECT_GT(after_add.generation, after_edit.generation);
  RegistryChangeMark again;
  ASSERT_TRUE(registry->change_mark(again).ok());
  EXPECT_EQ(again, after_add);
}

TEST_F(RegistryTest, RotateReplacesAllSecretsAndBumpsTheGeneration) {
  auto registry = open();
  const DeviceMaterial before = add(*registry, "sensor-1");
  DeviceInfo info_before;
  ASSERT_TRUE(registry->info("sensor-1", info_before).ok());

  DeviceMaterial after;
  ASSERT_TRUE(registry->rotate("sensor-1", after).ok());
  EXPECT_GT(after.credentials.generation, before.credentials.generation);
  EXPECT_FALSE(equal(after.credentials.dev_secret.view(), before.credentials.dev_secret.view()));
  EXPECT_FALSE(equal(after.credentials.psk_key.view(), before.credentials.psk_key.view()));
  EXPECT_NE(after.broker_password, before.broker_password);

  DeviceCredentials found;
  ASSERT_TRUE(registry->find("sensor-1", found).ok());
  EXPECT_TRUE(equal(found.dev_secret.view(), after.credentials.dev_secret.view()));
  EXPECT_EQ(found.generation, after.credentials.generation);

  DeviceInfo info_after;
  ASSERT_TRUE(registry->info("sensor-1", info_after).ok());
  EXPECT_EQ(info_after.created_ms, info_before.created_ms);
  ASSERT_TRUE(info_after.rotated_ms.has_value());
  EXPECT_GE(*info_after.rotated_ms, info_after.created_ms);

  DeviceMaterial unknown;
  EXPECT_EQ(registry->rotate("nobody", unknown).code(), RegistryErrc::not_found);
}

TEST_F(RegistryTest, EdgeSaltIsDrawnOnceAndNeverChanges) {
  std::array<std::uint8_t, kEdgeSaltSize> salt{};
  {
    auto registry = open();
    ASSERT_EQ(registry->edge_salt().view().size(), kEdgeSaltSize);
    std::copy_n(registry->edge_salt().view().begin(), kEdgeSaltSize, salt.begin());
    add(*registry, "a");
    DeviceMaterial rotated;
    ASSERT_TRUE(registry->rotate("a", rotated).ok());
    EXPECT_TRUE(equal(rotated.edge_salt.view(), salt));
  }
  auto reopened = open(OpenMode::existing_only);
  EXPECT_TRUE(equal(reopened->edge_salt().view(), salt));
  // A second database is a second deployment with its own salt.
  std::unique_ptr<DeviceRegistry> other;
  ASSERT_TRUE(DeviceRegistry::open(dir_.file("other.db"), OpenMode::create_if_missing, other).ok());
  EXPECT_FALSE(equal(other->edge_salt().view(), salt));
}

TEST_F(RegistryTest, ASecondConnectionSeesChangesWithoutReopening) {
  auto edge = open();                        // the running edge daemon
  auto cli = open(OpenMode::existing_only);  // `dsekp keys` in another process
  std::uint64_t start = 0;
  ASSERT_TRUE(edge->generation(start).ok());

  DeviceCredentials found;
  EXPECT_EQ(edge->find("sensor-1", found).code(), RegistryErrc::not_found);
  const DeviceMaterial added = add(*cli, "sensor-1");
  ASSERT_TRUE(edge->find("sensor-1", found).ok());
  EXPECT_TRUE(equal(found.dev_secret.view(), added.credentials.dev_secret.view()));

  DeviceMaterial rotated;
  ASSERT_TRUE(cli->rotate("sensor-1", rotated).ok());
  ASSERT_TRUE(edge->find("sensor-1", found).ok());
  EXPECT_TRUE(equal(found.dev_secret.view(), rotated.credentials.dev_secret.view()));
  EXPECT_EQ(found.generation, rotated.credentials.generation);

  ASSERT_TRUE(cli->remove("sensor-1").ok());
  EXPECT_EQ(edge->find("sensor-1", found).code(), RegistryErrc::not_found);

  std::uint64_t now = 0;
  ASSERT_TRUE(edge->generation(now).ok());
  EXPECT_EQ(now, start + 3);  // add, rotate, remove
}

TEST_F(RegistryTest, ChangesSinceListsAddsRotationsAndRemovals) {
  auto edge = open();
  auto cli = open(OpenMode::existing_only);
  add(*cli, "kept");
  add(*cli, "rotated");
  add(*cli, "removed");
  ChangeSet first;
  ASSERT_TRUE(edge->changes_since(0, first).ok());
  ASSERT_EQ(first.changes.size(), 3u);
  EXPECT_EQ(first.changes[0].dev_id, "kept");
  EXPECT_FALSE(first.changes[0].removed);

  ChangeSet none;
  ASSERT_TRUE(edge->changes_since(first.generation, none).ok());
  EXPECT_TRUE(none.changes.empty());
  EXPECT_EQ(none.generation, first.generation);

  DeviceMaterial material;
  ASSERT_TRUE(cli->rotate("rotated", material).ok());
  ASSERT_TRUE(cli->remove("removed").ok());
  ChangeSet later;
  ASSERT_TRUE(edge->changes_since(first.generation, later).ok());
  ASSERT_EQ(later.changes.size(), 2u);
  EXPECT_EQ(later.changes[0].dev_id, "rotated");
  EXPECT_FALSE(later.changes[0].removed);
  EXPECT_EQ(later.changes[0].generation, material.credentials.generation);
  EXPECT_EQ(later.changes[1].dev_id, "removed");
  EXPECT_TRUE(later.changes[1].removed);
  EXPECT_EQ(later.generation, later.changes[1].generation);

  // Re-adding a removed device replaces its tombstone: one change, not removed.
  add(*cli, "removed");
  ChangeSet readded;
  ASSERT_TRUE(edge->changes_since(later.generation, readded).ok());
  ASSERT_EQ(readded.changes.size(), 1u);
  EXPECT_FALSE(readded.changes[0].removed);
}

// A new registry puts its devices on per-device uplink topics; one made before they existed
// (schema 2) is upgraded on open and keeps the shared topics its devices publish on, so a
// regenerated ACL does not lock them out.
TEST_F(RegistryTest, UplinkTopicsArePerDeviceForANewRegistryAndSharedForAnUpgradedOne) {
  {
    auto registry = open();
    UplinkTopics topics = UplinkTopics::shared;
    ASSERT_TRUE(registry->uplink_topics(topics).ok());
    EXPECT_EQ(topics, UplinkTopics::per_device);
    DeviceMaterial material;
    ASSERT_TRUE(registry->add("esp32-01", material).ok());
    EXPECT_EQ(material.uplink_topics, UplinkTopics::per_device);
  }
  // Back to what schema 2 looked like.
  ASSERT_NO_FATAL_FAILURE(
      run_sql("ALTER TABLE deployment DROP COLUMN uplink_topics; "
              "DROP TABLE dynamic_security; ALTER TABLE devices DROP COLUMN broker; "
              "ALTER TABLE deployment DROP COLUMN topic_prefix; "
              "ALTER TABLE devices DROP COLUMN secret_erased_ms; ALTER TABLE devices "
              "DROP COLUMN ratchet; UPDATE deployment SET schema_version = 2"));
  auto registry = open();
  UplinkTopics topics = UplinkTopics::per_device;
  ASSERT_TRUE(registry->uplink_topics(topics).ok());
  EXPECT_EQ(topics, UplinkTopics::shared);
  DeviceMaterial material;
  ASSERT_TRUE(registry->material("esp32-01", material).ok());
  EXPECT_EQ(material.uplink_topics, UplinkTopics::shared);
  ASSERT_TRUE(registry->set_uplink_topics(UplinkTopics::per_device).ok());
  ASSERT_TRUE(registry->uplink_topics(topics).ok());
  EXPECT_EQ(topics, UplinkTopics::per_device);
}

// A registry from before the dynamic-security mode (schema 3) is upgraded on open and stays on
// the broker files until told otherwise.
TEST_F(RegistryTest, ASchema3RegistryIsUpgradedAndKeepsTheBrokerFiles) {
  {
    auto registry = open();
    DeviceMaterial material;
    ASSERT_TRUE(registry->add("esp32-01", material).ok());
  }
  ASSERT_NO_FATAL_FAILURE(
      run_sql("DROP TABLE dynamic_security; ALTER TABLE devices DROP COLUMN broker; "
              "ALTER TABLE deployment DROP COLUMN topic_prefix; "
              "ALTER TABLE devices DROP COLUMN secret_erased_ms; ALTER TABLE devices "
              "DROP COLUMN ratchet; UPDATE deployment SET schema_version = 3"));
  auto registry = open();
  DynamicSecuritySettings settings;
  EXPECT_EQ(registry->dynamic_security(settings).code(), RegistryErrc::not_found);
  settings.host = "127.0.0.1";
  settings.port = 1884;
  settings.admin = {"admin", "secret"};
  settings.topic_prefix = "site1/";
  settings.psk_baseline = true;
  ASSERT_TRUE(registry->set_dynamic_security(settings).ok());
  DynamicSecuritySettings read;
  ASSERT_TRUE(registry->dynamic_security(read).ok());
  EXPECT_EQ(read.port, 1884);
  EXPECT_EQ(read.admin.password, "secret");
  EXPECT_EQ(read.topic_prefix, "site1/");
  EXPECT_TRUE(read.psk_baseline);
  ASSERT_TRUE(registry->clear_dynamic_security().ok());
  EXPECT_EQ(registry->dynamic_security(read).code(), RegistryErrc::not_found);
  DeviceCredentials found;
  EXPECT_TRUE(registry->find("esp32-01", found).ok());
  DeviceMaterial material;
  ASSERT_TRUE(registry->material("esp32-01", material).ok());
  EXPECT_EQ(material.broker, "") << "not recorded before schema 4";
}

// Schema 4 had no republish base topic and no recorded topic prefix: upgraded on open, a kept
// row grants the default base, and the prefix is "" until recorded.
TEST_F(RegistryTest, ASchema4RegistryIsUpgradedAndItsBrokerKeepsTheDefaultRepublishTopic) {
  {
    auto registry = open();
    DynamicSecuritySettings settings;
    settings.host = "127.0.0.1";
    settings.admin = {"admin", "secret"};
    ASSERT_TRUE(registry->set_dynamic_security(settings).ok());
  }
  ASSERT_NO_FATAL_FAILURE(
      run_sql("ALTER TABLE dynamic_security DROP COLUMN republish_topic; "
              "ALTER TABLE deployment DROP COLUMN topic_prefix; "
              "ALTER TABLE devices DROP COLUMN secret_erased_ms; ALTER TABLE devices "
              "DROP COLUMN ratchet; UPDATE deployment SET schema_version = 4"));
  auto registry = open();
  DynamicSecuritySettings read;
  ASSERT_TRUE(registry->dynamic_security(read).ok());
  EXPECT_EQ(read.republish_topic, "");
  EXPECT_EQ(read.admin.password, "secret");
  read.republish_topic = "site1/telemetry";
  ASSERT_TRUE(registry->set_dynamic_security(read).ok());
  ASSERT_TRUE(registry->dynamic_security(read).ok());
  EXPECT_EQ(read.republish_topic, "site1/telemetry");
  std::string prefix = "x";
  ASSERT_TRUE(registry->topic_prefix(prefix).ok());
  EXPECT_EQ(prefix, "");
}

// Schema 6 records per device whether it ratchets its secret (PROTOCOL.md 6.6); the devices of
// a schema 5 registry are v1 devices and stay so.
TEST_F(RegistryTest, ASchema5RegistryIsUpgradedAndItsDevicesDoNotRatchet) {
  {
    auto registry = open();
    DeviceMaterial material;
    ASSERT_TRUE(registry->add("esp32-01", material).ok());
  }
  ASSERT_NO_FATAL_FAILURE(
      run_sql("ALTER TABLE devices DROP COLUMN secret_erased_ms; ALTER TABLE devices "
              "DROP COLUMN ratchet; "
              "UPDATE deployment SET schema_version = 5"));
  auto registry = open();
  DeviceCredentials found;
  ASSERT_TRUE(registry->find("esp32-01", found).ok());
  EXPECT_FALSE(found.ratchet);
  DeviceMaterial ratcheting;
  ASSERT_TRUE(registry->add("esp32-02", ratcheting, {}, /*ratchet=*/true).ok());
  ASSERT_TRUE(registry->find("esp32-02", found).ok());
  EXPECT_TRUE(found.ratchet);
  DeviceInfo info;
  ASSERT_TRUE(registry->info("esp32-02", info).ok());
  EXPECT_TRUE(info.ratchet);
  // A rotation keeps the mode unless told; the material says it.
  ASSERT_TRUE(registry->rotate("esp32-02", ratcheting).ok());
  EXPECT_TRUE(ratcheting.credentials.ratchet);
  EXPECT_EQ(
      nlohmann::json::parse(material_json(ratcheting, {"127.0.0.1", 1883})).value("ratchet", false),
      true);
  ASSERT_TRUE(registry->rotate("esp32-02", ratcheting, {}, false).ok());
  ASSERT_TRUE(registry->find("esp32-02", found).ok());
  EXPECT_FALSE(found.ratchet);
  EXPECT_EQ(material_json(ratcheting, {"127.0.0.1", 1883}).find("ratchet"), std::string::npos);
}

// Schema 7 records when a ratcheting device's provisioned secret was erased; the devices of a
// schema 6 registry hold theirs. The erasure overwrites the secret in the database file and
// leaves no page image of it in the write-ahead log (PROTOCOL.md 6.6, edge rule 1).
TEST_F(RegistryTest, ASchema6RegistryIsUpgradedAndAnErasedSecretLeavesTheFiles) {
  DeviceMaterial ratcheting;
  {
    auto registry = open();
    ASSERT_TRUE(registry->add("esp32-01", ratcheting, {}, /*ratchet=*/true).ok());
  }
  ASSERT_NO_FATAL_FAILURE(
      run_sql("ALTER TABLE devices DROP COLUMN secret_erased_ms; "
              "UPDATE deployment SET schema_version = 6"));
  auto registry = open();
  DeviceCredentials found;
  ASSERT_TRUE(registry->find("esp32-01", found).ok());
  EXPECT_FALSE(found.secret_erased);
  EXPECT_TRUE(
      constant_time_equal(found.dev_secret.view(), ratcheting.credentials.dev_secret.view()));

  const auto files_hold_secret = [&] {
    const auto view = ratcheting.credentials.dev_secret.view();
    const std::string secret(view.begin(), view.end());
    for (const std::string& path : {db_, db_ + "-wal"}) {
      std::ifstream in(path, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), {});
      if (bytes.find(secret) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(files_hold_secret()) << "the check must see the secret while it is there";
  bool erased = false;
  ASSERT_TRUE(registry->erase_provisioned_secret("esp32-01", found.generation, erased).ok());
  EXPECT_TRUE(erased);
  bool complete = false;
  ASSERT_TRUE(registry->checkpoint_wal(complete).ok());
  EXPECT_TRUE(complete);
  EXPECT_FALSE(files_hold_secret());
  DeviceInfo info;
  ASSERT_TRUE(registry->info("esp32-01", info).ok());
  EXPECT_TRUE(info.secret_erased_ms.has_value());
  ASSERT_TRUE(registry->erase_provisioned_secret("esp32-01", found.generation, erased).ok());
  EXPECT_FALSE(erased) << "once";
}

// The deployment's topic prefix goes into every topic of the devices' material, JSON and
// firmware header alike; one that would break a topic, an ACL line or a C string is refused.
TEST_F(RegistryTest, TheTopicPrefixIsRecordedAndInEveryTopicOfTheMaterial) {
  auto registry = open();
  ASSERT_TRUE(registry->set_topic_prefix("site1/").ok());
  DeviceMaterial material;
  ASSERT_TRUE(registry->add("esp32-01", material).ok());
  EXPECT_EQ(material.topic_prefix, "site1/");
  const auto json = nlohmann::json::parse(
      material_json(material, {"127.0.0.1", 1883}, MaterialMode::with_psk_baseline));
  for (const auto& [name, topic] : json.at("topics").items())
    EXPECT_EQ(topic.get<std::string>().rfind("site1/", 0), 0u) << name << " " << topic;
  const std::string header =
      material_c_header(material, {"127.0.0.1", 1883}, MaterialMode::dsekp_only);
  EXPECT_NE(header.find("#define DSEKP_TOPIC_PREFIX \"site1/\"\n"), std::string::npos) << header;
  EXPECT_NE(header.find("#define DSEKP_TOPIC_NAME_ACK \"site1/dsekp/init/ack/esp32-01\"\n"),
            std::string::npos)
      << header;
  for (const char* bad : {"a\"b/", "a\\b/", "a+/", "$SYS/", "a b/", "a??/", "/", "/a/", "a//"})
    EXPECT_EQ(registry->set_topic_prefix(bad).code(), RegistryErrc::invalid_argument) << bad;
  std::string prefix;
  ASSERT_TRUE(registry->topic_prefix(prefix).ok());
  EXPECT_EQ(prefix, "site1/");
}

TEST_F(RegistryTest, TheEdgeBrokerUserCannotBeADevice) {
  auto registry = open();
  add(*registry, "sensor-1");
  BrokerAccount account;
  EXPECT_EQ(registry->edge_broker_account(account).code(), RegistryErrc::not_found);
  EXPECT_EQ(registry->set_edge_broker_user("sensor-1", account).code(),
            RegistryErrc::name_conflict);
  EXPECT_EQ(registry->set_edge_broker_user("edge:1", account).code(), RegistryErrc::invalid_name);
  ASSERT_TRUE(registry->set_edge_broker_user("edge", account).ok());
  EXPECT_EQ(account.username, "edge");
  EXPECT_EQ(account.password.size(), 2 * kBrokerPasswordBytes);
  DeviceMaterial material;
  EXPECT_EQ(registry->add("edge", material).code(), RegistryErrc::name_conflict);

  std::vector<BrokerAccount> devices;
  ASSERT_TRUE(registry->device_broker_accounts(devices).ok());
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].username, "sensor-1");
}

}  // namespace
}  // namespace dsekp::edge
