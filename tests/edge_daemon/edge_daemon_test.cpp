// `dsekp edge` end to end: a real Mosquitto on a free loopback port, the daemon as a child
// process, and a scripted device (the real DeviceSession and PSK baseline) publishing over a
// libmosquitto client. Checks the ACK, the server CSV logs (columns, latency), the telemetry
// table, the republish, that a replayed DATA frame is logged once, and a clean SIGTERM exit.
// Every wait is bounded; the edge and the broker are killed in teardown by their destructors.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "mosquitto_broker.hpp"
#include "mqtt_test_client.hpp"
#include "tests/edge_registry/temp_dir.hpp"
#include "tests/edge_service/scripted_device.hpp"

namespace dsekp::edge::testing {
namespace {

using Clock = std::chrono::steady_clock;
using Row = std::vector<std::string>;

std::uint64_t unix_ms_now() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

/// RFC 4180 lines (no line breaks inside fields, which our rows never have).
std::vector<Row> parse_csv(const std::string& text) {
  std::vector<Row> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    Row row(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        row.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        row.emplace_back();
      } else {
        row.back() += c;
      }
    }
    rows.push_back(row);
  }
  return rows;
}

std::size_t line_count(const std::string& path) {
  const std::string text = dsekp::test::read_file(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::int64_t count_rows(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::int64_t n = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
      n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return n;
}

/// GET /metrics from the edge's endpoint on loopback `port` (HTTP/1.0: the server closes the
/// connection after the answer); "" on any failure. Receives time out after 5 s.
std::string scrape_metrics(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
        answer.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return answer;
}

/// The metrics port the edge printed on stderr ("metrics on http://127.0.0.1:PORT/metrics").
int metrics_port(const std::string& edge_stderr) {
  const std::string marker = "metrics on http://127.0.0.1:";
  const auto at = edge_stderr.find(marker);
  return at == std::string::npos ? -1 : std::stoi(edge_stderr.substr(at + marker.size()));
}

std::string as_string(const Bytes& b) {
  return std::string(b.begin(), b.end());
}

std::string reading(int i) {
  return R"({"t":)" + std::to_string(20 + i) + R"(.5,"h":51.0})";
}

TEST(EdgeDaemon, HandshakeDataPskReplayAndCleanShutdown) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  const std::string logs = dir.file("logs");
  DeviceMaterial material;
  {
    std::unique_ptr<DeviceRegistry> registry;
    ASSERT_TRUE(DeviceRegistry::open(registry_path, OpenMode::create_if_missing, registry).ok());
    ASSERT_TRUE(registry->add("esp32-01", material).ok());
  }
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(dir.file("broker"), "allow_anonymous true\n");
  const std::string err_file = dir.file("edge.err");
  dsekp::test::ChildProcess edge(
      {DSEKP_CLI_PATH, "edge", "--broker", "127.0.0.1:" + std::to_string(broker.port()), "--db",
       registry_path, "--logs-dir", logs, "--metrics", "127.0.0.1:0"},
      dir.file("edge.out"), err_file);
  ASSERT_TRUE(wait_until(
      [&] { return dsekp::test::read_file(err_file).find("ready") != std::string::npos; },
      std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file);

  dsekp::test::MqttTestClient client("esp32-01");
  ASSERT_EQ(client.connect(broker.port(), "", ""), std::optional<int>(0));
  const std::string ack_topic = "dsekp/init/ack/esp32-01";
  ASSERT_EQ(client.subscribe(ack_topic), std::optional<int>(1));
  ASSERT_EQ(client.subscribe("plain/esp32-01"), std::optional<int>(1));

  ScriptedDevice device(material, 42);
  const auto now_s = static_cast<std::uint32_t>(unix_ms_now() / 1000);
  ASSERT_TRUE(client.publish("dsekp/init", as_string(device.init(Encoding::json, now_s))));
  const auto ack = client.wait_for_message(ack_topic);
  ASSERT_TRUE(ack.has_value()) << dsekp::test::read_file(err_file);
  ASSERT_EQ(device.take_ack(bytes_of(ack->payload)), Error::ok);

  // 50 DATA frames, JSON and compact alternately; frame 10 is sent twice (a replay).
  constexpr int kFrames = 50;
  for (int i = 0; i < kFrames; ++i) {
    const Encoding enc = i % 2 == 0 ? Encoding::json : Encoding::compact;
    const std::string payload = as_string(device.data(reading(i), unix_ms_now(), enc));
    ASSERT_TRUE(client.publish("dsekp/data", payload));
    if (i == 10) {
      ASSERT_TRUE(client.publish("dsekp/data", payload));
    }
  }
  constexpr int kPskFrames = 10;
  for (int i = 0; i < kPskFrames; ++i)
    ASSERT_TRUE(
        client.publish("psk/data", as_string(device.psk(reading(i), static_cast<std::uint32_t>(i),
                                                        unix_ms_now(), Encoding::json))));

  // Messages from one connection are handled in order: once the last rows are in, all are.
  const std::string dsekp_csv = logs + "/server_logs_dsekp.csv";
  const std::string psk_csv = logs + "/server_logs_psk.csv";
  EXPECT_TRUE(wait_until(
      [&] { return line_count(dsekp_csv) >= kFrames + 1 && line_count(psk_csv) >= kPskFrames + 1; },
      std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file);
  const auto plain = client.wait_for_message("plain/esp32-01");
  ASSERT_TRUE(plain.has_value());

  // The metrics the daemon fed from the service's results.
  const std::string metrics = scrape_metrics(metrics_port(dsekp::test::read_file(err_file)));
  EXPECT_NE(metrics.find("dsekp_handshakes_total{outcome=\"accepted\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("dsekp_frames_total{mode=\"dsekp\",outcome=\"accepted\"} 50\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("dsekp_frames_total{mode=\"dsekp\",outcome=\"rejected\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("dsekp_frames_total{mode=\"psk\",outcome=\"accepted\"} 10\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("dsekp_rejections_total{reason=\"replay\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("dsekp_sessions_confirmed_total 1\n"), std::string::npos);

  edge.signal(SIGTERM);
  EXPECT_EQ(edge.wait_for(std::chrono::seconds(10)), std::optional<int>(0))
      << dsekp::test::read_file(err_file);

  const auto json = nlohmann::json::parse(plain->payload);
  EXPECT_EQ(json.at("dev_id"), "esp32-01");
  EXPECT_EQ(json.at("mode"), "dsekp");
  EXPECT_EQ(json.at("reading").at("h"), 51.0);

  // The DSEKP server log: the documented columns, one row per accepted frame, the replay once.
  const std::vector<Row> rows = parse_csv(dsekp::test::read_file(dsekp_csv));
  ASSERT_EQ(rows.size(), std::size_t{kFrames + 1});
  EXPECT_EQ(rows[0],
            (Row{"seq", "timestamp", "dev_id", "sessctr_id", "ciphertext", "iv", "tag", "plaintext",
                 "recvts_ms", "latency_ms", "payload_size", "bin_1s", "throughput", "sendts_ms"}));
  std::set<std::string> seqs;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const Row& r = rows[i];
    ASSERT_EQ(r.size(), 14u) << i;
    seqs.insert(r[0]);
    EXPECT_EQ(r[2], "esp32-01");
    EXPECT_EQ(r[7], reading(static_cast<int>(i - 1)));
    EXPECT_EQ(std::stoll(r[9]), std::stoll(r[8]) - std::stoll(r[13])) << "latency of row " << i;
    EXPECT_EQ(std::stoll(r[11]), std::stoll(r[8]) / 1000);
    EXPECT_GT(std::stoll(r[10]), 0);
  }
  EXPECT_EQ(seqs.size(), std::size_t{kFrames});  // seq 10 is not there twice

  const std::vector<Row> psk_rows = parse_csv(dsekp::test::read_file(psk_csv));
  ASSERT_EQ(psk_rows.size(), std::size_t{kPskFrames + 1});
  EXPECT_EQ(psk_rows[0].size(), 13u);
  EXPECT_EQ(psk_rows[1].size(), 13u);

  // The telemetry table (the exactly-once record) agrees with the CSV files.
  const std::string state = registry_path + ".state";
  EXPECT_EQ(count_rows(state, "SELECT count(*) FROM telemetry WHERE mode = 'dsekp'"), kFrames);
  EXPECT_EQ(count_rows(state, "SELECT count(DISTINCT seq) FROM telemetry WHERE mode = 'dsekp'"),
            kFrames);
  EXPECT_EQ(count_rows(state, "SELECT count(*) FROM telemetry WHERE mode = 'psk'"), kPskFrames);
  EXPECT_EQ(count_rows(state, "SELECT count(*) FROM telemetry WHERE encoding = 'compact'"),
            kFrames / 2);
  EXPECT_EQ(count_rows(state,
                       "SELECT count(*) FROM telemetry WHERE latency_ms != recvts_ms - "
                       "sendts_ms"),
            0);
  // The replay was rejected and logged as such.
  EXPECT_NE(dsekp::test::read_file(err_file).find("replay"), std::string::npos);
}

}  // namespace
}  // namespace dsekp::edge::testing
