// The broker queues for a stopped edge: the edge is stopped cleanly (SIGTERM), the devices keep
// publishing at QoS 1 (each publish acknowledged by the broker), and nothing reaches the edge's
// sinks meanwhile; when the edge restarts with the same client id, the broker delivers the
// queued frames from the edge's persistent session and every frame is logged exactly once.
// Run with each MQTT protocol version the edge speaks: with MQTT 5 the session outlives the
// clean disconnect only because the edge asks for a session expiry interval.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker_handshake.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/edge_runner.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr int kBefore = 10;      // DATA frames while the edge runs
constexpr int kWhileDown = 150;  // DATA frames while it is stopped
constexpr int kPskWhileDown = 40;

std::map<std::string, int> readings_of(const std::string& db_path, const std::string& mode) {
  std::map<std::string, int> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    const std::string sql = "SELECT plaintext FROM telemetry WHERE mode = '" + mode + "'";
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK)
      while (sqlite3_step(s) == SQLITE_ROW)
        ++out[std::string(static_cast<const char*>(sqlite3_column_blob(s, 0)),
                          static_cast<std::size_t>(sqlite3_column_bytes(s, 0)))];
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return out;
}

// `protocol`: what the edge must report it connected with, e.g. "(MQTT 5)".
void queue_while_edge_is_down(const std::vector<std::string>& extra_edge_args,
                              const std::string& protocol) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  const std::string logs = dir.file("logs");
  DeviceMaterial material;
  ASSERT_TRUE(register_device(registry_path, "esp32-01", material));
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(dir.file("broker"),
                                      "allow_anonymous true\nmax_queued_messages 100000\n");
  std::vector<std::string> args = {::dsekp::test::cli_path(),
                                   "edge",
                                   "--broker",
                                   "127.0.0.1:" + std::to_string(broker.port()),
                                   "--db",
                                   registry_path,
                                   "--logs-dir",
                                   logs,
                                   "--metrics",
                                   "off",
                                   "--psk-baseline"};
  args.insert(args.end(), extra_edge_args.begin(), extra_edge_args.end());
  EdgeRunner edge(dir, args);
  ASSERT_TRUE(edge.start());
  EXPECT_NE(edge.stderr_text().find(protocol), std::string::npos) << edge.stderr_text();

  dsekp::test::MqttTestClient client("esp32-01");
  ASSERT_EQ(client.connect(broker.port(), "", ""), std::optional<int>(0));
  ScriptedDevice device(material, 77);
  ASSERT_TRUE(handshake_through_broker(client, device, [&] { return edge.stderr_text(); }));

  const std::string state = registry_path + ".state";
  int next = 0;
  for (; next < kBefore; ++next)
    ASSERT_TRUE(client.publish(
        "dsekp/data", as_string(device.data(reading(next), unix_ms_now(), Encoding::json))));
  ASSERT_TRUE(
      wait_until([&] { return count_rows(state, "SELECT count(*) FROM telemetry") == kBefore; },
                 std::chrono::seconds(10)))
      << edge.stderr_text();

  ASSERT_EQ(edge.terminate(), std::optional<int>(0)) << edge.stderr_text();
  // The edge is down: each publish is still acknowledged by the broker (QoS 1), which queues it.
  for (int i = 0; i < kWhileDown; ++i, ++next) {
    const Encoding enc = i % 2 == 0 ? Encoding::compact : Encoding::json;
    ASSERT_TRUE(
        client.publish("dsekp/data", as_string(device.data(reading(next), unix_ms_now(), enc))));
  }
  for (int i = 0; i < kPskWhileDown; ++i)
    ASSERT_TRUE(client.publish(
        "psk/data", as_string(device.psk(reading(i), static_cast<std::uint32_t>(i), unix_ms_now(),
                                         i % 2 == 0 ? Encoding::json : Encoding::compact))));
  EXPECT_EQ(count_rows(state, "SELECT count(*) FROM telemetry"), kBefore);

  ASSERT_TRUE(edge.start());
  constexpr int kTotal = kBefore + kWhileDown + kPskWhileDown;
  EXPECT_TRUE(
      wait_until([&] { return count_rows(state, "SELECT count(*) FROM telemetry") >= kTotal; },
                 std::chrono::seconds(30)))
      << count_rows(state, "SELECT count(*) FROM telemetry") << " of " << kTotal << "\n"
      << edge.all_stderr();
  EXPECT_EQ(edge.terminate(), std::optional<int>(0)) << edge.stderr_text();

  const auto dsekp_rows = readings_of(state, "dsekp");
  const auto psk_rows = readings_of(state, "psk");
  EXPECT_EQ(dsekp_rows.size(), std::size_t{kBefore + kWhileDown});
  EXPECT_EQ(psk_rows.size(), std::size_t{kPskWhileDown});
  for (int i = 0; i < kBefore + kWhileDown; ++i) {
    const auto it = dsekp_rows.find(reading(i));
    EXPECT_TRUE(it != dsekp_rows.end() && it->second == 1) << "DATA frame " << i;
  }
  for (int i = 0; i < kPskWhileDown; ++i) {
    const auto it = psk_rows.find(reading(i));
    EXPECT_TRUE(it != psk_rows.end() && it->second == 1) << "PSK frame " << i;
  }
  // The CSV logs: one header, then each frame once (the readings of one device are distinct).
  const std::vector<Row> rows = parse_csv(dsekp::test::read_file(logs + "/server_logs_dsekp.csv"));
  ASSERT_EQ(rows.size(), std::size_t{kBefore + kWhileDown + 1});
  std::map<std::string, int> csv;
  for (std::size_t r = 1; r < rows.size(); ++r)
    if (rows[r].size() == 15u) ++csv[rows[r][7]];
  EXPECT_EQ(csv.size(), std::size_t{kBefore + kWhileDown});
  EXPECT_EQ(line_count(logs + "/server_logs_psk.csv"), std::size_t{kPskWhileDown + 1});
}

// The default (auto) speaks MQTT 5 with Mosquitto 2.
TEST(EdgeDownQueue, FramesPublishedWhileStoppedArriveOnceAfterRestart) {
  queue_while_edge_is_down({}, "(MQTT 5)");
}

TEST(EdgeDownQueue, SameWithMqtt5) {
  queue_while_edge_is_down({"--mqtt-version", "5"}, "(MQTT 5)");
}

TEST(EdgeDownQueue, SameWithMqtt311) {
  queue_while_edge_is_down({"--mqtt-version", "3.1.1"}, "(MQTT 3.1.1)");
}

}  // namespace
}  // namespace dsekp::edge::testing
