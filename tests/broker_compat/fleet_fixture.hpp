// The fixture of the end-to-end tests on another broker: a registry of N devices with their
// credentials file, the real `dsekp edge` (tests/edge_daemon's EdgeRunner) and the real `dsekp
// device` fleet as child processes, and the frame-by-frame check that every frame in the client
// logs is in the edge's server CSV and telemetry table exactly once. FleetTest runs them against
// the broker a subclass names; NatsFleetTest starts a private nats-server (MQTT listener,
// JetStream in the test's temp dir) per test and skips when nats-server is not installed.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "edge/registry/device_material.hpp"
#include "edge/registry/device_registry.hpp"
#include "nats_server.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/edge_runner.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::broker_compat {

using edge::testing::parse_csv;
using edge::testing::wait_until;
using nlohmann::json;
/// A frame's identity (LOGS.md): dev_id, sessctr ("0" for PSK, which has none), seq.
using FrameId = std::tuple<std::string, std::string, std::string>;

#define DSEKP_SKIP_WITHOUT_NATS()                                                        \
  if (dsekp::test::NatsServer::executable().empty())                                     \
  GTEST_SKIP() << "nats-server is not installed (Debian: apt-get install nats-server); " \
                  "the NATS broker-compatibility tests need it"

/// The last `n` characters of a log, for failure messages.
inline std::string log_tail(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

class FleetTest : public ::testing::Test {
 protected:
  /// The broker's MQTT address (loopback unless a subclass places it elsewhere) and port, and
  /// its log for failure messages.
  [[nodiscard]] virtual std::string broker_host() const { return "127.0.0.1"; }
  [[nodiscard]] virtual int broker_port() const = 0;
  [[nodiscard]] virtual std::string broker_log() const = 0;
  [[nodiscard]] std::string broker_address() const {
    return broker_host() + ":" + std::to_string(broker_port());
  }

  void TearDown() override {
    if (HasFailure()) {
      if (edge_) std::cerr << "edge stderr:\n" << edge_->all_stderr();
      std::cerr << "device stderr:\n" << device_err_;
      std::cerr << "broker log (tail):\n" << log_tail(broker_log(), 4000);
    }
    edge_.reset();
  }

  /// Registers `n` devices (esp32-00 ...) and writes their credentials file, pointing at NATS.
  void provision(int n) {
    std::unique_ptr<edge::DeviceRegistry> registry;
    ASSERT_TRUE(
        edge::DeviceRegistry::open(registry_, edge::OpenMode::create_if_missing, registry).ok());
    json array = json::array();
    for (int i = 0; i < n; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "esp32-%02d", i);
      edge::DeviceMaterial m;
      ASSERT_TRUE(registry->add(name, m).ok());
      array.push_back(json::parse(
          edge::material_json(m, {broker_host(), static_cast<std::uint16_t>(broker_port())},
                              edge::MaterialMode::with_psk_baseline)));
    }
    std::ofstream(credentials_) << array.dump(2);
  }

  /// How the edge meets the broker: MQTT `version` at broker_address(), unless a subclass says
  /// otherwise.
  [[nodiscard]] virtual std::vector<std::string> edge_broker_args(
      const std::string& version) const {
    return {"--broker", broker_address(), "--mqtt-version", version};
  }

  /// The edge (edge_broker_args(version)); starts it and waits for the ready file. The client id
  /// is the test's own: a broker shared by several tests keeps each edge's session.
  void start_edge(const std::string& version) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::vector<std::string> args{::dsekp::test::cli_path(),
                                  "edge",
                                  "--db",
                                  registry_,
                                  "--logs-dir",
                                  edge_logs_,
                                  "--metrics",
                                  "off",
                                  "--client-id",
                                  std::string("edge-") + info->name()};
    if (edge_psk_baseline_) args.push_back("--psk-baseline");
    const std::vector<std::string> broker = edge_broker_args(version);
    args.insert(args.end(), broker.begin(), broker.end());
    edge_ = std::make_unique<edge::testing::EdgeRunner>(dir_, std::move(args));
    ASSERT_TRUE(edge_->start());
  }

  /// `dsekp device` for the provisioned fleet on broker_address(), its logs and summary in the
  /// test's folder, then `extra`.
  [[nodiscard]] std::vector<std::string> device_argv(const std::vector<std::string>& extra) const {
    std::vector<std::string> argv = {::dsekp::test::cli_path(),
                                     "device",
                                     "--broker",
                                     broker_address(),
                                     "--credentials",
                                     credentials_,
                                     "--progress",
                                     "off",
                                     "--logs-dir",
                                     client_logs_,
                                     "--summary-json",
                                     dir_.file("summary.json")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  /// `dsekp device` to completion (bounded); its stderr is kept for failure messages.
  dsekp::test::RunResult run_devices(const std::vector<std::string>& extra) {
    const std::vector<std::string> argv = device_argv(extra);
    auto r = dsekp::test::run_command(argv, dir_.path().string(), std::chrono::seconds(60));
    device_err_ += r.err;
    return r;
  }

  json summary() const { return json::parse(dsekp::test::read_file(dir_.file("summary.json"))); }

  std::int64_t telemetry_rows() const {
    return edge::testing::count_rows(state_db_, "SELECT count(*) FROM telemetry");
  }

  /// (dev_id, sessctr, seq) -> how many times the telemetry table holds it, for `mode`.
  std::map<FrameId, int> telemetry_frames(const std::string& mode) const {
    std::map<FrameId, int> out;
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(state_db_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* s = nullptr;
      if (sqlite3_prepare_v2(db, "SELECT dev_id, sessctr, seq FROM telemetry WHERE mode = ?1", -1,
                             &s, nullptr) == SQLITE_OK) {
        sqlite3_bind_text(s, 1, mode.c_str(), -1, SQLITE_TRANSIENT);
        while (sqlite3_step(s) == SQLITE_ROW)
          ++out[{reinterpret_cast<const char*>(sqlite3_column_text(s, 0)),
                 std::to_string(sqlite3_column_int64(s, 1)),
                 std::to_string(sqlite3_column_int64(s, 2))}];
      }
      sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return out;
  }

  /// Rows of a CSV log by column name.
  static std::vector<std::map<std::string, std::string>> read_rows(const std::string& path) {
    const auto lines = parse_csv(dsekp::test::read_file(path));
    std::vector<std::map<std::string, std::string>> rows;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      std::map<std::string, std::string> r;
      for (std::size_t c = 0; c < lines[0].size() && c < lines[i].size(); ++c)
        r[lines[0][c]] = lines[i][c];
      rows.push_back(r);
    }
    return rows;
  }

  static FrameId frame_id(const std::string& mode, const std::map<std::string, std::string>& r) {
    return {r.at("dev_id"), mode == "dsekp" ? r.at("sessctr_id") : "0", r.at("seq")};
  }

  /// Every frame of the client log is in the server CSV (same ciphertext) and in the telemetry
  /// table exactly once, and neither sink holds a frame the devices did not send.
  void expect_every_frame_once(const std::string& mode, std::size_t expected) {
    const auto client = read_rows(client_logs_ + "/client_logs_" + mode + ".csv");
    const auto server = read_rows(edge_logs_ + "/server_logs_" + mode + ".csv");
    ASSERT_EQ(client.size(), expected) << "client log rows";
    std::map<FrameId, std::string> sent;  // -> ciphertext
    for (const auto& r : client)
      EXPECT_TRUE(sent.emplace(frame_id(mode, r), r.at("ciphertext")).second)
          << "the client logged a frame twice";
    std::map<FrameId, int> in_csv;
    for (const auto& r : server) {
      const FrameId id = frame_id(mode, r);
      ++in_csv[id];
      const auto it = sent.find(id);
      if (it == sent.end())
        ADD_FAILURE() << "the server CSV holds a frame no device sent: " << std::get<0>(id) << " "
                      << std::get<1>(id) << " " << std::get<2>(id);
      else
        EXPECT_EQ(r.at("ciphertext"), it->second);
    }
    const auto in_table = telemetry_frames(mode);
    std::size_t missing_csv = 0, missing_table = 0, dup_csv = 0, dup_table = 0;
    for (const auto& [id, ct] : sent) {
      const auto c = in_csv.find(id);
      const auto t = in_table.find(id);
      if (c == in_csv.end())
        ++missing_csv;
      else if (c->second != 1)
        ++dup_csv;
      if (t == in_table.end())
        ++missing_table;
      else if (t->second != 1)
        ++dup_table;
    }
    EXPECT_EQ(missing_csv, 0u) << "frames sent but not in the server CSV";
    EXPECT_EQ(dup_csv, 0u) << "frames more than once in the server CSV";
    EXPECT_EQ(missing_table, 0u) << "frames sent but not in the telemetry table";
    EXPECT_EQ(dup_table, 0u) << "frames more than once in the telemetry table";
    EXPECT_EQ(server.size(), expected) << "server CSV rows";
    EXPECT_EQ(in_table.size(), expected) << "distinct telemetry frames";
  }

  /// 5 devices x 40 DSEKP frames every 40 ms (about 2 s of traffic) through a running edge,
  /// which is SIGKILLed once 40 frames are in and restarted 1 s later. Every frame must then be
  /// in the sinks exactly once: the broker redelivers what the dead edge had not acknowledged
  /// and the edge refuses what it had already committed as replays. Returns the telemetry rows
  /// at the kill.
  std::int64_t kill_and_restart_mid_run(const std::vector<std::string>& extra_device_args = {}) {
    provision(5);
    start_edge("3.1.1");
    const std::string err = dir_.file("device.err");
    std::vector<std::string> argv =
        device_argv({"--mode", "dsekp", "--qos", "1", "--count", "40", "--interval-ms", "40"});
    argv.insert(argv.end(), extra_device_args.begin(), extra_device_args.end());
    dsekp::test::ChildProcess devices(argv, dir_.file("device.out"), err);
    EXPECT_TRUE(wait_until([&] { return telemetry_rows() >= 40; }, std::chrono::seconds(15)))
        << telemetry_rows();
    edge_->kill();
    const std::int64_t at_kill = telemetry_rows();
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    EXPECT_TRUE(edge_->start(false));
    const auto status = devices.wait_for(std::chrono::seconds(30));
    device_err_ = dsekp::test::read_file(err);
    EXPECT_EQ(status, std::optional<int>(0)) << device_err_;
    EXPECT_EQ(summary().at("packets_acked"), 200);
    EXPECT_TRUE(wait_until([&] { return telemetry_rows() >= 200; }, std::chrono::seconds(15)))
        << telemetry_rows() << " of 200";
    EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
    expect_every_frame_once("dsekp", 200);
    return at_kill;
  }

  dsekp::test::TempDir dir_;
  std::string registry_ = dir_.file("registry.db");
  std::string state_db_ = registry_ + ".state";
  std::string credentials_ = dir_.file("credentials.json");
  std::string client_logs_ = dir_.file("client");
  std::string edge_logs_ = dir_.file("server");
  std::string device_err_;
  std::unique_ptr<edge::testing::EdgeRunner> edge_;
  bool edge_psk_baseline_ = true;  // start_edge() passes --psk-baseline
};

class NatsFleetTest : public FleetTest {
 protected:
  void SetUp() override {
    DSEKP_SKIP_WITHOUT_NATS();
    std::filesystem::create_directories(dir_.file("nats"));
    nats_ = std::make_unique<dsekp::test::NatsServer>(dir_.file("nats"));
  }
  void TearDown() override {
    FleetTest::TearDown();
    nats_.reset();
  }
  int broker_port() const override { return nats_ ? nats_->mqtt_port() : 0; }
  std::string broker_log() const override { return nats_ ? nats_->log() : ""; }

  std::unique_ptr<dsekp::test::NatsServer> nats_;
};

}  // namespace dsekp::broker_compat
