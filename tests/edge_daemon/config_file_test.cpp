// `dsekp edge --config FILE` (edge/daemon/edge_config_file.hpp): every key read, unknown keys and
// bad values refused with the file and key named; flags override the file; SIGHUP re-reads the
// reloadable options (here the INIT token bucket), reports the ones that need a restart, and
// reopens the CSV logs after a rotation.
#include "edge/daemon/edge_config_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

#include "edge/daemon/edge_options.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

std::string read_error(const std::string& path) {
  daemon::EdgeDaemonOptions o;
  std::string broker;
  try {
    daemon::read_config_file(path, o, broker);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(EdgeConfigFile, EveryKeyIsRead) {
  dsekp::test::TempDir dir;
  const std::string path = dir.file("edge.toml");
  write(path, R"(# all of them
broker = "10.0.0.1:8883"
db = "/var/lib/dsekp/edge.db"
state_db = "/var/lib/dsekp/edge.state"
logs_dir = "/var/log/dsekp"
username = "edge"
password = "secret"
client_id = "edge-7"
metrics = "off"
prefix = "site1/"
max_skew = 0
ready_file = "/run/dsekp/ready"
init_burst = 3
init_refill_ms = 1000
replay_window = 1024
csv = false
republish = false
rejection_lines_per_second = 50
mqtt_version = "3.1.1"
tls_ca = "/etc/dsekp/ca.crt"
tls_cert = "/etc/dsekp/edge.crt"
tls_key = "/etc/dsekp/edge.key"
tls_insecure = true
store = "redis://10.0.0.5:6379/fleet1:"
shared_group = "edges"
session_cache_devices = 1000000
republish_topic = "site1/telemetry"
republish_retain = true
device_offline_after = 60
downlink_queue_ttl = 0
retention_days = 30
)");
  daemon::EdgeDaemonOptions o;
  std::string broker;
  daemon::read_config_file(path, o, broker);
  EXPECT_EQ(broker, "10.0.0.1:8883");
  EXPECT_EQ(o.registry_db, "/var/lib/dsekp/edge.db");
  EXPECT_EQ(o.state_db, "/var/lib/dsekp/edge.state");
  EXPECT_EQ(o.logs_dir, "/var/log/dsekp");
  EXPECT_EQ(o.username, std::optional<std::string>("edge"));
  EXPECT_EQ(o.password, "secret");
  EXPECT_EQ(o.client_id, "edge-7");
  EXPECT_EQ(o.metrics, "off");
  EXPECT_EQ(o.topic_prefix, "site1/");
  EXPECT_EQ(o.max_skew_s, 0u);
  EXPECT_EQ(o.ready_file, "/run/dsekp/ready");
  EXPECT_EQ(o.init_burst, 3u);
  EXPECT_EQ(o.init_refill_ms, 1000u);
  EXPECT_EQ(o.replay_window, 1024u);
  EXPECT_FALSE(o.csv);
  EXPECT_FALSE(o.republish);
  EXPECT_EQ(o.mqtt_version, "3.1.1");
  EXPECT_EQ(o.tls_ca, "/etc/dsekp/ca.crt");
  EXPECT_EQ(o.tls_cert, "/etc/dsekp/edge.crt");
  EXPECT_EQ(o.tls_key, "/etc/dsekp/edge.key");
  EXPECT_TRUE(o.tls_insecure);
  EXPECT_EQ(o.rejection_lines_per_second, 50u);
  EXPECT_EQ(o.store, "redis://10.0.0.5:6379/fleet1:");
  EXPECT_EQ(o.shared_group, "edges");
  EXPECT_EQ(o.session_cache_devices, 1'000'000u);
  EXPECT_EQ(o.republish_topic, "site1/telemetry");
  EXPECT_TRUE(o.republish_retain);
  EXPECT_EQ(o.device_offline_after_s, 60u);
  EXPECT_EQ(o.downlink_queue_ttl_s, 0u);
  EXPECT_EQ(o.retention_days, 30u);
}

TEST(EdgeConfigFile, AbsentKeysKeepTheirDefaults) {
  dsekp::test::TempDir dir;
  const std::string path = dir.file("edge.toml");
  write(path, "db = \"x.db\"\n");
  daemon::EdgeDaemonOptions o;
  std::string broker;
  daemon::read_config_file(path, o, broker);
  EXPECT_EQ(o.registry_db, "x.db");
  EXPECT_EQ(broker, "");
  EXPECT_FALSE(o.username.has_value());
  EXPECT_EQ(o.metrics, "127.0.0.1:9464");
  EXPECT_EQ(o.replay_window, ReplayWindow::kDefaultSize);
  EXPECT_TRUE(o.csv);
}

TEST(EdgeConfigFile, ThePackagedExampleIsValid) {
  daemon::EdgeDaemonOptions o;
  std::string broker;
  daemon::read_config_file(::dsekp::test::source_dir() + "/packaging/edge.toml.example", o, broker);
  EXPECT_EQ(broker, "127.0.0.1:1883");
  EXPECT_EQ(o.registry_db, "/var/lib/dsekp/edge.db");
  EXPECT_EQ(o.ready_file, "/run/dsekp/ready");
  EXPECT_EQ(o.retention_days, 90u);
  EXPECT_EQ(o.downlink_queue_ttl_s, 3600u);

  // Every commented-out setting is a key the edge takes, with a value it accepts.
  std::ifstream in(::dsekp::test::source_dir() + "/packaging/edge.toml.example");
  std::string text;
  int uncommented = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0 && line.size() > 2 && std::islower(line[2]) != 0 &&
        line.find(" = ") != std::string::npos) {
      line = line.substr(2);
      ++uncommented;
    }
    text += line + "\n";
  }
  EXPECT_GE(uncommented, 19);
  dsekp::test::TempDir dir;
  const std::string path = dir.file("edge.toml");
  write(path, text);
  daemon::EdgeDaemonOptions all;
  daemon::read_config_file(path, all, broker);
  EXPECT_EQ(all.republish_topic, "plain");
  EXPECT_EQ(all.store, "redis://10.0.0.5:6379/fleet1:");
}

TEST(EdgeConfigFile, BadFilesAreRefusedNamingTheKey) {
  dsekp::test::TempDir dir;
  const std::string path = dir.file("edge.toml");
  write(path, "db = \"x\"\nlog_dir = \"/tmp\"\n");
  EXPECT_EQ(read_error(path), path + ": log_dir: unknown key");
  write(path, "max_skew = \"300\"\n");
  EXPECT_EQ(read_error(path), path + ": max_skew: expected an integer");
  write(path, "csv = 1\n");
  EXPECT_EQ(read_error(path), path + ": csv: expected true or false");
  write(path, "replay_window = 0\n");
  EXPECT_EQ(read_error(path), path + ": replay_window: out of range 1..1024");
  write(path, "init_burst = -1\n");
  EXPECT_EQ(read_error(path), path + ": init_burst: out of range 0..4294967295");
  write(path, "mqtt_version = \"4\"\n");
  EXPECT_EQ(read_error(path), path + ": mqtt_version: expected one of auto, 5, 3.1.1, 311");
  write(path, "[broker]\nhost = \"x\"\n");
  EXPECT_EQ(read_error(path), path + ": broker: expected a string");
  write(path, "db = \n");
  EXPECT_EQ(read_error(path).rfind(path + ":1:", 0), 0u) << read_error(path);  // line, column
  EXPECT_NE(read_error(dir.file("missing.toml")), "");
}

TEST(EdgeConfigFile, FlagsOverrideTheFileAndSighupReloads) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  DeviceMaterial material;
  ASSERT_TRUE(register_device(registry_path, "esp32-01", material));
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(dir.file("broker"), "allow_anonymous true\n");
  const std::string config = dir.file("edge.toml");
  const std::string common = "broker = \"127.0.0.1:" + std::to_string(broker.port()) +
                             "\"\ndb = \"" + registry_path + "\"\nlogs_dir = \"" +
                             dir.file("file-logs") + "\"\nmetrics = \"off\"\nready_file = \"" +
                             dir.file("ready") + "\"\n";
  // One INIT per hour: the second handshake is rate limited.
  write(config, common + "init_burst = 1\ninit_refill_ms = 3600000\n");
  const std::string logs = dir.file("flag-logs");  // the flag wins over logs_dir
  const std::string err_file = dir.file("edge.err");
  dsekp::test::ChildProcess edge(
      {::dsekp::test::cli_path(), "edge", "--config", config, "--logs-dir", logs},
      dir.file("edge.out"), err_file);
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(dir.file("ready")); },
                         std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file);

  dsekp::test::MqttTestClient client("esp32-01");
  ASSERT_EQ(client.connect(broker.port(), "", ""), std::optional<int>(0));
  const std::string ack_topic = "dsekp/init/ack/esp32-01";
  ASSERT_EQ(client.subscribe(ack_topic), std::optional<int>(1));
  ScriptedDevice device(material, 3);
  const auto now_s = static_cast<std::uint32_t>(unix_ms_now() / 1000);
  ASSERT_TRUE(client.publish("dsekp/init", as_string(device.init(Encoding::json, now_s))));
  ASSERT_TRUE(client.wait_for_count(1)) << dsekp::test::read_file(err_file);
  ASSERT_EQ(device.take_ack(bytes_of(client.received()[0].payload)), Error::ok);
  ASSERT_TRUE(client.publish("dsekp/data",
                             as_string(device.data(reading(0), unix_ms_now(), Encoding::json))));
  const std::string csv = logs + "/server_logs_dsekp.csv";
  ASSERT_TRUE(wait_until([&] { return line_count(csv) == 2; }, std::chrono::seconds(10)));
  EXPECT_FALSE(std::filesystem::exists(dir.file("file-logs")));

  ASSERT_TRUE(client.publish("dsekp/init", as_string(device.init(Encoding::json, now_s + 1))));
  ASSERT_TRUE(wait_until(
      [&] { return dsekp::test::read_file(err_file).find("rate_limited") != std::string::npos; },
      std::chrono::seconds(10)));

  // Rotate the log, allow INITs freely, change a restart-only key, and SIGHUP.
  std::filesystem::rename(csv, csv + ".1");
  write(config, common + "init_burst = 100\ninit_refill_ms = 1\nprefix = \"elsewhere/\"\n");
  edge.signal(SIGHUP);
  ASSERT_TRUE(wait_until(
      [&] {
        return dsekp::test::read_file(err_file).find("SIGHUP: reloaded") != std::string::npos;
      },
      std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file);
  const std::string err = dsekp::test::read_file(err_file);
  EXPECT_NE(err.find("init_burst 100, init_refill_ms 1"), std::string::npos) << err;
  EXPECT_NE(err.find("prefix changed; it takes effect after a restart"), std::string::npos) << err;

  ASSERT_TRUE(client.publish("dsekp/init", as_string(device.init(Encoding::json, now_s + 2))));
  ASSERT_TRUE(client.wait_for_count(2)) << dsekp::test::read_file(err_file);
  ASSERT_EQ(device.take_ack(bytes_of(client.received()[1].payload)), Error::ok);
  ASSERT_TRUE(client.publish("dsekp/data",
                             as_string(device.data(reading(1), unix_ms_now(), Encoding::json))));
  // The rotated file keeps its row; the new one starts with the header.
  ASSERT_TRUE(wait_until([&] { return line_count(csv) == 2; }, std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file);
  EXPECT_EQ(line_count(csv + ".1"), 2u);
  EXPECT_EQ(parse_csv(dsekp::test::read_file(csv))[1][7], reading(1));

  // A broken file on SIGHUP keeps the running options.
  write(config, common + "init_burst = \"many\"\n");
  edge.signal(SIGHUP);
  EXPECT_TRUE(wait_until(
      [&] { return dsekp::test::read_file(err_file).find("reload failed") != std::string::npos; },
      std::chrono::seconds(10)));
  edge.signal(SIGTERM);
  EXPECT_EQ(edge.wait_for(std::chrono::seconds(10)), std::optional<int>(0))
      << dsekp::test::read_file(err_file);
}

TEST(EdgeConfigFile, AnUnknownKeyStopsTheDaemonWithAMessage) {
  dsekp::test::TempDir dir;
  const std::string config = dir.file("edge.toml");
  write(config, "brokr = \"127.0.0.1:1\"\n");
  const auto r = dsekp::test::run_command({::dsekp::test::cli_path(), "edge", "--config", config},
                                          dir.path().string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("brokr: unknown key"), std::string::npos) << r.err;
}

// A bool option's flag only turns it on: `--republish=false` does not undo the file's
// `republish = true` (had it, --home-assistant would be refused for want of --republish).
// A flag given as false overrides the file's true: an operator who types --republish=false
// must not have the readings republished (in clear) because the file said otherwise.
TEST(EdgeConfigFile, ABoolFlagGivenAsFalseTurnsOffWhatTheFileTurnedOn) {
  dsekp::test::TempDir dir;
  const std::string config = dir.file("edge.toml");
  write(config, "db = \"x.db\"\nrepublish = true\nhome_assistant = true\n");
  const auto r = dsekp::test::run_command(
      {::dsekp::test::cli_path(), "edge", "--config", config, "--republish=false"},
      dir.path().string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("needs --republish"), std::string::npos) << r.err;
}

// One table (edge_options.hpp) drives the file and the command line: every plain option is a
// key the file sets and, unless it is file-only or hidden, a flag `dsekp edge --help` lists.
TEST(EdgeConfigFile, EveryPlainOptionIsAKeyOfTheFileAndAFlag) {
  dsekp::test::TempDir dir;
  const std::string path = dir.file("edge.toml");
  const auto help =
      dsekp::test::run_command({::dsekp::test::cli_path(), "edge", "--help"}, dir.path().string());
  ASSERT_EQ(help.exit_code, 0) << help.err;
  for (const daemon::OptionSpec& spec : daemon::edge_option_specs()) {
    const std::string key(spec.key);
    if (spec.on_command_line && !spec.help.empty()) {
      // A flag longer than the help's first column is followed by a line break.
      const std::string flag = "  " + daemon::flag_of(spec);
      EXPECT_TRUE(help.out.find(flag + " ") != std::string::npos ||
                  help.out.find(flag + "\n") != std::string::npos)
          << key;
    }
    if (!spec.in_config_file) continue;
    daemon::EdgeDaemonOptions o;
    std::string broker;
    std::visit(
        [&](auto member) {
          using Member = decltype(member);
          if constexpr (std::is_same_v<Member, std::string daemon::EdgeDaemonOptions::*>) {
            const std::string value = spec.choices.empty() ? "v" : std::string(spec.choices.back());
            write(path, key + " = \"" + value + "\"\n");
            daemon::read_config_file(path, o, broker);
            EXPECT_EQ(o.*member, value) << key;
          } else if constexpr (std::is_same_v<Member, bool daemon::EdgeDaemonOptions::*>) {
            write(path, key + " = " + (o.*member ? "false" : "true") + "\n");
            const bool before = o.*member;
            daemon::read_config_file(path, o, broker);
            EXPECT_NE(o.*member, before) << key;
          } else {
            write(path, key + " = " + std::to_string(spec.max) + "\n");
            daemon::read_config_file(path, o, broker);
            EXPECT_EQ(o.*member, spec.max) << key;
          }
        },
        spec.member);
  }
}

}  // namespace
}  // namespace dsekp::edge::testing
