// `dsekp device` end to end: a real Mosquitto on a free loopback port, the real edge daemon
// (`dsekp edge`) and the device simulator as child processes. The client logs and the edge's
// server logs must hold exactly the same packets, and `dsekp analyze` must find 100% delivery.
// Also: resets (new sessions with distinct sessctr, every frame delivered), broker logins and
// ACLs, SIGINT (exit 130, logs and summary written), and the exit code 2 for bad input.
// Every wait is bounded; the edge and the broker are stopped by their destructors.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "edge/registry/broker_config.hpp"
#include "edge/registry/device_material.hpp"
#include "edge/registry/device_registry.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::device {
namespace {

using Clock = std::chrono::steady_clock;
using Row = std::map<std::string, std::string>;
using nlohmann::json;

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

/// Rows of a CSV file by column name (RFC 4180; our rows have no line breaks inside fields).
std::vector<Row> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(dsekp::test::read_file(path));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        fields.emplace_back();
      } else {
        fields.back() += c;
      }
    }
    lines.push_back(fields);
  }
  std::vector<Row> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    Row r;
    for (std::size_t c = 0; c < lines[0].size() && c < lines[i].size(); ++c)
      r[lines[0][c]] = lines[i][c];
    rows.push_back(r);
  }
  return rows;
}

std::vector<std::string> header(const std::string& path) {
  const std::string text = dsekp::test::read_file(path);
  std::vector<std::string> out;
  std::istringstream line(text.substr(0, text.find('\n')));
  for (std::string name; std::getline(line, name, ',');) out.push_back(name);
  return out;
}

using PacketId = std::tuple<std::string, std::string, std::string>;  // dev_id, sessctr, seq

class DeviceEndToEnd : public ::testing::Test {
 protected:
  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "edge stderr:\n" << dsekp::test::read_file(dir_.file("edge.err"));
      if (broker_) std::cerr << "mosquitto log:\n" << broker_->log();
    }
    edge_.reset();
    broker_.reset();
  }

  /// Registers `n` devices, writes their credentials file (a JSON array of `dsekp keys add`
  /// outputs) and starts the broker: anonymous, or with the registry's logins and ACLs.
  /// `dsekp keys ARGS...`, run to completion.
  dsekp::test::RunResult keys(std::vector<std::string> args) {
    args.insert(args.begin(), {::dsekp::test::cli_path(), "keys"});
    return dsekp::test::run_command(args, dir_.path().string(), std::chrono::seconds(20));
  }

  void provision(int n, bool broker_accounts, bool ratchet = false) {
    std::unique_ptr<edge::DeviceRegistry> registry;
    ASSERT_TRUE(
        edge::DeviceRegistry::open(registry_, edge::OpenMode::create_if_missing, registry).ok());
    ASSERT_TRUE(registry->set_topic_prefix(prefix_).ok());
    std::vector<edge::DeviceMaterial> materials(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "esp32-%02d", i);
      ASSERT_TRUE(registry->add(name, materials[static_cast<std::size_t>(i)], {}, ratchet).ok());
    }
    std::string security = "allow_anonymous true\n";
    if (broker_accounts) {
      edge::BrokerConfigFiles files;
      const auto s =
          edge::write_broker_config(*registry, dir_.file("broker-files"),
                                    edge::BrokerConfigOptions{"edge", prefix_, true}, files);
      ASSERT_TRUE(s.ok()) << s.message();
      security = files.conf_lines;
    }
    std::filesystem::create_directories(dir_.file("broker"));
    broker_ = std::make_unique<dsekp::test::MosquittoBroker>(dir_.file("broker"),
                                                             security + "set_tcp_nodelay true\n");
    json array = json::array();
    for (const auto& m : materials)
      array.push_back(json::parse(
          edge::material_json(m, {"127.0.0.1", static_cast<std::uint16_t>(broker_->port())},
                              edge::MaterialMode::with_psk_baseline)));
    std::ofstream(credentials_) << array.dump(2);
  }

  void start_edge() {
    const std::string err = dir_.file("edge.err");
    edge_ = std::make_unique<dsekp::test::ChildProcess>(
        std::vector<std::string>{::dsekp::test::cli_path(), "edge", "--broker", broker_address(),
                                 "--db", registry_, "--logs-dir", edge_logs_, "--metrics", "off",
                                 "--psk-baseline"},
        dir_.file("edge.out"), err);
    ASSERT_TRUE(
        wait_until([&] { return dsekp::test::read_file(err).find("ready") != std::string::npos; },
                   std::chrono::seconds(10)))
        << dsekp::test::read_file(err);
  }

  /// SIGTERM: the edge flushes its logs and exits 0.
  void stop_edge() {
    edge_->signal(SIGTERM);
    EXPECT_EQ(edge_->wait_for(std::chrono::seconds(10)), std::optional<int>(0));
  }

  dsekp::test::RunResult run_device(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {
        ::dsekp::test::cli_path(), "device",     "--broker",   broker_address(),
        "--credentials",           credentials_, "--progress", "off"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return dsekp::test::run_command(argv, dir_.path().string(), std::chrono::seconds(90));
  }

  std::string broker_address() const { return "127.0.0.1:" + std::to_string(broker_->port()); }

  json summary() const { return json::parse(dsekp::test::read_file(dir_.file("summary.json"))); }

  /// The client and the server log hold the same packets, field for field.
  void expect_same_packets(const std::string& mode, std::size_t expected) {
    const auto client = read_csv(client_logs_ + "/client_logs_" + mode + ".csv");
    const auto server = read_csv(edge_logs_ + "/server_logs_" + mode + ".csv");
    ASSERT_EQ(client.size(), expected);
    ASSERT_EQ(server.size(), expected);
    std::map<PacketId, Row> sent;
    for (const Row& r : client) {
      const PacketId id{r.at("dev_id"), mode == "dsekp" ? r.at("sessctr_id") : "", r.at("seq")};
      EXPECT_TRUE(sent.emplace(id, r).second) << "client logged a packet twice";
      EXPECT_EQ(std::stoull(r.at("sendts_ms")), std::stoull(r.at("sendts_us")) / 1000);
    }
    for (const Row& r : server) {
      const PacketId id{r.at("dev_id"), mode == "dsekp" ? r.at("sessctr_id") : "", r.at("seq")};
      const auto it = sent.find(id);
      ASSERT_NE(it, sent.end()) << "the edge logged a packet the client did not";
      for (const char* column :
           {"ciphertext", "iv", "tag", "plaintext", "sendts_ms", "payload_size"})
        EXPECT_EQ(r.at(column), it->second.at(column)) << column;
      sent.erase(it);
    }
    EXPECT_TRUE(sent.empty()) << sent.size() << " packet(s) never reached the edge log";
  }

  /// `dsekp analyze` on the run's four (or three) files: 100% delivery of `expected` packets.
  void expect_full_delivery(const std::string& mode, std::size_t expected) {
    std::vector<std::string> argv = {::dsekp::test::cli_path(),
                                     "analyze",
                                     "--" + mode + "-client",
                                     client_logs_ + "/client_logs_" + mode + ".csv",
                                     "--" + mode + "-server",
                                     edge_logs_ + "/server_logs_" + mode + ".csv",
                                     "--out",
                                     dir_.file("analysis"),
                                     "--no-figures"};
    if (mode == "dsekp") {
      argv.push_back("--handshakes");
      argv.push_back(client_logs_ + "/client_handshakes_dsekp.csv");
    }
    const auto r = dsekp::test::run_command(argv, dir_.path().string(), std::chrono::seconds(60));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json s = json::parse(dsekp::test::read_file(dir_.file("analysis/summary.json")));
    const json& rel = s.at("modes").at(mode).at("reliability");
    EXPECT_EQ(rel.at("sent"), expected);
    EXPECT_EQ(rel.at("received"), expected);
    EXPECT_EQ(rel.at("duplicates"), 0);
    EXPECT_EQ(rel.at("delivery_pct"), 100.0);
    EXPECT_EQ(s.at("bad_rows_total"), 0);
  }

  /// 5 devices x 20 frames through the edge in `mode`/`encoding`, checked end to end.
  void run_fleet(const std::string& mode, const std::string& encoding, bool broker_accounts) {
    provision(5, broker_accounts);
    start_edge();
    const auto r =
        run_device({"--mode", mode, "--encoding", encoding, "--count", "20", "--interval-ms", "20",
                    "--logs-dir", client_logs_, "--summary-json", dir_.file("summary.json")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json s = summary();
    EXPECT_EQ(s.at("mode"), mode);
    EXPECT_EQ(s.at("encoding"), encoding);
    EXPECT_EQ(s.at("devices"), 5);
    EXPECT_EQ(s.at("packets_sent"), 100);
    EXPECT_EQ(s.at("packets_acked"), 100);
    EXPECT_EQ(s.at("publish_errors"), 0);
    EXPECT_EQ(s.at("interrupted"), false);
    if (mode == "dsekp") {
      EXPECT_EQ(s.at("handshakes").at("ok"), 5);
      EXPECT_EQ(s.at("handshakes").at("started"), 5);
    }
    // Messages of one connection reach the edge in order and the device waited for every
    // PUBACK; stopping the edge flushes its logs.
    const std::string server = edge_logs_ + "/server_logs_" + mode + ".csv";
    wait_until([&] { return read_csv(server).size() >= 100; }, std::chrono::seconds(10));
    stop_edge();
    const std::string client = client_logs_ + "/client_logs_" + mode + ".csv";
    const std::vector<std::string> psk_columns = {
        "seq", "timestamp",  "dev_id",    "plaintext",    "iv",
        "tag", "ciphertext", "sendts_ms", "payload_size", "sendts_us"};
    std::vector<std::string> dsekp_columns = psk_columns;
    dsekp_columns.insert(dsekp_columns.begin() + 1, "sessctr_id");
    EXPECT_EQ(header(client), mode == "psk" ? psk_columns : dsekp_columns);
    expect_same_packets(mode, 100);
    expect_full_delivery(mode, 100);
  }

  dsekp::test::TempDir dir_;
  std::string registry_ = dir_.file("registry.db");
  std::string credentials_ = dir_.file("credentials.json");
  std::string client_logs_ = dir_.file("client");
  std::string edge_logs_ = dir_.file("server");
  std::unique_ptr<dsekp::test::MosquittoBroker> broker_;
  std::unique_ptr<dsekp::test::ChildProcess> edge_;
  std::string prefix_;  // the deployment's topic prefix (the registry's)
};

TEST_F(DeviceEndToEnd, DsekpJsonWithBrokerLoginsAndAcls) {
  run_fleet("dsekp", "json", true);
}

// The topic prefix end to end: recorded in the registry, in the devices' material (their
// topics), the broker's grants; the edge, given no --prefix, takes the registry's.
TEST_F(DeviceEndToEnd, DsekpWithATopicPrefixFromTheRegistry) {
  prefix_ = "site1/";
  run_fleet("dsekp", "json", true);
}

TEST_F(DeviceEndToEnd, DsekpCompact) {
  run_fleet("dsekp", "compact", false);
}

TEST_F(DeviceEndToEnd, PskJson) {
  run_fleet("psk", "json", false);
}

TEST_F(DeviceEndToEnd, PskCompactWithQos0) {
  provision(3, false);
  start_edge();
  const auto r = run_device({"--mode", "psk", "--encoding", "compact", "--qos", "0", "--count",
                             "10", "--interval-ms", "20", "--logs-dir", client_logs_,
                             "--summary-json", dir_.file("summary.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary().at("packets_sent"), 30);
  // QoS 0 has no acknowledgement to wait for: give the edge a moment, then compare.
  wait_until([&] { return read_csv(edge_logs_ + "/server_logs_psk.csv").size() >= 30; },
             std::chrono::seconds(10));
  stop_edge();
  expect_same_packets("psk", 30);
}

TEST_F(DeviceEndToEnd, ResetsOpenNewSessionsAndLoseNothing) {
  provision(2, false);
  start_edge();
  const auto r =
      run_device({"--mode", "dsekp", "--count", "20", "--interval-ms", "20", "--reset-every", "5",
                  "--logs-dir", client_logs_, "--summary-json", dir_.file("summary.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = summary();
  EXPECT_EQ(s.at("resets"), 6);  // after frames 5, 10 and 15 of each device
  EXPECT_EQ(s.at("handshakes").at("ok"), 8);
  EXPECT_EQ(s.at("packets_acked"), 40);
  const auto handshakes = read_csv(client_logs_ + "/client_handshakes_dsekp.csv");
  ASSERT_EQ(handshakes.size(), 8u);
  std::map<std::string, std::set<std::string>> sessions;
  for (const Row& h : handshakes) {
    EXPECT_EQ(h.at("outcome"), "ok");
    EXPECT_GE(std::stoull(h.at("ack_recv_ms")), std::stoull(h.at("init_sent_ms")));
    sessions[h.at("dev_id")].insert(h.at("sessctr_id"));
  }
  ASSERT_EQ(sessions.size(), 2u);
  for (const auto& [dev, ids] : sessions) EXPECT_EQ(ids.size(), 4u) << dev;
  // Each session's frames are seq 0..4 under its own sessctr.
  std::map<std::pair<std::string, std::string>, std::set<int>> seqs;
  for (const Row& d : read_csv(client_logs_ + "/client_logs_dsekp.csv"))
    seqs[{d.at("dev_id"), d.at("sessctr_id")}].insert(std::stoi(d.at("seq")));
  ASSERT_EQ(seqs.size(), 8u);
  for (const auto& [id, set] : seqs) {
    EXPECT_EQ(set, (std::set<int>{0, 1, 2, 3, 4})) << id.first << " " << id.second;
    EXPECT_TRUE(sessions[id.first].count(id.second)) << "a session without a handshake row";
  }
  wait_until([&] { return read_csv(edge_logs_ + "/server_logs_dsekp.csv").size() >= 40; },
             std::chrono::seconds(10));
  stop_edge();
  expect_same_packets("dsekp", 40);
  expect_full_delivery("dsekp", 40);
}

/// The epoch a device's secret file holds (device/secret_file.hpp: after the u64 generation).
std::uint32_t file_epoch(const std::string& path) {
  const std::string bytes = dsekp::test::read_file(path);
  if (bytes.size() != 44) return 0xFFFFFFFFu;
  std::uint32_t epoch = 0;
  for (int i = 8; i < 12; ++i) epoch = epoch << 8 | static_cast<std::uint8_t>(bytes[i]);
  return epoch;
}

// Devices provisioned to ratchet (PROTOCOL.md 6.6) through two runs of `dsekp device` (a device
// keeps its secret file across runs, as across reboots) with reboots inside each run and the edge
// killed with SIGKILL between them: every session after the first is proven under a secret the
// edge reached only by stepping, every frame arrives exactly once, and the device's epoch, the
// edge's stored one and `dsekp keys show` agree.
TEST_F(DeviceEndToEnd, RatchetingDevicesStepWithTheEdgeAcrossRebootsAndAnEdgeKill) {
  provision(2, false, /*ratchet=*/true);
  start_edge();
  const std::string secrets = dir_.file("secrets");
  const auto first = run_device({"--mode", "dsekp", "--count", "10", "--interval-ms", "20",
                                 "--reset-every", "5", "--ratchet-dir", secrets, "--logs-dir",
                                 client_logs_, "--summary-json", dir_.file("summary.json")});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(summary().at("handshakes").at("ok"), 4);
  for (const char* dev : {"esp32-00", "esp32-01"})
    EXPECT_EQ(file_epoch(secrets + "/" + dev + ".secret"), 2u) << dev;
  wait_until([&] { return read_csv(edge_logs_ + "/server_logs_dsekp.csv").size() >= 20; },
             std::chrono::seconds(10));
  // The edge's state is past the provisioned secrets: the registry no longer holds them.
  for (const char* dev : {"esp32-00", "esp32-01"}) {
    const auto show = keys({"show", dev, "--db", registry_});
    ASSERT_EQ(show.exit_code, 0) << show.err;
    EXPECT_NE(json::parse(show.out).at("secret_erased"), nullptr) << dev;
    const auto reveal = keys({"show", dev, "--db", registry_, "--reveal"});
    EXPECT_NE(reveal.exit_code, 0);
    EXPECT_NE(reveal.err.find("erased"), std::string::npos) << reveal.err;
  }
  edge_->signal(SIGKILL);
  ASSERT_TRUE(edge_->wait_for(std::chrono::seconds(10)).has_value());
  start_edge();
  // Within one run a reboot's INIT takes the next second when the last one used this second
  // (`t` must grow, PROTOCOL.md 6.1 step 1), so the first run's last `t` may be a second or two
  // ahead of the clock; a new run only waits for the next second. Wait those out.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  // The second run writes its own logs and starts from the secret files.
  const auto second =
      run_device({"--mode", "dsekp", "--count", "10", "--interval-ms", "20", "--reset-every", "5",
                  "--ratchet-dir", secrets, "--logs-dir", dir_.file("client2"), "--summary-json",
                  dir_.file("summary.json")});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(summary().at("handshakes").at("ok"), 4) << "no INIT was refused";
  EXPECT_EQ(summary().at("packets_acked"), 20);
  for (const char* dev : {"esp32-00", "esp32-01"}) {
    EXPECT_EQ(file_epoch(secrets + "/" + dev + ".secret"), 4u) << dev;
    const auto show = keys({"show", dev, "--db", registry_});
    ASSERT_EQ(show.exit_code, 0) << show.err;
    const json info = json::parse(show.out);
    EXPECT_EQ(info.at("ratchet"), true);
    EXPECT_EQ(info.at("ratchet_epoch"), 4) << "the edge's stored secret is the device's";
  }
  wait_until([&] { return read_csv(edge_logs_ + "/server_logs_dsekp.csv").size() >= 40; },
             std::chrono::seconds(10));
  stop_edge();
  const auto server = read_csv(edge_logs_ + "/server_logs_dsekp.csv");
  std::set<PacketId> received;
  for (const Row& r : server)
    EXPECT_TRUE(received.insert({r.at("dev_id"), r.at("sessctr_id"), r.at("seq")}).second)
        << "a frame stored twice";
  std::size_t sent = 0;
  for (const std::string& log :
       {client_logs_ + "/client_logs_dsekp.csv", dir_.file("client2") + "/client_logs_dsekp.csv"}) {
    for (const Row& r : read_csv(log)) {
      ++sent;
      EXPECT_TRUE(received.count({r.at("dev_id"), r.at("sessctr_id"), r.at("seq")}))
          << r.at("dev_id") << " " << r.at("sessctr_id") << " " << r.at("seq") << " lost";
    }
  }
  EXPECT_EQ(sent, 40u);
  EXPECT_EQ(received.size(), 40u);
  // A copy of the registry taken now does not hold a provisioned secret in any of its files.
  const std::string registry_bytes =
      dsekp::test::read_file(registry_) + dsekp::test::read_file(registry_ + "-wal");
  for (const json& m : json::parse(dsekp::test::read_file(credentials_))) {
    std::string secret;
    const std::string hex = m.at("dev_secret_hex");
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
      secret.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    ASSERT_EQ(secret.size(), 32u);
    EXPECT_EQ(registry_bytes.find(secret), std::string::npos) << m.at("dev_id");
  }
}

TEST_F(DeviceEndToEnd, ARatchetingDeviceWithoutARatchetDirIsAUsageError) {
  provision(1, false, /*ratchet=*/true);
  const auto r = run_device({"--mode", "dsekp", "--count", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--ratchet-dir"), std::string::npos) << r.err;
}

TEST_F(DeviceEndToEnd, RekeyAtSeqMovesToNewSessions) {
  provision(2, false);
  start_edge();
  const auto r =
      run_device({"--mode", "dsekp", "--count", "20", "--interval-ms", "30", "--rekey-at-seq", "6",
                  "--logs-dir", client_logs_, "--summary-json", dir_.file("summary.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = summary();
  EXPECT_EQ(s.at("resets"), 0);
  // Sessions of at least 6 frames: 2 to 4 handshakes per device, however fast the ACKs are.
  EXPECT_GE(s.at("handshakes").at("ok").get<int>(), 4);
  EXPECT_LE(s.at("handshakes").at("ok").get<int>(), 8);
  wait_until([&] { return read_csv(edge_logs_ + "/server_logs_dsekp.csv").size() >= 40; },
             std::chrono::seconds(10));
  stop_edge();
  expect_same_packets("dsekp", 40);
}

TEST_F(DeviceEndToEnd, SigintStopsCleanlyWithLogsAndSummary) {
  provision(3, false);
  const std::string err = dir_.file("device.err");
  dsekp::test::ChildProcess device(
      {::dsekp::test::cli_path(), "device", "--broker", broker_address(), "--credentials",
       credentials_, "--mode", "psk", "--interval-ms", "20", "--logs-dir", client_logs_,
       "--summary-json", dir_.file("summary.json"), "--progress", "off"},
      dir_.file("device.out"), err);
  const std::string log = client_logs_ + "/client_logs_psk.csv";
  // Rows reach the file within the periodic flush (about a second).
  ASSERT_TRUE(wait_until([&] { return read_csv(log).size() >= 10; }, std::chrono::seconds(10)))
      << dsekp::test::read_file(err);
  device.signal(SIGINT);
  ASSERT_EQ(device.wait_for(std::chrono::seconds(10)), std::optional<int>(130))
      << dsekp::test::read_file(err);
  const json s = summary();
  EXPECT_EQ(s.at("interrupted"), true);
  EXPECT_EQ(read_csv(log).size(), s.at("packets_sent").get<std::size_t>());
  EXPECT_NE(dsekp::test::read_file(err).find("(interrupted)"), std::string::npos);
}

TEST_F(DeviceEndToEnd, WithoutAnEdgeHandshakesTimeOutAndTheRunFails) {
  provision(1, false);
  const auto r = run_device({"--mode", "dsekp", "--count", "3", "--interval-ms", "20",
                             "--retransmit-initial-ms", "50", "--init-max-age-ms", "400",
                             "--max-handshake-failures", "2", "--logs-dir", client_logs_,
                             "--summary-json", dir_.file("summary.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("esp32-00: 2 handshake(s) in a row ended without a valid ACK"),
            std::string::npos)
      << r.err;
  const json s = summary();
  EXPECT_EQ(s.at("handshakes").at("timeout"), 2);
  EXPECT_EQ(s.at("devices_failed"), 1);
  const auto rows = read_csv(client_logs_ + "/client_handshakes_dsekp.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("outcome"), "timeout");
  EXPECT_EQ(rows[0].at("ack_recv_ms"), "");
}

TEST_F(DeviceEndToEnd, ARefusedLoginGivesUpAtOnce) {
  provision(1, true);
  json credentials = json::parse(dsekp::test::read_file(credentials_));
  credentials[0]["broker"]["password"] = "wrong";
  std::ofstream(credentials_) << credentials.dump();
  const auto r =
      run_device({"--mode", "psk", "--count", "3", "--summary-json", dir_.file("summary.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("esp32-00: the broker refused the login"), std::string::npos) << r.err;
  EXPECT_EQ(summary().at("connect_failures"), 1);
  EXPECT_EQ(summary().at("devices_failed"), 1);
}

TEST_F(DeviceEndToEnd, BadInputExitsWithTwoAndSaysWhy) {
  std::filesystem::create_directories(dir_.path());
  std::ofstream(credentials_) << R"({"dev_id": "a", "dev_secret_hex": "00"})";
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--mode", "dsekp"}, "credentials.json: device \"a\": \"dev_secret_hex\" must be 64 hex"},
      {{"--mode", "psk", "--reset-every", "3"}, "resets (--reset-every, --reset-prob) are refused"},
      {{"--mode", "dsekp", "--reset-prob", "1.5"}, "--reset-prob must be between 0 and 1"},
      {{"--mode", "dsekp", "--qos", "2"}, "--qos must be 0 or 1"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {
        ::dsekp::test::cli_path(), "device",    "--broker", "127.0.0.1:1",
        "--credentials",           credentials_};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const auto r = dsekp::test::run_command(argv, dir_.path().string());
    EXPECT_EQ(r.exit_code, 2) << c.expected << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
  }
  // More devices than the file holds.
  std::ofstream(credentials_) << json::parse(R"({"dev_id": "a",
      "dev_secret_hex": "0000000000000000000000000000000000000000000000000000000000000000",
      "edge_salt_hex": "00000000000000000000000000000000",
      "psk_key_hex": "00000000000000000000000000000000"})")
                                     .dump();
  const auto r =
      dsekp::test::run_command({::dsekp::test::cli_path(), "device", "--broker", "127.0.0.1:1",
                                "--credentials", credentials_, "--mode", "psk", "--devices", "2"},
                               dir_.path().string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds only 1 device(s)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dsekp::device
