// The Arduino example (firmware/examples/DSEKP_Client/DSEKP_Client.ino), compiled unchanged on the
// host against the stand-ins and the header `dsekp keys add --format header` wrote at build time,
// runs against a real Mosquitto (the registry's accounts and ACL) and the real `dsekp edge`: one
// handshake, then its DHT11 readings accepted by the edge as DATA frames of that device.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "analyze/csv_reader.hpp"
#include "edge/registry/broker_config.hpp"
#include "edge/registry/device_registry.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

/// The rows of the edge's server_logs_dsekp.csv: dev_id, sessctr_id, seq, plaintext.
struct ServerRows : dsekp::analyze::CsvSink {
  struct Row {
    std::string dev_id, sessctr, seq, plaintext;
  };
  std::vector<Row> rows;
  std::vector<std::size_t> columns;
  std::vector<bool> on_header(std::span<const std::string_view> names) override {
    std::vector<bool> wanted(names.size(), false);
    for (const char* name : {"dev_id", "sessctr_id", "seq", "plaintext"}) {
      for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] == name) {
          wanted[i] = true;
          columns.push_back(i);
        }
      }
    }
    return wanted;
  }
  void on_record(const dsekp::analyze::CsvRecord& r) override {
    auto at = [&](std::size_t k) { return std::string(r.fields[columns.at(k)]); };
    rows.push_back({at(0), at(1), at(2), at(3)});
  }
  void on_malformed(std::uint64_t line, const std::string& reason) override {
    ADD_FAILURE() << "line " << line << ": " << reason;
  }
};

TEST(ArduinoSketch, TheExampleHandshakesAndItsReadingsAreAcceptedByTheEdge) {
  dsekp::test::TempDir dir;
  // The registry the build generated the sketch's header from, copied: the edge writes beside it.
  const std::string registry_path = dir.file("registry.db");
  std::filesystem::copy_file(DSEKP_SKETCH_REGISTRY, registry_path);
  std::unique_ptr<dsekp::edge::DeviceRegistry> registry;
  ASSERT_TRUE(dsekp::edge::DeviceRegistry::open(registry_path, dsekp::edge::OpenMode::existing_only,
                                                registry)
                  .ok());
  dsekp::edge::BrokerConfigFiles files;
  const auto written =
      dsekp::edge::write_broker_config(*registry, dir.file("broker-files"),
                                       dsekp::edge::BrokerConfigOptions{"edge", "", false}, files);
  ASSERT_TRUE(written.ok()) << written.message();
  registry.reset();
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(dir.file("broker"), files.conf_lines);

  const std::string logs = dir.file("edge-logs");
  dsekp::test::ChildProcess edge(
      {DSEKP_CLI_PATH, "edge", "--broker", "127.0.0.1:" + std::to_string(broker.port()), "--db",
       registry_path, "--logs-dir", logs, "--metrics", "off"},
      dir.file("edge.out"), dir.file("edge.err"));
  ASSERT_TRUE(wait_until(
      [&] {
        return dsekp::test::read_file(dir.file("edge.err")).find("ready") != std::string::npos;
      },
      std::chrono::seconds(10)))
      << dsekp::test::read_file(dir.file("edge.err"));

  ::setenv("SKETCH_BROKER_PORT", std::to_string(broker.port()).c_str(), 1);
  ::setenv("SKETCH_RUN_MS", "9000", 1);
  const auto run =
      dsekp::test::run_command({DSEKP_SKETCH_PATH}, dir.path().string(), std::chrono::seconds(30));
  ::unsetenv("SKETCH_BROKER_PORT");
  ::unsetenv("SKETCH_RUN_MS");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // The sketch prints a line for every SDK error (a refused ACK, a failed publish, ...): none.
  EXPECT_EQ(run.out.find("dsekp"), std::string::npos) << run.out;

  edge.stop();
  ServerRows server;
  dsekp::analyze::read_csv(logs + "/server_logs_dsekp.csv", server);
  // Readings every 2 s once the session is up, for 9 s: at least three.
  ASSERT_GE(server.rows.size(), 3u) << run.out << dsekp::test::read_file(dir.file("edge.err"));
  std::set<std::string> sessions, seqs;
  for (const auto& row : server.rows) {
    EXPECT_EQ(row.dev_id, DSEKP_SKETCH_DEV_ID);
    EXPECT_EQ(row.plaintext.rfind("{\"t\":2", 0), 0u) << row.plaintext;
    EXPECT_NE(row.plaintext.find(",\"h\":45.0}"), std::string::npos) << row.plaintext;
    sessions.insert(row.sessctr);
    seqs.insert(row.seq);
  }
  EXPECT_EQ(sessions.size(), 1u) << "one handshake";
  EXPECT_EQ(seqs.size(), server.rows.size()) << "every frame once";
}

}  // namespace
