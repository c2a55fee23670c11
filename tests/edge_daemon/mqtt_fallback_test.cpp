// `dsekp edge --mqtt-version auto|5` against a broker that speaks only MQTT 3.1.1: the real
// Mosquitto behind V311OnlyFront, which refuses level-5 CONNECTs as a 3.1.1 server must. `auto`
// must fall back to 3.1.1 and then work (handshake and DATA end to end, the persistent session
// included), also when the broker just closes the connection (RabbitMQ's way); `5` must not fall
// back, and must keep failing visibly without exiting.
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
#include "v311_only_front.hpp"

namespace dsekp::edge::testing {
namespace {

std::vector<std::string> edge_args(const std::string& registry, const std::string& logs, int port,
                                   const std::string& version, const std::string& ready) {
  return {::dsekp::test::cli_path(),
          "edge",
          "--broker",
          "127.0.0.1:" + std::to_string(port),
          "--db",
          registry,
          "--logs-dir",
          logs,
          "--metrics",
          "off",
          "--mqtt-version",
          version,
          "--ready-file",
          ready};
}

TEST(EdgeMqttFallback, AutoFallsBackTo311WhenTheBrokerRefusesMqtt5) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  const std::string logs = dir.file("logs");
  DeviceMaterial material;
  ASSERT_TRUE(register_device(registry_path, "esp32-01", material));
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(dir.file("broker"), "allow_anonymous true\n");
  V311OnlyFront front(broker.port());

  const std::string err_file = dir.file("edge.err");
  const std::string ready = dir.file("edge.ready");
  dsekp::test::ChildProcess edge(edge_args(registry_path, logs, front.port(), "auto", ready),
                                 dir.file("edge.out"), err_file);
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(ready); }, std::chrono::seconds(15)))
      << dsekp::test::read_file(err_file) << broker.log();

  // The edge asked for MQTT 5 first, was refused, and came back with 3.1.1 (level 4), which the
  // front relayed to the real broker; no further MQTT 5 attempt.
  const std::vector<int> levels = front.levels();
  ASSERT_GE(levels.size(), 2u);
  EXPECT_EQ(levels.front(), 5);
  EXPECT_EQ(levels.back(), 4);
  EXPECT_EQ(std::count(levels.begin(), levels.end(), 5), 1);

  // It works as an edge: a device on the real broker handshakes and sends frames.
  dsekp::test::MqttTestClient client("esp32-01");
  ASSERT_EQ(client.connect(broker.port(), "", ""), std::optional<int>(0));
  const std::string ack_topic = "dsekp/init/ack/esp32-01";
  ASSERT_EQ(client.subscribe(ack_topic), std::optional<int>(1));
  ScriptedDevice device(material, 3);
  const auto now_s = static_cast<std::uint32_t>(unix_ms_now() / 1000);
  ASSERT_TRUE(client.publish("dsekp/init", as_string(device.init(Encoding::json, now_s))));
  const auto ack = client.wait_for_message(ack_topic);
  ASSERT_TRUE(ack.has_value()) << dsekp::test::read_file(err_file);
  ASSERT_EQ(device.take_ack(bytes_of(ack->payload)), Error::ok);
  constexpr int kFrames = 10;
  for (int i = 0; i < kFrames; ++i)
    ASSERT_TRUE(client.publish(
        "dsekp/data", as_string(device.data(reading(i), unix_ms_now(), Encoding::compact))));
  const std::string state = registry_path + ".state";
  EXPECT_TRUE(wait_until(
      [&] {
        return count_rows(state, "SELECT count(*) FROM telemetry WHERE mode = 'dsekp'") == kFrames;
      },
      std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file);

  // The 3.1.1 session is persistent too (clean_session false): frames sent while the edge is
  // down arrive after its restart, which again goes through the fallback.
  edge.signal(SIGTERM);
  ASSERT_EQ(edge.wait_for(std::chrono::seconds(10)), std::optional<int>(0))
      << dsekp::test::read_file(err_file);
  constexpr int kWhileDown = 5;
  for (int i = 0; i < kWhileDown; ++i)
    ASSERT_TRUE(client.publish(
        "dsekp/data", as_string(device.data(reading(kFrames + i), unix_ms_now(), Encoding::json))));
  const std::string err_file2 = dir.file("edge2.err");
  dsekp::test::ChildProcess edge2(edge_args(registry_path, logs, front.port(), "auto", ready),
                                  dir.file("edge2.out"), err_file2);
  EXPECT_TRUE(wait_until(
      [&] {
        return count_rows(state, "SELECT count(*) FROM telemetry WHERE mode = 'dsekp'") ==
               kFrames + kWhileDown;
      },
      std::chrono::seconds(15)))
      << dsekp::test::read_file(err_file2) << broker.log();
  EXPECT_EQ(count_rows(state, "SELECT count(DISTINCT seq) FROM telemetry WHERE mode = 'dsekp'"),
            kFrames + kWhileDown);
  edge2.signal(SIGTERM);
  EXPECT_EQ(edge2.wait_for(std::chrono::seconds(10)), std::optional<int>(0));
}

TEST(EdgeMqttFallback, AutoFallsBackWhenTheBrokerClosesMqtt5WithoutAnAnswer) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  DeviceMaterial material;
  ASSERT_TRUE(register_device(registry_path, "esp32-01", material));
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(dir.file("broker"), "allow_anonymous true\n");
  V311OnlyFront front(broker.port(), V311OnlyFront::Refusal::silent);

  const std::string err_file = dir.file("edge.err");
  const std::string ready = dir.file("edge.ready");
  dsekp::test::ChildProcess edge(
      edge_args(registry_path, dir.file("logs"), front.port(), "auto", ready), dir.file("edge.out"),
      err_file);
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(ready); }, std::chrono::seconds(15)))
      << dsekp::test::read_file(err_file);
  // Two unanswered MQTT 5 attempts (one could be a broker hiccup), then 3.1.1 for good.
  EXPECT_EQ(front.levels(), (std::vector<int>{5, 5, 4})) << dsekp::test::read_file(err_file);
  EXPECT_NE(dsekp::test::read_file(err_file).find("without a CONNACK; falling back to MQTT 3.1.1"),
            std::string::npos)
      << dsekp::test::read_file(err_file);
  edge.signal(SIGTERM);
  EXPECT_EQ(edge.wait_for(std::chrono::seconds(10)), std::optional<int>(0));
}

TEST(EdgeMqttFallback, Version5DoesNotFallBackAndKeepsRetrying) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  DeviceMaterial material;
  ASSERT_TRUE(register_device(registry_path, "esp32-01", material));
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(dir.file("broker"), "allow_anonymous true\n");
  V311OnlyFront front(broker.port());

  const std::string err_file = dir.file("edge.err");
  const std::string ready = dir.file("edge.ready");
  dsekp::test::ChildProcess edge(
      edge_args(registry_path, dir.file("logs"), front.port(), "5", ready), dir.file("edge.out"),
      err_file);
  // Reconnects back off from 1 s: two refused attempts prove it retries rather than exits.
  ASSERT_TRUE(wait_until([&] { return front.levels().size() >= 2; }, std::chrono::seconds(15)))
      << dsekp::test::read_file(err_file);
  EXPECT_TRUE(edge.running());
  EXPECT_FALSE(std::filesystem::exists(ready));
  for (const int level : front.levels()) EXPECT_EQ(level, 5);
  EXPECT_FALSE(dsekp::test::read_file(err_file).empty()) << "the refusal is not reported";

  edge.signal(SIGTERM);
  EXPECT_EQ(edge.wait_for(std::chrono::seconds(10)), std::optional<int>(0))
      << dsekp::test::read_file(err_file);
}

}  // namespace
}  // namespace dsekp::edge::testing
