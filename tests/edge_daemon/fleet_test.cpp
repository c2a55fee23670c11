// Many devices at once through `dsekp edge`: 20 scripted devices, each on its own MQTT
// connection, send their INITs before any ACK is read (the edge sees the handshakes interleaved),
// then DATA frames round-robin across the devices in both encodings, plus PSK baseline frames.
// Every device's every frame must be in the telemetry table and the server CSV log exactly once,
// under the right device, and the metrics must count 20 handshakes.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/build_paths.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/edge_runner.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr int kDevices = 20;
constexpr int kFramesPerDevice = 30;
constexpr int kPskPerDevice = 5;

std::string dev_name(int d) {
  return "fleet-" + std::string(d < 10 ? "0" : "") + std::to_string(d);
}

// Distinct per device and frame, so a frame stored under the wrong device would show.
std::string fleet_reading(int d, int i) {
  return R"({"t":21.5,"h":40.0,"d":)" + std::to_string(d) + R"(,"i":)" + std::to_string(i) + "}";
}

using Key = std::tuple<std::string, std::string, std::string>;  // mode, dev_id, plaintext

std::map<Key, int> telemetry_keys(const std::string& db_path) {
  std::map<Key, int> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT mode, dev_id, plaintext FROM telemetry", -1, &s, nullptr) ==
        SQLITE_OK)
      while (sqlite3_step(s) == SQLITE_ROW)
        ++out[{reinterpret_cast<const char*>(sqlite3_column_text(s, 0)),
               reinterpret_cast<const char*>(sqlite3_column_text(s, 1)),
               std::string(static_cast<const char*>(sqlite3_column_blob(s, 2)),
                           static_cast<std::size_t>(sqlite3_column_bytes(s, 2)))}];
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return out;
}

TEST(EdgeFleet, TwentyDevicesInterleavedAreEachLoggedExactlyOnce) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  const std::string logs = dir.file("logs");
  std::vector<DeviceMaterial> materials(kDevices);
  {
    std::unique_ptr<DeviceRegistry> registry;
    ASSERT_TRUE(DeviceRegistry::open(registry_path, OpenMode::create_if_missing, registry).ok());
    for (int d = 0; d < kDevices; ++d) ASSERT_TRUE(registry->add(dev_name(d), materials[d]).ok());
  }
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(dir.file("broker"), "allow_anonymous true\n");
  EdgeRunner edge(dir, {::dsekp::test::cli_path(), "edge", "--broker",
                        "127.0.0.1:" + std::to_string(broker.port()), "--db", registry_path,
                        "--logs-dir", logs, "--metrics", "127.0.0.1:0", "--psk-baseline"});
  ASSERT_TRUE(edge.start());

  std::vector<std::unique_ptr<dsekp::test::MqttTestClient>> clients;
  std::vector<std::unique_ptr<ScriptedDevice>> devices;
  for (int d = 0; d < kDevices; ++d) {
    clients.push_back(std::make_unique<dsekp::test::MqttTestClient>(dev_name(d)));
    ASSERT_EQ(clients[d]->connect(broker.port(), "", ""), std::optional<int>(0));
    ASSERT_EQ(clients[d]->subscribe("dsekp/init/ack/" + dev_name(d)), std::optional<int>(1));
    devices.push_back(std::make_unique<ScriptedDevice>(materials[d], 1000 + d));
  }
  // Every INIT is out before any ACK is taken: the edge holds 20 handshakes in flight.
  const auto now_s = static_cast<std::uint32_t>(unix_ms_now() / 1000);
  for (int d = 0; d < kDevices; ++d) {
    const Encoding enc = d % 2 == 0 ? Encoding::json : Encoding::compact;
    ASSERT_TRUE(clients[d]->publish("dsekp/init", as_string(devices[d]->init(enc, now_s))));
  }
  for (int d = 0; d < kDevices; ++d) {
    const auto ack = clients[d]->wait_for_message("dsekp/init/ack/" + dev_name(d));
    ASSERT_TRUE(ack.has_value()) << dev_name(d) << ": " << edge.stderr_text();
    ASSERT_EQ(devices[d]->take_ack(bytes_of(ack->payload)), Error::ok) << dev_name(d);
  }
  // DATA round-robin over the devices, the encoding alternating per device and frame; the first
  // frames also carry PSK baseline frames between them.
  for (int i = 0; i < kFramesPerDevice; ++i) {
    for (int d = 0; d < kDevices; ++d) {
      const Encoding enc = (d + i) % 2 == 0 ? Encoding::json : Encoding::compact;
      ASSERT_TRUE(clients[d]->publish(
          "dsekp/data", as_string(devices[d]->data(fleet_reading(d, i), unix_ms_now(), enc))));
      if (i < kPskPerDevice) {
        ASSERT_TRUE(clients[d]->publish(
            "psk/data",
            as_string(devices[d]->psk(fleet_reading(d, i), static_cast<std::uint32_t>(i),
                                      unix_ms_now(), enc))));
      }
    }
  }

  const std::string state = registry_path + ".state";
  constexpr int kTotal = kDevices * (kFramesPerDevice + kPskPerDevice);
  EXPECT_TRUE(
      wait_until([&] { return count_rows(state, "SELECT count(*) FROM telemetry") >= kTotal; },
                 std::chrono::seconds(30)))
      << count_rows(state, "SELECT count(*) FROM telemetry") << " of " << kTotal << "\n"
      << edge.stderr_text();
  const std::string metrics = scrape_metrics(metrics_port(edge.stderr_text()));
  EXPECT_EQ(edge.terminate(), std::optional<int>(0)) << edge.stderr_text();

  // Telemetry: each (mode, device, reading) exactly once, and nothing else.
  const std::map<Key, int> stored = telemetry_keys(state);
  int wrong = 0;
  for (int d = 0; d < kDevices; ++d)
    for (int i = 0; i < kFramesPerDevice; ++i) {
      for (const char* mode : {"dsekp", "psk"}) {
        if (std::string(mode) == "psk" && i >= kPskPerDevice) continue;
        const auto it = stored.find({mode, dev_name(d), fleet_reading(d, i)});
        const int n = it == stored.end() ? 0 : it->second;
        if (n != 1) {
          ++wrong;
          ADD_FAILURE() << mode << " " << dev_name(d) << " frame " << i << " stored " << n
                        << " times";
        }
      }
    }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(stored.size(), std::size_t{kTotal});
  EXPECT_EQ(count_rows(state, "SELECT count(*) FROM telemetry WHERE encoding = 'compact'"),
            kTotal / 2);

  // The server CSV logs hold the same frames once each.
  const std::vector<Row> rows = parse_csv(dsekp::test::read_file(logs + "/server_logs_dsekp.csv"));
  ASSERT_EQ(rows.size(), std::size_t{kDevices * kFramesPerDevice + 1});
  std::map<std::pair<std::string, std::string>, int> csv;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), 15u) << r;
    ++csv[{rows[r][2], rows[r][7]}];
  }
  EXPECT_EQ(csv.size(), std::size_t{kDevices * kFramesPerDevice});
  EXPECT_EQ(line_count(logs + "/server_logs_psk.csv"), std::size_t{kDevices * kPskPerDevice + 1});

  EXPECT_NE(metrics.find("dsekp_handshakes_total{outcome=\"accepted\"} 20\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("dsekp_sessions_confirmed_total 20\n"), std::string::npos);
  EXPECT_NE(metrics.find("dsekp_frames_total{mode=\"dsekp\",outcome=\"accepted\"} 600\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("dsekp_frames_total{mode=\"psk\",outcome=\"accepted\"} 100\n"),
            std::string::npos);
}

}  // namespace
}  // namespace dsekp::edge::testing
