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

#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/scripted_device.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

// The bed both tests use: a registry with esp32-01, an open Mosquitto, the edge with `flags`,
// and the device's handshake over a test client subscribed to its ACK topic and `watch`.
struct DaemonBed {
  explicit DaemonBed(const std::vector<std::string>& flags) {
    EXPECT_TRUE(register_device(registry_path, "esp32-01", material));
    std::filesystem::create_directories(dir.file("broker"));
    broker = std::make_unique<dsekp::test::MosquittoBroker>(dir.file("broker"),
                                                            "allow_anonymous true\n");
    std::vector<std::string> argv = {::dsekp::test::cli_path(),
                                     "edge",
                                     "--broker",
                                     "127.0.0.1:" + std::to_string(broker->port()),
                                     "--db",
                                     registry_path,
                                     "--logs-dir",
                                     logs,
                                     "--metrics",
                                     "127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    edge = std::make_unique<dsekp::test::ChildProcess>(argv, dir.file("edge.out"), err_file);
  }
  ::testing::AssertionResult ready() const {
    if (wait_until([&] { return stderr_text().find("ready") != std::string::npos; },
                   std::chrono::seconds(10)))
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << stderr_text();
  }
  [[nodiscard]] std::string stderr_text() const { return dsekp::test::read_file(err_file); }
  void handshake(dsekp::test::MqttTestClient& client, ScriptedDevice& device,
                 const std::string& watch, std::uint32_t now_s) {
    ASSERT_EQ(client.connect(broker->port(), "", ""), std::optional<int>(0));
    ASSERT_EQ(client.subscribe(kAckTopic), std::optional<int>(1));
    ASSERT_EQ(client.subscribe(watch), std::optional<int>(1));
    ASSERT_TRUE(client.publish("dsekp/init", as_string(device.init(Encoding::json, now_s))));
    const auto ack = client.wait_for_message(kAckTopic);
    ASSERT_TRUE(ack.has_value()) << stderr_text();
    ASSERT_EQ(device.take_ack(bytes_of(ack->payload)), Error::ok);
  }

  static constexpr const char* kAckTopic = "dsekp/init/ack/esp32-01";
  dsekp::test::TempDir dir;
  std::string registry_path = dir.file("registry.db");
  std::string logs = dir.file("logs");
  std::string err_file = dir.file("edge.err");
  DeviceMaterial material;
  std::unique_ptr<dsekp::test::MosquittoBroker> broker;
  std::unique_ptr<dsekp::test::ChildProcess> edge;
};

TEST(EdgeDaemon, HandshakeDataPskReplayAndCleanShutdown) {
  DaemonBed bed({"--psk-baseline", "--republish"});
  ASSERT_TRUE(bed.ready());
  const std::string& registry_path = bed.registry_path;
  const std::string& logs = bed.logs;
  const std::string& err_file = bed.err_file;
  dsekp::test::ChildProcess& edge = *bed.edge;
  dsekp::test::MqttTestClient client("esp32-01");
  ScriptedDevice device(bed.material, 42);
  bed.handshake(client, device, "plain/esp32-01", static_cast<std::uint32_t>(unix_ms_now() / 1000));

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
  EXPECT_NE(metrics.find("dsekp_active_sessions 1\n"), std::string::npos);
  // Every message went through a burst: the INIT, 51 DATA frames (one a replay), 10 PSK frames;
  // how many bursts they took depends on timing, at least one and at most one each.
  EXPECT_NE(metrics.find("dsekp_burst_messages_total 62\n"), std::string::npos) << metrics;
  const std::size_t at = metrics.find("\ndsekp_bursts_total ");
  ASSERT_NE(at, std::string::npos) << metrics;
  const double bursts = std::stod(metrics.substr(at + std::string("\ndsekp_bursts_total ").size()));
  EXPECT_GE(bursts, 1.0);
  EXPECT_LE(bursts, 62.0);

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
  EXPECT_EQ(rows[0], (Row{"seq", "timestamp", "dev_id", "sessctr_id", "ciphertext", "iv", "tag",
                          "plaintext", "recvts_ms", "latency_ms", "payload_size", "bin_1s",
                          "throughput", "sendts_ms", "recvts_us"}));
  std::set<std::string> seqs;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const Row& r = rows[i];
    ASSERT_EQ(r.size(), 15u) << i;
    seqs.insert(r[0]);
    EXPECT_EQ(r[2], "esp32-01");
    EXPECT_EQ(r[7], reading(static_cast<int>(i - 1)));
    EXPECT_EQ(std::stoll(r[9]), std::stoll(r[8]) - std::stoll(r[13])) << "latency of row " << i;
    EXPECT_EQ(std::stoll(r[11]), std::stoll(r[8]) / 1000);
    EXPECT_GT(std::stoll(r[10]), 0);
    EXPECT_EQ(std::stoll(r[8]), std::stoll(r[14]) / 1000) << "recvts_ms of row " << i;
  }
  EXPECT_EQ(seqs.size(), std::size_t{kFrames});  // seq 10 is not there twice

  const std::vector<Row> psk_rows = parse_csv(dsekp::test::read_file(psk_csv));
  ASSERT_EQ(psk_rows.size(), std::size_t{kPskFrames + 1});
  EXPECT_EQ(psk_rows[0].size(), 14u);
  EXPECT_EQ(psk_rows[0].back(), "recvts_us");
  EXPECT_EQ(psk_rows[1].size(), 14u);

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
  EXPECT_EQ(count_rows(state, "SELECT count(*) FROM telemetry WHERE recvts_ms != recvts_us / 1000"),
            0);
  // The replay was rejected and logged as such.
  EXPECT_NE(dsekp::test::read_file(err_file).find("replay"), std::string::npos);
}

// The defaults an operator gets without asking: no plaintext back out through the broker (the
// finding: every reading was republished on plain/{dev_id} to anyone who subscribed), and no
// PSK baseline (its frames have no replay protection): the edge does not even subscribe to it.
TEST(EdgeDaemon, ByDefaultNothingIsRepublishedInClearAndThePskBaselineIsOff) {
  DaemonBed bed({});
  ASSERT_TRUE(bed.ready());
  EXPECT_NE(bed.stderr_text().find("subscribed to 5 topics"), std::string::npos)
      << "init, data, their per-device forms and admin; not psk/data";
  dsekp::test::MqttTestClient client("esp32-01");
  ScriptedDevice device(bed.material, 43);
  const auto now_s = static_cast<std::uint32_t>(unix_ms_now() / 1000);
  bed.handshake(client, device, "plain/#", now_s);
  const std::string ack_topic = DaemonBed::kAckTopic;
  const std::string& err_file = bed.err_file;
  dsekp::test::ChildProcess& edge = *bed.edge;
  ASSERT_TRUE(client.publish("dsekp/data",
                             as_string(device.data(reading(0), unix_ms_now(), Encoding::json))));
  ASSERT_TRUE(client.publish("psk/data",
                             as_string(device.psk(reading(1), 0, unix_ms_now(), Encoding::json))));
  // The marker: a newer INIT from the same connection, answered after both were handled.
  ASSERT_TRUE(client.publish("dsekp/init", as_string(device.init(Encoding::json, now_s + 1))));
  ASSERT_TRUE(client.wait_for_count(2)) << dsekp::test::read_file(err_file);
  for (const auto& m : client.received()) EXPECT_EQ(m.topic, ack_topic) << m.payload;
  const std::string metrics = scrape_metrics(metrics_port(dsekp::test::read_file(err_file)));
  EXPECT_NE(metrics.find("dsekp_frames_total{mode=\"dsekp\",outcome=\"accepted\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("dsekp_frames_total{mode=\"psk\",outcome=\"accepted\"} 0\n"),
            std::string::npos)
      << metrics;
  edge.signal(SIGTERM);
  EXPECT_EQ(edge.wait_for(std::chrono::seconds(10)), std::optional<int>(0));
}

// Home Assistant (or any consumer) that connects after the readings: it still gets each
// sensor's discovery config and the device's last state, retained by the broker.
TEST(EdgeDaemon, HomeAssistantFindsTheSensorsAndTheirLastStateWhenItSubscribesLater) {
  DaemonBed bed({"--republish", "--home-assistant"});
  ASSERT_TRUE(bed.ready());
  dsekp::test::MqttTestClient client("esp32-01");
  ScriptedDevice device(bed.material, 44);
  bed.handshake(client, device, "plain/esp32-01", static_cast<std::uint32_t>(unix_ms_now() / 1000));
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(client.publish("dsekp/data",
                               as_string(device.data(reading(i), unix_ms_now(), Encoding::json))));
  ASSERT_TRUE(client.wait_for_count(4)) << bed.stderr_text();  // the ACK and the 3 states

  dsekp::test::MqttTestClient home_assistant("home-assistant");
  ASSERT_EQ(home_assistant.connect(bed.broker->port(), "", ""), std::optional<int>(0));
  ASSERT_EQ(home_assistant.subscribe("homeassistant/#"), std::optional<int>(1));
  ASSERT_EQ(home_assistant.subscribe("plain/esp32-01"), std::optional<int>(1));
  ASSERT_TRUE(home_assistant.wait_for_count(3)) << "two configs and one state, retained";
  const auto t = home_assistant.wait_for_message("homeassistant/sensor/dsekp_esp32-01/t/config");
  ASSERT_TRUE(t.has_value());
  const auto config = nlohmann::json::parse(t->payload);
  EXPECT_EQ(config["state_topic"], "plain/esp32-01");
  EXPECT_EQ(config["device_class"], "temperature");
  EXPECT_TRUE(home_assistant.wait_for_message("homeassistant/sensor/dsekp_esp32-01/h/config"));
  const auto state = home_assistant.wait_for_message("plain/esp32-01");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(nlohmann::json::parse(state->payload)["reading"]["t"], 22.5) << "the last reading";
  bed.edge->signal(SIGTERM);
  EXPECT_EQ(bed.edge->wait_for(std::chrono::seconds(10)), std::optional<int>(0));
}

// Availability for Home Assistant, Telegraf and the like, on a base topic of the operator's:
// the edge is online while it runs and offline after a clean stop; a device is online from its
// first reading and offline once quiet for --device-offline-after; all retained, so a consumer
// that subscribes later learns the current state.
TEST(EdgeDaemon, TheEdgeAndEachDeviceAreOnlineThenOfflineOnTheConfiguredBaseTopic) {
  DaemonBed bed({"--republish", "--republish-retain", "--republish-topic", "home/dsekp",
                 "--device-offline-after", "1", "--client-id", "edge-a"});
  ASSERT_TRUE(bed.ready());
  const std::string edge_topic = "home/dsekp/edge/edge-a/availability";
  const std::string device_topic = "home/dsekp/esp32-01/availability";
  dsekp::test::MqttTestClient client("esp32-01");
  ScriptedDevice device(bed.material, 45);
  bed.handshake(client, device, "home/dsekp/#", static_cast<std::uint32_t>(unix_ms_now() / 1000));
  EXPECT_TRUE(client.wait_for_payload(edge_topic, "online")) << bed.stderr_text();
  ASSERT_TRUE(client.publish("dsekp/data",
                             as_string(device.data(reading(0), unix_ms_now(), Encoding::json))));
  const auto state = client.wait_for_message("home/dsekp/esp32-01");
  ASSERT_TRUE(state.has_value()) << bed.stderr_text();
  EXPECT_EQ(nlohmann::json::parse(state->payload)["dev_id"], "esp32-01");
  EXPECT_TRUE(client.wait_for_payload(device_topic, "online"));
  EXPECT_TRUE(client.wait_for_payload(device_topic, "offline")) << "quiet for over 1 s";

  dsekp::test::MqttTestClient later("telegraf");
  ASSERT_EQ(later.connect(bed.broker->port(), "", ""), std::optional<int>(0));
  ASSERT_EQ(later.subscribe("home/dsekp/#"), std::optional<int>(1));
  EXPECT_TRUE(later.wait_for_payload(edge_topic, "online")) << "retained";
  EXPECT_TRUE(later.wait_for_payload(device_topic, "offline")) << "retained";
  EXPECT_TRUE(later.wait_for_message("home/dsekp/esp32-01")) << "the last reading, retained";
  bed.edge->signal(SIGTERM);
  EXPECT_EQ(bed.edge->wait_for(std::chrono::seconds(10)), std::optional<int>(0));
  EXPECT_TRUE(later.wait_for_payload(edge_topic, "offline")) << "published before the DISCONNECT";
}

// An edge that dies (a kill, a power cut) cannot say goodbye: the broker publishes its will.
TEST(EdgeDaemon, AKilledEdgeIsReportedOfflineByItsWill) {
  DaemonBed bed({"--republish"});
  ASSERT_TRUE(bed.ready());
  const std::string edge_topic = "plain/edge/dsekp-edge/availability";
  dsekp::test::MqttTestClient watcher("watcher");
  ASSERT_EQ(watcher.connect(bed.broker->port(), "", ""), std::optional<int>(0));
  ASSERT_EQ(watcher.subscribe(edge_topic), std::optional<int>(1));
  // Not retained without --republish-retain: the watcher is subscribed before the kill.
  bed.edge->signal(SIGKILL);
  EXPECT_EQ(bed.edge->wait_for(std::chrono::seconds(5)), std::optional<int>(128 + SIGKILL));
  EXPECT_TRUE(watcher.wait_for_payload(edge_topic, "offline")) << bed.stderr_text();
}

}  // namespace
}  // namespace dsekp::edge::testing
