// `dsekp edge` on a broker with accounts: the broker runs exactly the mosquitto.conf lines that
// `dsekp keys broker-config --edge-user edge` prints (password_file + acl_file, no anonymous
// access), and the edge, given no --username, logs in with the registry's edge account. Also
// checks the orchestration flags of contract section 3: --ready-file (pid, written once
// subscribed, removed on a clean exit) and --init-burst / --init-refill-ms.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

TEST(EdgeDaemonBrokerLogin, EdgeUsesTheRegistryAccountOnABrokerWithoutAnonymousAccess) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  const std::string logs = dir.file("logs");
  DeviceMaterial material;
  ASSERT_TRUE(register_device(registry_path, "esp32-01", material));
  const dsekp::test::RunResult config = dsekp::test::run_command(
      {::dsekp::test::cli_path(), "keys", "broker-config", "--db", registry_path, "--out-dir",
       dir.file("broker"), "--edge-user", "edge"},
      dir.path().string());
  ASSERT_EQ(config.exit_code, 0) << config.err;
  ASSERT_NE(config.out.find("allow_anonymous false"), std::string::npos) << config.out;
  ASSERT_NE(config.out.find("acl_file"), std::string::npos) << config.out;
  dsekp::test::MosquittoBroker broker(dir.file("broker"), config.out);

  // Anonymous clients are refused by this broker: the edge could only get in with its account.
  dsekp::test::MqttTestClient anonymous("anonymous");
  const auto refused = anonymous.connect(broker.port(), "", "");
  ASSERT_TRUE(refused.has_value());
  ASSERT_NE(*refused, 0);

  const std::string err_file = dir.file("edge.err");
  const std::string ready_file = dir.file("run/edge.ready");
  std::filesystem::create_directories(dir.file("run"));
  dsekp::test::ChildProcess edge(
      {::dsekp::test::cli_path(), "edge", "--broker", "127.0.0.1:" + std::to_string(broker.port()),
       "--db", registry_path, "--logs-dir", logs, "--metrics", "off", "--ready-file", ready_file,
       "--init-burst", "1", "--init-refill-ms", "3600000"},
      dir.file("edge.out"), err_file);
  ASSERT_TRUE(
      wait_until([&] { return std::filesystem::exists(ready_file); }, std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file) << broker.log();
  EXPECT_EQ(dsekp::test::read_file(ready_file), std::to_string(edge.pid()) + "\n");
  EXPECT_EQ(dsekp::test::read_file(err_file).find("refused"), std::string::npos)
      << dsekp::test::read_file(err_file);

  // The device logs in with its own account and reads only its ACK topic.
  dsekp::test::MqttTestClient client("esp32-01");
  ASSERT_EQ(client.connect(broker.port(), "esp32-01", material.broker_password),
            std::optional<int>(0));
  const std::string ack_topic = "dsekp/init/ack/esp32-01";
  ASSERT_EQ(client.subscribe(ack_topic), std::optional<int>(1));
  ScriptedDevice device(material, 7);
  const auto now_s = static_cast<std::uint32_t>(unix_ms_now() / 1000);
  ASSERT_TRUE(
      client.publish("dsekp/init/esp32-01", as_string(device.init(Encoding::compact, now_s))));
  const auto ack = client.wait_for_message(ack_topic);
  ASSERT_TRUE(ack.has_value()) << dsekp::test::read_file(err_file) << broker.log();
  ASSERT_EQ(device.take_ack(bytes_of(ack->payload)), Error::ok);
  constexpr int kFrames = 5;
  for (int i = 0; i < kFrames; ++i)
    ASSERT_TRUE(
        client.publish("dsekp/data/esp32-01",
                       as_string(device.data(reading(i), unix_ms_now(), Encoding::compact))));

  // --init-burst 1: a second, newer INIT within the hour is refused by the token bucket.
  ASSERT_TRUE(
      client.publish("dsekp/init/esp32-01", as_string(device.init(Encoding::json, now_s + 1))));
  EXPECT_TRUE(wait_until(
      [&] { return dsekp::test::read_file(err_file).find("rate_limited") != std::string::npos; },
      std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file);

  const std::string csv = logs + "/server_logs_dsekp.csv";
  ASSERT_TRUE(wait_until([&] { return line_count(csv) >= kFrames + 1; }, std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file);
  edge.signal(SIGTERM);
  EXPECT_EQ(edge.wait_for(std::chrono::seconds(10)), std::optional<int>(0))
      << dsekp::test::read_file(err_file);
  EXPECT_FALSE(std::filesystem::exists(ready_file));  // removed on a clean exit

  const std::vector<Row> rows = parse_csv(dsekp::test::read_file(csv));
  ASSERT_EQ(rows.size(), std::size_t{kFrames + 1});
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 15u);
    EXPECT_EQ(rows[i][7], reading(static_cast<int>(i - 1)));
    EXPECT_EQ(std::stoll(rows[i][8]), std::stoll(rows[i][14]) / 1000);
  }
}

TEST(EdgeDaemonBrokerLogin, BadOrchestrationFlagsAreRefusedWithAMessage) {
  dsekp::test::TempDir dir;
  const dsekp::test::RunResult r =
      dsekp::test::run_command({::dsekp::test::cli_path(), "edge", "--broker", "127.0.0.1:1",
                                "--db", dir.file("none.db"), "--no-csv", "--replay-window", "0"},
                               dir.path().string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--replay-window"), std::string::npos) << r.err;
}

// The built-in MQTT client has no TLS and no MQTT 3.1.1: `dsekp edge` refuses it with any TLS
// option (an operator who asked for TLS must not get a connection in clear) or 3.1.1, by name,
// before it opens the state database.
TEST(EdgeDaemonBrokerLogin, TheBuiltInClientWithTlsOrMqtt311IsRefusedBeforeAnyStateIsOpened) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  DeviceMaterial material;
  ASSERT_TRUE(register_device(registry_path, "esp32-01", material));
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--tls-ca", dir.file("ca.crt")},
           {"--tls-insecure"},
           {"--tls-cert", dir.file("client.crt"), "--tls-key", dir.file("client.key")},
           {"--mqtt-version", "3.1.1"}}) {
    std::vector<std::string> args = {::dsekp::test::cli_path(),
                                     "edge",
                                     "--broker",
                                     "127.0.0.1:1",
                                     "--db",
                                     registry_path,
                                     "--no-csv",
                                     "--mqtt-client",
                                     "builtin"};
    args.insert(args.end(), extra.begin(), extra.end());
    const dsekp::test::RunResult r = dsekp::test::run_command(args, dir.path().string());
    EXPECT_EQ(r.exit_code, 1) << extra.front() << "\n" << r.err;
    EXPECT_NE(r.err.find("--mqtt-client builtin speaks MQTT 5 over plain TCP only"),
              std::string::npos)
        << extra.front() << "\n"
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(registry_path + ".state")) << extra.front();
  }
}

// The devices were given the registry's topic prefix: an edge told another one would hear none
// of them, so it refuses to start.
TEST(EdgeDaemonBrokerLogin, APrefixOtherThanTheRegistrysIsRefused) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  DeviceMaterial material;
  ASSERT_TRUE(register_device(registry_path, "esp32-01", material));
  const auto edge_with_prefix = [&](const std::string& prefix) {
    return dsekp::test::run_command({::dsekp::test::cli_path(), "edge", "--broker", "127.0.0.1:1",
                                     "--db", registry_path, "--no-csv", "--prefix", prefix},
                                    dir.path().string());
  };
  // None recorded: the devices have none, so an edge told one would hear none of them.
  dsekp::test::RunResult r = edge_with_prefix("site1/");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--prefix \"site1/\" is not the deployment's topic prefix \"\""),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("dsekp keys topic-prefix site1/"), std::string::npos) << r.err;
  ASSERT_EQ(dsekp::test::run_command({::dsekp::test::cli_path(), "keys", "topic-prefix", "--db",
                                      registry_path, "site1/"},
                                     dir.path().string())
                .exit_code,
            0);
  r = edge_with_prefix("site2/");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--prefix \"site2/\" is not the deployment's topic prefix \"site1/\""),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace dsekp::edge::testing
