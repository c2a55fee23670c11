// The test bed every fault test starts from: a registry of N devices and their credentials file,
// the real `dsekp edge` (tests/edge_daemon's EdgeRunner) and the real `dsekp device` fleet as
// child processes, and the ledger that checks "every frame exactly once": each DATA frame the
// devices logged as sent (client_logs_dsekp.csv, written when the frame is handed to the MQTT
// client) must be in the edge's server CSV log and in its telemetry table exactly once, and
// nothing else may be there. Packets are told apart by (dev_id, sessctr, seq), as analyze does.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "edge/registry/device_material.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/edge_runner.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::faults {

using edge::testing::Clock;
using edge::testing::metric_value;
using edge::testing::wait_until;
using PacketId = std::tuple<std::string, std::uint64_t, std::uint64_t>;  // dev_id, sessctr, seq

/// A CSV file's rows as column name -> value.
inline std::vector<std::map<std::string, std::string>> read_rows(const std::string& path) {
  const auto lines = edge::testing::parse_csv(dsekp::test::read_file(path));
  std::vector<std::map<std::string, std::string>> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::map<std::string, std::string> r;
    for (std::size_t c = 0; c < lines[0].size() && c < lines[i].size(); ++c)
      r[lines[0][c]] = lines[i][c];
    rows.push_back(std::move(r));
  }
  return rows;
}

/// What the sinks hold compared with what the devices sent.
struct Ledger {
  std::size_t sent = 0;            // distinct packets in the client log
  std::size_t client_doubles = 0;  // client rows beyond the first of their packet (never expected)
  std::size_t csv_rows = 0;        // server CSV rows
  std::size_t telemetry_rows = 0;  // telemetry table rows (DSEKP)
  std::size_t lost_csv = 0;        // sent, not in the CSV
  std::size_t lost_telemetry = 0;  // sent, not in the telemetry table
  std::size_t doubled_csv = 0;     // CSV rows beyond the first of their packet
  std::size_t doubled_telemetry = 0;
  std::size_t unexpected = 0;  // in a sink, not in the client log
  std::vector<PacketId> lost;  // not in the telemetry table (for messages)
  [[nodiscard]] bool exactly_once() const {
    return client_doubles == 0 && lost_csv == 0 && lost_telemetry == 0 && doubled_csv == 0 &&
           doubled_telemetry == 0 && unexpected == 0 && csv_rows == sent && telemetry_rows == sent;
  }
  [[nodiscard]] std::string describe() const {
    std::string s =
        "sent " + std::to_string(sent) + ", csv " + std::to_string(csv_rows) + ", telemetry " +
        std::to_string(telemetry_rows) + ", lost(csv/telemetry) " + std::to_string(lost_csv) + "/" +
        std::to_string(lost_telemetry) + ", doubled(csv/telemetry) " + std::to_string(doubled_csv) +
        "/" + std::to_string(doubled_telemetry) + ", unexpected " + std::to_string(unexpected) +
        ", client doubles " + std::to_string(client_doubles);
    for (std::size_t i = 0; i < lost.size() && i < 5; ++i)
      s += "\n  lost: " + std::get<0>(lost[i]) + " sessctr " +
           std::to_string(std::get<1>(lost[i])) + " seq " + std::to_string(std::get<2>(lost[i]));
    return s;
  }
};

/// The (dev_id, sessctr, seq) of every DSEKP telemetry row ("" dev_id rows on a read error).
inline std::vector<PacketId> telemetry_packets(const std::string& db_path) {
  std::vector<PacketId> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db,
                           "SELECT dev_id, sessctr, seq FROM telemetry WHERE mode = 'dsekp' "
                           "ORDER BY id",
                           -1, &s, nullptr) == SQLITE_OK)
      while (sqlite3_step(s) == SQLITE_ROW)
        out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)),
                         static_cast<std::uint64_t>(sqlite3_column_int64(s, 1)),
                         static_cast<std::uint64_t>(sqlite3_column_int64(s, 2)));
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return out;
}

inline PacketId packet_of(const std::map<std::string, std::string>& row) {
  return {row.at("dev_id"), std::stoull(row.at("sessctr_id")), std::stoull(row.at("seq"))};
}

inline Ledger compare(const std::string& client_log, const std::string& server_log,
                      const std::string& state_db) {
  Ledger l;
  std::set<PacketId> sent;
  for (const auto& r : read_rows(client_log))
    if (!sent.insert(packet_of(r)).second) ++l.client_doubles;
  l.sent = sent.size();
  std::map<PacketId, int> csv;
  for (const auto& r : read_rows(server_log)) ++csv[packet_of(r)];
  std::map<PacketId, int> telemetry;
  for (const PacketId& p : telemetry_packets(state_db)) ++telemetry[p];
  for (const auto& [p, n] : csv) {
    l.csv_rows += static_cast<std::size_t>(n);
    l.doubled_csv += static_cast<std::size_t>(n - 1);
    if (!sent.count(p)) ++l.unexpected;
  }
  for (const auto& [p, n] : telemetry) {
    l.telemetry_rows += static_cast<std::size_t>(n);
    l.doubled_telemetry += static_cast<std::size_t>(n - 1);
    if (!sent.count(p)) ++l.unexpected;
  }
  for (const PacketId& p : sent) {
    if (!csv.count(p)) ++l.lost_csv;
    if (!telemetry.count(p)) {
      ++l.lost_telemetry;
      l.lost.push_back(p);
    }
  }
  return l;
}

class FaultBed : public ::testing::Test {
 protected:
  void TearDown() override {
    if (HasFailure()) {
      if (edge_) std::cerr << "edge stderr:\n" << edge_->all_stderr();
      std::cerr << "device stderr:\n" << dsekp::test::read_file(dir_.file("device.err"));
    }
    fleet_.reset();
    if (edge_) edge_->terminate();
  }

  /// Registers devices esp32-00 .. esp32-(n-1) and writes their credentials file. The broker
  /// address in it is a placeholder: `dsekp device --broker` overrides it.
  void provision(int n) {
    nlohmann::json array = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "esp32-%02d", i);
      edge::DeviceMaterial m;
      ASSERT_TRUE(edge::testing::register_device(registry_, name, m));
      array.push_back(nlohmann::json::parse(edge::material_json(m, {"127.0.0.1", 1883})));
    }
    std::ofstream(credentials_) << array.dump(2);
  }

  /// The edge on `broker` (directly, never through a link emulator), metrics on a free port.
  void start_edge(const std::string& broker) {
    edge_ = std::make_unique<edge::testing::EdgeRunner>(
        dir_, std::vector<std::string>{::dsekp::test::cli_path(), "edge", "--broker", broker,
                                       "--db", registry_, "--logs-dir", edge_logs_, "--metrics",
                                       "127.0.0.1:0", "--no-republish"});
    ASSERT_TRUE(edge_->start());
  }

  /// `dsekp device` in the background with the client logs and summary in the bed's folder.
  void start_fleet(const std::string& broker, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {::dsekp::test::cli_path(),
                                     "device",
                                     "--broker",
                                     broker,
                                     "--credentials",
                                     credentials_,
                                     "--mode",
                                     "dsekp",
                                     "--progress",
                                     "off",
                                     "--logs-dir",
                                     client_logs_,
                                     "--summary-json",
                                     summary_file_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    fleet_ = std::make_unique<dsekp::test::ChildProcess>(argv, dir_.file("device.out"),
                                                         dir_.file("device.err"));
  }

  /// Waits (bounded) for the fleet to exit; its exit code, or nothing if it did not.
  std::optional<int> wait_fleet(std::chrono::milliseconds timeout) {
    return fleet_->wait_for(timeout);
  }

  [[nodiscard]] nlohmann::json summary() const {
    return nlohmann::json::parse(dsekp::test::read_file(summary_file_), nullptr, false);
  }

  /// DATA rows the devices have logged so far (the log is flushed about once a second).
  std::size_t client_rows() const { return read_rows(client_log()).size(); }
  std::int64_t telemetry_count() const {
    return edge::testing::count_rows(state_db(),
                                     "SELECT count(*) FROM telemetry WHERE mode = 'dsekp'");
  }

  /// Waits until the edge holds at least as many frames as the client log, then a little more
  /// for stragglers (a redelivery that should be refused), keeps the edge's metrics, stops the
  /// edge and compares.
  Ledger settle_and_compare(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const std::size_t expected = client_rows();
    // Done when the edge has them all, or when nothing new arrived for 3 s (a case that loses
    // frames on purpose must not wait out the whole timeout).
    std::int64_t seen = -1;
    auto last_change = Clock::now();
    wait_until(
        [&] {
          const std::int64_t now = telemetry_count();
          if (now != seen) {
            seen = now;
            last_change = Clock::now();
          }
          return now >= static_cast<std::int64_t>(expected) ||
                 Clock::now() - last_change > std::chrono::seconds(3);
        },
        timeout);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    final_metrics_ = metrics();
    // SIGTERM flushes the CSV; the edge then exits 0.
    EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
    return compare(client_log(), server_log(), state_db());
  }

  [[nodiscard]] std::string client_log() const { return client_logs_ + "/client_logs_dsekp.csv"; }
  [[nodiscard]] std::string handshake_log() const {
    return client_logs_ + "/client_handshakes_dsekp.csv";
  }
  [[nodiscard]] std::string server_log() const { return edge_logs_ + "/server_logs_dsekp.csv"; }
  [[nodiscard]] std::string state_db() const { return registry_ + ".state"; }
  [[nodiscard]] std::string metrics() const {
    return edge::testing::scrape_metrics(edge::testing::metrics_port(edge_->stderr_text()));
  }

  dsekp::test::TempDir dir_;
  std::string registry_ = dir_.file("registry.db");
  std::string credentials_ = dir_.file("credentials.json");
  std::string client_logs_ = dir_.file("client");
  std::string edge_logs_ = dir_.file("server");
  std::string summary_file_ = dir_.file("summary.json");
  std::unique_ptr<edge::testing::EdgeRunner> edge_;
  std::unique_ptr<dsekp::test::ChildProcess> fleet_;
  std::string final_metrics_;  // the edge's /metrics just before settle_and_compare stopped it
};

}  // namespace dsekp::faults
