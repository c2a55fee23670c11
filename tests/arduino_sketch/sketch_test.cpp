// The Arduino example (firmware/examples/DSEKP_Client/DSEKP_Client.ino), compiled unchanged on the
// host against the stand-ins and the header `dsekp keys add --format header` wrote at build time,
// runs against a real Mosquitto (the registry's accounts and ACL) and the real `dsekp edge`: one
// handshake, then its DHT11 readings accepted by the edge as DATA frames of that device; and
// built for a ratcheting device, across reboots with its secret in (stand-in) NVS.
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
#include "tests/support/build_paths.hpp"
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

/// A copy of the registry the build generated a sketch's header from, a real Mosquitto with its
/// accounts and ACL, and the real edge on them.
class SketchBed {
 public:
  explicit SketchBed(const std::string& generated_registry) {
    // Copied: the edge writes beside it.
    std::filesystem::copy_file(generated_registry, registry_path_);
    std::unique_ptr<dsekp::edge::DeviceRegistry> registry;
    EXPECT_TRUE(dsekp::edge::DeviceRegistry::open(registry_path_,
                                                  dsekp::edge::OpenMode::existing_only, registry)
                    .ok());
    dsekp::edge::BrokerConfigFiles files;
    const auto written = dsekp::edge::write_broker_config(
        *registry, dir_.file("broker-files"), dsekp::edge::BrokerConfigOptions{"edge", "", false},
        files);
    EXPECT_TRUE(written.ok()) << written.message();
    std::filesystem::create_directories(dir_.file("broker"));
    broker_ = std::make_unique<dsekp::test::MosquittoBroker>(dir_.file("broker"), files.conf_lines);
    edge_ = std::make_unique<dsekp::test::ChildProcess>(
        std::vector<std::string>{::dsekp::test::cli_path(), "edge", "--broker",
                                 "127.0.0.1:" + std::to_string(broker_->port()), "--db",
                                 registry_path_, "--logs-dir", logs_, "--metrics", "off"},
        dir_.file("edge.out"), dir_.file("edge.err"));
    EXPECT_TRUE(wait_until([&] { return edge_err().find("ready") != std::string::npos; },
                           std::chrono::seconds(10)))
        << edge_err();
  }

  /// Runs the sketch `path` (one boot) for `run_ms`; `nvs_dir` is its NVS.
  dsekp::test::RunResult run_sketch(const char* path, const char* run_ms = "9000") {
    ::setenv("SKETCH_BROKER_PORT", std::to_string(broker_->port()).c_str(), 1);
    ::setenv("SKETCH_RUN_MS", run_ms, 1);
    ::setenv("SKETCH_NVS_DIR", dir_.path().c_str(), 1);
    auto run = dsekp::test::run_command({path}, dir_.path().string(), std::chrono::seconds(30));
    ::unsetenv("SKETCH_BROKER_PORT");
    ::unsetenv("SKETCH_RUN_MS");
    ::unsetenv("SKETCH_NVS_DIR");
    return run;
  }

  /// Stops the edge and reads its DSEKP log.
  ServerRows stop_edge() {
    edge_->stop();
    ServerRows server;
    dsekp::analyze::read_csv(logs_ + "/server_logs_dsekp.csv", server);
    return server;
  }

  std::string edge_err() const { return dsekp::test::read_file(dir_.file("edge.err")); }
  dsekp::test::RunResult keys_show(const std::string& dev_id) {
    return dsekp::test::run_command(
        {::dsekp::test::cli_path(), "keys", "show", dev_id, "--db", registry_path_},
        dir_.path().string());
  }
  const dsekp::test::TempDir& dir() const { return dir_; }

 private:
  dsekp::test::TempDir dir_;
  std::string registry_path_ = dir_.file("registry.db");
  std::string logs_ = dir_.file("edge-logs");
  std::unique_ptr<dsekp::test::MosquittoBroker> broker_;
  std::unique_ptr<dsekp::test::ChildProcess> edge_;
};

/// Every row of `dev_id` carries a DHT reading of the stand-in, and no frame is there twice.
void expect_readings_once(const ServerRows& server, const std::string& dev_id,
                          std::set<std::string>& sessions) {
  std::set<std::pair<std::string, std::string>> frames;
  for (const auto& row : server.rows) {
    EXPECT_EQ(row.dev_id, dev_id);
    EXPECT_EQ(row.plaintext.rfind("{\"t\":2", 0), 0u) << row.plaintext;
    EXPECT_NE(row.plaintext.find(",\"h\":45.0}"), std::string::npos) << row.plaintext;
    sessions.insert(row.sessctr);
    EXPECT_TRUE(frames.insert({row.sessctr, row.seq}).second) << "a frame twice";
  }
}

TEST(ArduinoSketch, TheExampleHandshakesAndItsReadingsAreAcceptedByTheEdge) {
  SketchBed bed(DSEKP_SKETCH_REGISTRY);
  const auto run = bed.run_sketch(DSEKP_SKETCH_PATH);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // The sketch prints a line for every SDK error (a refused ACK, a failed publish, ...): none.
  EXPECT_EQ(run.out.find("dsekp"), std::string::npos) << run.out;
  const ServerRows server = bed.stop_edge();
  // Readings every 2 s once the session is up, for 9 s: at least three.
  ASSERT_GE(server.rows.size(), 3u) << run.out << bed.edge_err();
  std::set<std::string> sessions;
  expect_readings_once(server, DSEKP_SKETCH_DEV_ID, sessions);
  EXPECT_EQ(sessions.size(), 1u) << "one handshake";
}

// Provisioned with --ratchet (the header's DSEKP_RATCHET 1), the same sketch keeps its secret in
// NVS (the Preferences stand-in): three boots, each one session under the secret its NVS holds,
// all accepted, and the edge's stored epoch is the device's.
TEST(ArduinoSketch, ARatchetingExampleStepsItsSecretInNvsAcrossReboots) {
  SketchBed bed(DSEKP_SKETCH_RATCHET_REGISTRY);
  for (int boot = 0; boot < 3; ++boot) {
    const auto run = bed.run_sketch(DSEKP_SKETCH_RATCHET_PATH, "5000");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out.find("dsekp"), std::string::npos) << "boot " << boot << ": " << run.out;
  }
  const std::string record = dsekp::test::read_file(bed.dir().file("dsekp.secret"));
  ASSERT_EQ(record.size(), 44u) << "the NVS entry: secret, epoch, generation";
  EXPECT_EQ(static_cast<unsigned char>(record[35]), 3u) << "epoch 3 after three sessions";
  const auto show = bed.keys_show(DSEKP_SKETCH_RATCHET_DEV_ID);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("\"ratchet_epoch\": 3"), std::string::npos) << show.out;
  const ServerRows server = bed.stop_edge();
  ASSERT_GE(server.rows.size(), 3u) << bed.edge_err();
  std::set<std::string> sessions;
  expect_readings_once(server, DSEKP_SKETCH_RATCHET_DEV_ID, sessions);
  EXPECT_EQ(sessions.size(), 3u) << "one session per boot";
}

}  // namespace
