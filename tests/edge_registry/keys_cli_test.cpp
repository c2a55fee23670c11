// `dsekp keys` end to end: the built binary is run as a child process against a database in a
// temp dir, and its output is checked against the registry (opened with the library).
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <ctime>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "edge/registry/device_registry.hpp"
#include "edge/registry/text_encoding.hpp"
#include "edge/store/sqlite_session_store.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

#ifndef DSEKP_C_COMPILER
#error "DSEKP_C_COMPILER must name a C compiler"
#endif

namespace dsekp::edge {
namespace {

using nlohmann::json;

class KeysCliTest : public ::testing::Test {
 protected:
  test::RunResult keys(std::vector<std::string> args) {
    args.insert(args.begin(), {::dsekp::test::cli_path(), "keys"});
    return test::run_command(args, dir_.path().string());
  }

  /// `keys add` that must succeed; returns its JSON.
  json add(const std::string& dev_id) {
    const auto r = keys({"add", dev_id, "--db", db_});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }

  std::unique_ptr<DeviceRegistry> open_registry() {
    std::unique_ptr<DeviceRegistry> registry;
    const auto s = DeviceRegistry::open(db_, OpenMode::existing_only, registry);
    EXPECT_TRUE(s.ok()) << s.message();
    return registry;
  }

  test::TempDir dir_;
  std::string db_ = dir_.file("registry.db");
};

TEST_F(KeysCliTest, AddPrintsTheMaterialStoredInAPrivateDatabase) {
  const json j = add("sensor-1");
  struct stat st {};
  ASSERT_EQ(::stat(db_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto registry = open_registry();
  DeviceCredentials found;
  ASSERT_TRUE(registry->find("sensor-1", found).ok());
  EXPECT_EQ(j["dev_id"], "sensor-1");
  EXPECT_EQ(j["dev_secret_hex"], to_hex(found.dev_secret.view()));
  EXPECT_FALSE(j.contains("psk_key_hex")) << "the PSK baseline's key only when asked for";
  EXPECT_EQ(j["edge_salt_hex"], to_hex(registry->edge_salt().view()));
  EXPECT_EQ(j["generation"], found.generation);
  EXPECT_EQ(j["broker"]["host"], "localhost");
  EXPECT_EQ(j["broker"]["port"], 1883);
  EXPECT_EQ(j["broker"]["username"], "sensor-1");
  EXPECT_EQ(j["broker"]["password"].get<std::string>().size(), 32u);
}

// The finding: `keys show --reveal` printed localhost:1883 for a device provisioned with another
// broker, so material printed again did not match what the device holds. The broker is recorded
// at add, kept by a rotation without --broker, and replaced by one with it.
// A ratcheting device (PROTOCOL.md 6.6): the material says so, the C header too, `show` prints the
// epoch of the edge's stored secret, and `reset-state` of a device beyond the edge's look-ahead
// is refused unless forced (it would lock the device out).
TEST_F(KeysCliTest, ARatchetingDeviceIsShownWithItsEpochAndItsStateIsNotResetBlindly) {
  auto r = keys({"add", "valve-1", "--db", db_, "--ratchet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).value("ratchet", false), true);
  // The firmware header says so too (the SDK's dsekp_ratchet).
  r = keys({"add", "valve-2", "--db", db_, "--ratchet", "--format", "header"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("#define DSEKP_RATCHET 1\n"), std::string::npos) << r.out;
  r = keys({"show", "valve-1", "--db", db_, "--reveal", "--format", "header"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("#define DSEKP_RATCHET 1\n"), std::string::npos) << r.out;
  r = keys({"show", "valve-1", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).at("ratchet_epoch"), nullptr) << "no state stored yet";
  EXPECT_NE(keys({"list", "--db", db_}).out.find("yes"), std::string::npos);

  // The edge's stored state, 20 sessions past the provisioned secret.
  {
    std::string error;
    auto store = SqliteSessionStore::open(db_ + ".state", {}, error);
    ASSERT_NE(store, nullptr) << error;
    EdgeDeviceState state;
    DevId id;
    ASSERT_EQ(id.assign("valve-1"), Error::ok);
    ASSERT_TRUE(enable_ratchet(state, id, DevSecret{}));
    state.ratchet.epoch = 20;
    std::uint64_t generation = kAnyGeneration;
    ASSERT_TRUE(store->save(id, state, 1, generation).ok());
  }
  r = keys({"show", "valve-1", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).at("ratchet_epoch"), 20);
  r = keys({"reset-state", "valve-1", "--db", db_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("lock it out"), std::string::npos) << r.err;
  // An edge run with a longer look-ahead finds it again (the device may be one step ahead).
  EXPECT_EQ(keys({"reset-state", "valve-1", "--db", db_, "--ratchet-lookahead", "20"}).exit_code,
            2);
  r = keys({"reset-state", "valve-1", "--db", db_, "--ratchet-lookahead", "21"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = keys({"show", "valve-1", "--db", db_});
  EXPECT_EQ(json::parse(r.out).at("ratchet_epoch"), nullptr);

  // Exported and imported into another registry, it still ratchets.
  ASSERT_EQ(keys({"export", "--db", db_, "--out", dir_.file("fleet.json")}).exit_code, 0);
  const std::string other = dir_.file("other.db");
  r = keys({"import", dir_.file("fleet.json"), "--db", other});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(keys({"show", "valve-1", "--db", other}).out).at("ratchet"), true);

  // Once the edge erased its provisioned secret (after the state went past it), the state holds
  // the only copy: show says so, --reveal and export have nothing to give, and reset-state is
  // refused even within the look-ahead unless forced.
  {
    std::unique_ptr<DeviceRegistry> registry;
    ASSERT_TRUE(DeviceRegistry::open(db_, OpenMode::existing_only, registry).ok());
    DeviceInfo info;
    ASSERT_TRUE(registry->info("valve-1", info).ok());
    bool erased = false;
    ASSERT_TRUE(registry->erase_provisioned_secret("valve-1", info.generation, erased).ok());
    ASSERT_TRUE(erased);
  }
  r = keys({"show", "valve-1", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(json::parse(r.out).at("secret_erased").is_string()) << r.out;
  r = keys({"show", "valve-1", "--db", db_, "--reveal"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("was erased"), std::string::npos) << r.err;
  r = keys({"reset-state", "valve-1", "--db", db_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("only copy"), std::string::npos) << r.err;
  r = keys({"reset-state", "valve-1", "--db", db_, "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(keys({"add", "valve-3", "--db", db_}).exit_code, 0);
  r = keys({"export", "--db", db_, "--out", dir_.file("fleet2.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("valve-1 left out"), std::string::npos) << r.err;
  const json exported = json::parse(dsekp::test::read_file(dir_.file("fleet2.json")));
  std::set<std::string> exported_ids;
  for (const json& d : exported) exported_ids.insert(d.at("dev_id").get<std::string>());
  EXPECT_EQ(exported_ids, (std::set<std::string>{"valve-2", "valve-3"}));

  // Rotating it out of ratchet mode.
  r = keys({"rotate", "valve-1", "--db", db_, "--ratchet", "off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(json::parse(r.out).contains("ratchet"));
  EXPECT_FALSE(json::parse(keys({"show", "valve-1", "--db", db_}).out).contains("ratchet_epoch"));
}

TEST_F(KeysCliTest, ShowRevealPrintsTheBrokerTheDeviceWasProvisionedWith) {
  const auto added = keys({"add", "sensor-1", "--db", db_, "--broker", "mqtt.example:8883"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const auto broker_of = [&](const test::RunResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    return j["broker"]["host"].get<std::string>() + ":" +
           std::to_string(j["broker"]["port"].get<int>());
  };
  EXPECT_EQ(broker_of(added), "mqtt.example:8883");
  EXPECT_EQ(broker_of(keys({"show", "sensor-1", "--db", db_, "--reveal"})), "mqtt.example:8883");
  EXPECT_EQ(broker_of(keys({"rotate", "sensor-1", "--db", db_})), "mqtt.example:8883");
  EXPECT_EQ(broker_of(keys({"rotate", "sensor-1", "--db", db_, "--broker", "10.0.0.7:1883"})),
            "10.0.0.7:1883");
  EXPECT_EQ(broker_of(keys({"show", "sensor-1", "--db", db_, "--reveal"})), "10.0.0.7:1883");
  EXPECT_EQ(broker_of(keys({"add", "sensor-2", "--db", db_})), "localhost:1883");
  const auto header = keys({"show", "sensor-1", "--db", db_, "--reveal", "--format", "header"});
  EXPECT_NE(header.out.find("10.0.0.7"), std::string::npos) << header.out;
}

// The finding: the documented `keys add DEV > DEV.json` left the device's secret in a file the
// umask made 0644. --out writes it 0600, whatever the umask, and prints nothing secret.
TEST_F(KeysCliTest, OutWritesTheMaterialToAPrivateFile) {
  const ::mode_t old_umask = ::umask(022);
  const std::string file = dir_.file("sensor-2.json");
  auto r = keys({"add", "sensor-2", "--db", db_, "--out", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "") << "the material went to standard output as well";
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const json written = json::parse(test::read_file(file));
  EXPECT_EQ(written["dev_id"], "sensor-2");

  const std::string again = dir_.file("sensor-2.h");
  r = keys({"show", "sensor-2", "--db", db_, "--reveal", "--format", "header", "--out", again});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(::stat(again.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(test::read_file(again).find("DSEKP_DEV_SECRET"), std::string::npos);
  ::umask(old_umask);

  // An --out that cannot be written is refused before the keys change.
  r = keys({"rotate", "sensor-2", "--db", db_, "--out", dir_.file("no-such-dir/x.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot write into"), std::string::npos) << r.err;
  r = keys({"show", "sensor-2", "--db", db_, "--reveal"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["dev_secret_hex"], written["dev_secret_hex"]) << "rotated anyway";
}

TEST_F(KeysCliTest, UplinkTopicsArePerDeviceUnlessSetToTheSharedOnes) {
  json j = add("sensor-1");
  EXPECT_EQ(j["topics"]["init"], "dsekp/init/sensor-1");
  EXPECT_EQ(j["topics"]["data"], "dsekp/data/sensor-1");
  EXPECT_EQ(j["topics"]["rekey"], "dsekp/rekey/sensor-1");
  auto r = keys({"uplink-topics", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "per-device\n");
  r = keys({"uplink-topics", "--db", db_, "shared"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "shared\n");
  EXPECT_NE(r.err.find("Re-provision"), std::string::npos) << r.err;
  j = add("sensor-2");
  EXPECT_EQ(j["topics"]["init"], "dsekp/init");
  EXPECT_EQ(j["topics"]["data"], "dsekp/data");
  EXPECT_NE(keys({"uplink-topics", "--db", db_, "per_device"}).exit_code, 0);
}

// The deployment's prefix, recorded once (keys topic-prefix or broker-config --prefix), is in
// every topic of the material, the header and the broker's grants without being given again.
TEST_F(KeysCliTest, TheTopicPrefixIsRecordedOnceAndUsedEverywhere) {
  auto r = keys({"topic-prefix", "--db", db_});
  EXPECT_NE(r.exit_code, 0);  // no registry yet, and showing does not make one
  // Set first, before any device (this creates the registry): every device has it from the start.
  r = keys({"topic-prefix", "--db", db_, "site1/"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "site1/\n");
  EXPECT_NE(r.err.find("Re-provision"), std::string::npos) << r.err;
  add("sensor-1");
  r = keys({"topic-prefix", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "site1/\n");
  r = keys({"show", "sensor-1", "--db", db_, "--reveal"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["topics"]["data"], "site1/dsekp/data/sensor-1");
  EXPECT_EQ(j["topics"]["ack"], "site1/dsekp/init/ack/sensor-1");
  r = keys({"show", "sensor-1", "--db", db_, "--reveal", "--format", "header"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("#define DSEKP_TOPIC_PREFIX \"site1/\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"site1/dsekp/init/sensor-1\""), std::string::npos) << r.out;

  const std::string out_dir = dir_.file("broker");
  r = keys({"broker-config", "--db", db_, "--out-dir", out_dir, "--edge-user", "edge"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(test::read_file(out_dir + "/acl").find("topic write site1/dsekp/data/sensor-1\n"),
            std::string::npos);
  // broker-config --prefix records a new one.
  r = keys({"broker-config", "--db", db_, "--out-dir", out_dir, "--edge-user", "edge", "--prefix",
            "site2/"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("\"site2/\" from now on"), std::string::npos) << r.err;
  EXPECT_EQ(keys({"topic-prefix", "--db", db_}).out, "site2/\n");
  // A run that writes no files (the edge's name is a device's) records nothing either.
  r = keys({"broker-config", "--db", db_, "--out-dir", out_dir, "--edge-user", "sensor-1",
            "--prefix", "site3/"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("registered dev_id"), std::string::npos) << r.err;
  EXPECT_EQ(keys({"topic-prefix", "--db", db_}).out, "site2/\n");

  // Refused: a prefix the broker would read as a filter, one the SDK cannot hold in a header.
  r = keys({"topic-prefix", "--db", db_, "a/+/"});
  EXPECT_EQ(r.exit_code, 2);
  const std::string long_prefix(40, 'p');
  r = keys({"topic-prefix", "--db", db_, long_prefix + "/"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--format header (firmware) will be refused"), std::string::npos) << r.err;
  r = keys({"add", "sensor-2", "--db", db_, "--format", "header"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("longer than the 32 characters"), std::string::npos) << r.err;
  EXPECT_EQ(keys({"show", "sensor-2", "--db", db_}).exit_code, 1);  // nothing was registered
  EXPECT_EQ(json::parse(keys({"add", "sensor-2", "--db", db_}).out)["topics"]["init"],
            long_prefix + "/dsekp/init/sensor-2");
}

// The key downlink requests are signed with, for a fleet tool that sends them itself: only with
// --reveal, and the registry's own.
TEST_F(KeysCliTest, AdminKeyIsPrintedOnlyWhenRevealed) {
  add("sensor-1");
  auto r = keys({"admin-key", "--db", db_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--reveal"), std::string::npos) << r.err;
  r = keys({"admin-key", "--db", db_, "--reveal"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::array<std::uint8_t, 32> key{};
  ASSERT_TRUE(open_registry()->admin_key(key).ok());
  EXPECT_EQ(r.out, to_hex(ByteView(key.data(), key.size())) + "\n");
}

TEST_F(KeysCliTest, HeaderFormatIsAValidCHeader) {
  const auto r = keys({"add", "esp32-01", "--db", db_, "--format", "header", "--broker",
                       "192.168.1.10:8883", "--psk-baseline"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ofstream(dir_.file("dsekp_device_config.h")) << r.out;
  // Uses every declaration, so -Werror also catches an unused or mistyped one; included after
  // the SDK's header as the example sketch does, so a macro that clashes with an SDK name fails.
  std::ofstream(dir_.file("main.c"))
      << "#include \"dsekp_client.h\"\n#include \"dsekp_device_config.h\"\n#include <string.h>\n"
         "int main(void) {\n"
         "  return (int)(strlen(DSEKP_DEV_ID) + strlen(DSEKP_BROKER_HOST) + DSEKP_BROKER_PORT +\n"
         "      strlen(DSEKP_BROKER_USERNAME) + strlen(DSEKP_BROKER_PASSWORD) +\n"
         "      strlen(DSEKP_TOPIC_NAME_INIT DSEKP_TOPIC_NAME_ACK DSEKP_TOPIC_NAME_DATA\n"
         "             DSEKP_TOPIC_NAME_DOWN DSEKP_TOPIC_NAME_REKEY DSEKP_TOPIC_NAME_PSK) +\n"
         "      DSEKP_TOPIC_REKEY + DSEKP_REGISTRY_GENERATION +\n"
         "      DSEKP_DEV_SECRET[31] + DSEKP_EDGE_SALT[0] + DSEKP_PSK_KEY[15]);\n}\n";
  const auto cc =
      test::run_command({DSEKP_C_COMPILER, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                         "-fsyntax-only", "-I", DSEKP_SDK_INCLUDE_DIR, dir_.file("main.c")},
                        dir_.path().string());
  EXPECT_EQ(cc.exit_code, 0) << cc.err << "\n" << r.out;
  EXPECT_NE(r.out.find("#define DSEKP_BROKER_HOST \"192.168.1.10\""), std::string::npos);
}

TEST_F(KeysCliTest, FailuresExitNonZeroWithAMessage) {
  add("sensor-1");
  auto r = keys({"add", "sensor-1", "--db", db_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("already registered"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());

  r = keys({"add", "bad/id", "--db", db_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("invalid dev_id"), std::string::npos) << r.err;

  r = keys({"show", "nobody", "--db", db_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no device \"nobody\""), std::string::npos) << r.err;

  // Usage errors exit 2, whether CLI11 or the command finds them; failures exit 1.
  r = keys({"add", "sensor-2", "--db", db_, "--broker", "no-port"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--broker: invalid broker address"), std::string::npos) << r.err;
  r = keys({"add", "sensor-3", "--db", db_, "--format", "yaml"});
  EXPECT_EQ(r.exit_code, 2);
  r = keys({"account", "add", "x", "--role", "admin", "--db", db_});
  EXPECT_EQ(r.exit_code, 2);
  r = test::run_command(
      {::dsekp::test::cli_path(), "edge", "--broker", "nohost", "--db", db_, "--no-csv"},
      dir_.path().string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--broker: expected HOST:PORT"), std::string::npos) << r.err;
  r = test::run_command({::dsekp::test::cli_path(), "edge", "--db", db_, "--no-csv"},
                        dir_.path().string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--broker is required"), std::string::npos) << r.err;
}

// `dsekp --help` lists the subcommands in the order an operator meets them.
TEST(DsekpCli, HelpListsSubcommandsInTheOrderAnOperatorMeetsThem) {
  const auto r = test::run_command({::dsekp::test::cli_path(), "--help"}, ".");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::size_t at = 0;
  for (const char* name :
       {"keys", "edge", "device", "experiment", "analyze", "bench", "link", "completion"}) {
    const std::size_t found = r.out.find(std::string("\n  ") + name + " ", at);
    ASSERT_NE(found, std::string::npos) << name << " missing or out of order:\n" << r.out;
    at = found;
  }
}

TEST_F(KeysCliTest, ReadCommandsDoNotCreateAMissingDatabase) {
  const auto r = keys({"list", "--db", db_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no such registry"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(KeysCliTest, ShowRevealsSecretsOnlyWhenAsked) {
  const json added = add("sensor-1");
  const std::string secret = added["dev_secret_hex"];

  auto r = keys({"show", "sensor-1", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(secret), std::string::npos);
  EXPECT_EQ(r.out.find(added["broker"]["password"].get<std::string>()), std::string::npos);
  const json info = json::parse(r.out);
  EXPECT_EQ(info["dev_id"], "sensor-1");
  EXPECT_TRUE(info["rotated_ms"].is_null());

  r = keys({"show", "sensor-1", "--db", db_, "--reveal"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["dev_secret_hex"], secret);
}

TEST_F(KeysCliTest, ListRotateAndRemove) {
  const json a = add("a");
  add("b");
  auto r = keys({"list", "--db", db_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json list = json::parse(r.out);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["dev_id"], "a");
  EXPECT_EQ(r.out.find(a["dev_secret_hex"].get<std::string>()), std::string::npos);

  r = keys({"rotate", "a", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json rotated = json::parse(r.out);
  EXPECT_NE(rotated["dev_secret_hex"], a["dev_secret_hex"]);
  EXPECT_GT(rotated["generation"].get<std::uint64_t>(), a["generation"].get<std::uint64_t>());
  EXPECT_EQ(rotated["edge_salt_hex"], a["edge_salt_hex"]);
  EXPECT_NE(r.err.find("re-provision"), std::string::npos) << r.err;

  r = keys({"remove", "b", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = keys({"list", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("a "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nb "), std::string::npos) << r.out;
}

// A fleet moves to another registry with the secrets its devices hold: export writes every
// device's material 0600, import registers it all (the new registry takes the devices'
// EDGE_SALT), and the material printed by the new registry is what the devices hold.
TEST_F(KeysCliTest, ExportAndImportMoveAFleetWithTheSecretsItHolds) {
  ASSERT_EQ(keys({"add", "a", "--db", db_, "--broker", "mqtt.example:8883"}).exit_code, 0);
  add("b");
  const std::string file = dir_.file("fleet.json");
  auto r = keys({"export", "--db", db_, "--out", file, "--psk-baseline"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(r.out, "") << "nothing secret on standard output";

  const std::string other = dir_.file("other.db");
  r = keys({"import", file, "--db", other});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* dev : {"a", "b"}) {
    const auto before = keys({"show", dev, "--db", db_, "--reveal", "--psk-baseline"});
    const auto after = keys({"show", dev, "--db", other, "--reveal", "--psk-baseline"});
    json x = json::parse(before.out), y = json::parse(after.out);
    x.erase("generation");
    y.erase("generation");
    EXPECT_EQ(x, y) << dev;
  }
  // All or none: a second import of the same devices changes nothing.
  r = keys({"import", file, "--db", other});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("already registered"), std::string::npos) << r.err;
  // A registry that provisioned devices of its own keeps its EDGE_SALT and refuses them.
  const std::string third = dir_.file("third.db");
  ASSERT_EQ(keys({"add", "c", "--db", third}).exit_code, 0);
  r = keys({"import", file, "--db", third});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("EDGE_SALT"), std::string::npos) << r.err;
  r = keys({"list", "--db", third, "--json"});
  EXPECT_EQ(json::parse(r.out).size(), 1u);
}

TEST_F(KeysCliTest, ImportTakesACsvOfSecretsMadeElsewhere) {
  add("existing");
  const std::string csv = dir_.file("fleet.csv");
  {
    std::ofstream out(csv);
    out << "dev_id,dev_secret_hex,broker_password\n"
        << "csv-1," << std::string(64, 'a') << ",password-of-csv-1\n"
        << "csv-2," << std::string(64, 'b') << ",\n";
  }
  auto r = keys({"import", csv, "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json one = json::parse(keys({"show", "csv-1", "--db", db_, "--reveal"}).out);
  EXPECT_EQ(one["dev_secret_hex"], std::string(64, 'a'));
  EXPECT_EQ(one["broker"]["password"], "password-of-csv-1");
  auto registry = open_registry();
  EXPECT_EQ(one["edge_salt_hex"], to_hex(registry->edge_salt().view()));
  const json two = json::parse(keys({"show", "csv-2", "--db", db_, "--reveal"}).out);
  EXPECT_EQ(two["broker"]["password"].get<std::string>().size(), 32u) << "drawn when not given";

  // Refused, and nothing added: a bad secret, an unknown column, a password with a space.
  for (const std::string& body :
       {std::string("dev_id,dev_secret_hex\ncsv-3,abcd\n"),
        std::string("dev_id,dev_secret_hex,colour\ncsv-3,") + std::string(64, 'c') + ",red\n",
        std::string("dev_id,dev_secret_hex,broker_password\ncsv-3,") + std::string(64, 'c') +
            ",has a space\n"}) {
    {
      std::ofstream out(csv);
      out << body;
    }
    r = keys({"import", csv, "--db", db_});
    EXPECT_NE(r.exit_code, 0) << body;
    EXPECT_TRUE(r.err.find("csv-3") != std::string::npos ||
                r.err.find("colour") != std::string::npos)
        << r.err;
  }
  EXPECT_EQ(json::parse(keys({"list", "--db", db_, "--json"}).out).size(), 3u);
}

// Times an operator can read: UTC ISO-8601 in the table and beside the milliseconds in JSON.
TEST_F(KeysCliTest, ListShowsReadableTimesAndGenerations) {
  add("a");
  ASSERT_EQ(keys({"rotate", "a", "--db", db_}).exit_code, 0);
  auto r = keys({"list", "--db", db_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json d = json::parse(r.out).at(0);
  const auto as_ms = [](const std::string& iso) {
    std::tm tm{};
    EXPECT_NE(::strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm), nullptr) << iso;
    return static_cast<std::int64_t>(::timegm(&tm)) * 1000 + std::stoi(iso.substr(20, 3));
  };
  EXPECT_EQ(as_ms(d["created"]), d["created_ms"].get<std::int64_t>());
  EXPECT_EQ(as_ms(d["rotated"]), d["rotated_ms"].get<std::int64_t>());
  EXPECT_EQ(d["generation"], 2);
  r = keys({"list", "--db", db_});
  const std::string created = d["created"].get<std::string>().substr(0, 19) + "Z";
  EXPECT_NE(r.out.find("created (UTC)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(created), std::string::npos) << r.out;
}

TEST_F(KeysCliTest, BrokerConfigWritesPasswordAndAclFiles) {
  add("a");
  add("b");
  const std::string out_dir = dir_.file("broker");
  auto r = keys({"broker-config", "--db", db_, "--out-dir", out_dir, "--edge-user", "edge"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("allow_anonymous false"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("password_file " + out_dir + "/passwd"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("acl_file " + out_dir + "/acl"), std::string::npos) << r.out;

  // By default the broker's group (Debian's mosquitto) reads passwd, when this user may give it
  // the file (root here, in CI); --broker-group "" keeps it private.
  struct stat st {};
  ASSERT_EQ(::stat((out_dir + "/passwd").c_str(), &st), 0);
  const struct group* mosquitto = ::getgrnam("mosquitto");
  if (::geteuid() == 0 && mosquitto != nullptr) {
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    EXPECT_EQ(st.st_gid, mosquitto->gr_gid);
  } else {
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  const std::string private_dir = dir_.file("broker-private");
  r = keys({"broker-config", "--db", db_, "--out-dir", private_dir, "--edge-user", "edge",
            "--broker-group", ""});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(::stat((private_dir + "/passwd").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(private_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  r = keys({"broker-config", "--db", db_, "--out-dir", dir_.file("broker-x"), "--edge-user", "edge",
            "--broker-group", "no-such-group-dsekp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no group \"no-such-group-dsekp\""), std::string::npos) << r.err;
  const std::string passwd = test::read_file(out_dir + "/passwd");
  EXPECT_EQ(passwd.rfind("a:$7$101$", 0), 0u) << passwd;
  EXPECT_NE(passwd.find("\nb:$7$101$"), std::string::npos) << passwd;
  EXPECT_NE(passwd.find("\nedge:$7$101$"), std::string::npos) << passwd;
  const std::string acl = test::read_file(out_dir + "/acl");
  EXPECT_NE(acl.find("user edge\n"), std::string::npos) << acl;
  // Every device grant in the device's own block; no pattern reaches the other accounts.
  EXPECT_NE(acl.find("user a\ntopic write dsekp/init/a\ntopic write dsekp/data/a\n"
                     "topic read dsekp/init/ack/a\ntopic read dsekp/down/a\n"
                     "topic read dsekp/rekey/a\n"),
            std::string::npos)
      << acl;
  EXPECT_EQ(acl.find("\npattern "), std::string::npos) << acl;

  // A device cannot take the edge's name, and the edge's name cannot be a device's.
  r = keys({"add", "edge", "--db", db_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("already a broker account"), std::string::npos) << r.err;
  r = keys({"broker-config", "--db", db_, "--out-dir", out_dir, "--edge-user", "a"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("registered dev_id"), std::string::npos) << r.err;
}

// What an operator does for a device quarantined as corrupt_state (reset-state), and what
// removing a device does to its sessions (remove): the stored state goes, keys and windows
// with it. Checked in the edge's own state database.
TEST_F(KeysCliTest, ResetStateAndRemoveDeleteTheDevicesStoredState) {
  add("a");
  add("b");
  const std::string state_db = db_ + ".state";
  const auto store_state = [&](const std::string& dev_id) {
    std::string error;
    auto store = SqliteSessionStore::open(state_db, {}, error);
    ASSERT_NE(store, nullptr) << error;
    EdgeDeviceState state;
    ASSERT_EQ(state.dev_id.assign(dev_id), Error::ok);
    std::uint64_t generation = kAnyGeneration;
    ASSERT_TRUE(store->save(state.dev_id, state, 1, generation).ok());
  };
  const auto stored = [&](const std::string& dev_id) {
    std::string error;
    auto store = SqliteSessionStore::open(state_db, {}, error);
    EXPECT_NE(store, nullptr) << error;
    DevId id;
    EXPECT_EQ(id.assign(dev_id), Error::ok);
    EdgeDeviceState state;
    std::uint64_t generation = kAbsentGeneration;
    EXPECT_TRUE(store->load(id, state, generation).ok());
    return generation != kAbsentGeneration;
  };
  store_state("a");
  store_state("b");
  auto r = keys({"reset-state", "a", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("removed the stored state of a"), std::string::npos) << r.err;
  EXPECT_FALSE(stored("a"));
  EXPECT_TRUE(stored("b")) << "only that device";
  r = keys({"reset-state", "a", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("no stored state for a"), std::string::npos) << r.err;
  r = keys({"reset-state", "ghost", "--db", db_});
  EXPECT_EQ(r.exit_code, 1);

  r = keys({"remove", "b", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(stored("b")) << "a removed device's session keys stay behind";
}

TEST_F(KeysCliTest, AccountsAreAddedListedWrittenAndRemoved) {
  add("a");
  auto r = keys({"account", "add", "telegraf", "--role", "reader", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json reader = json::parse(r.out);
  EXPECT_EQ(reader["role"], "reader");
  EXPECT_EQ(reader["password"].get<std::string>().size(), 32u);
  EXPECT_NE(r.err.find("IN CLEAR"), std::string::npos) << r.err;
  r = keys({"account", "add", "edge-2", "--role", "edge", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = keys({"account", "add", "a", "--role", "reader", "--db", db_});
  EXPECT_EQ(r.exit_code, 1) << "a device's name";
  r = keys({"account", "add", "telegraf", "--role", "edge", "--db", db_});
  EXPECT_EQ(r.exit_code, 1) << "another role under the same name";
  // Reading a password back needs no broker-config run (which rewrites the broker's files).
  r = keys({"account", "show", "telegraf", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(json::parse(r.out).contains("password")) << r.out;
  r = keys({"account", "show", "telegraf", "--db", db_, "--reveal"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["password"], reader["password"]);
  EXPECT_FALSE(std::filesystem::exists(dir_.file("broker")));
  r = keys({"account", "show", "nobody", "--db", db_});
  EXPECT_EQ(r.exit_code, 1);

  const std::string out_dir = dir_.file("broker");
  r = keys({"broker-config", "--db", db_, "--out-dir", out_dir, "--edge-user", "edge"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string passwd = test::read_file(out_dir + "/passwd");
  for (const char* user : {"a:", "edge:", "edge-2:", "telegraf:", "dsekp-admin:"})
    EXPECT_NE(passwd.find(user), std::string::npos) << user << "\n" << passwd;
  const std::string acl = test::read_file(out_dir + "/acl");
  EXPECT_NE(acl.find("user telegraf\ntopic read plain/#\n"), std::string::npos) << acl;
  EXPECT_NE(acl.find("user edge-2\ntopic read dsekp/init\n"), std::string::npos) << acl;
  EXPECT_NE(acl.find("user dsekp-admin\ntopic write dsekp/admin/downlink\n"), std::string::npos)
      << acl;
  EXPECT_EQ(acl.find("psk/data"), std::string::npos) << "the baseline was not asked for";
  EXPECT_NE(r.out.find("use_username_as_clientid true"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max_packet_size 8192"), std::string::npos) << r.out;

  r = keys({"account", "list", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).size(), 4u) << r.out;
  EXPECT_EQ(r.out.find("password"), std::string::npos) << r.out;
  r = keys({"account", "remove", "telegraf", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = keys({"account", "remove", "edge", "--db", db_});
  EXPECT_EQ(r.exit_code, 1) << "the default edge user stays";
  r = keys({"broker-config", "--db", db_, "--out-dir", out_dir, "--edge-user", "edge"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::read_file(out_dir + "/passwd").find("telegraf:"), std::string::npos);
}

}  // namespace
}  // namespace dsekp::edge
