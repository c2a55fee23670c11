// Device reboots (`dsekp device --reset-every K`): each reboot forgets the session keys (as a power
// cycle loses RAM) and opens a new session at once. Proven against the real edge on a real
// Mosquitto:
//   * each reboot gets its new session within one INIT/ACK: the handshake log has one row per
//     session, every one `ok` after exactly one INIT transmission (no retransmission is needed on
//     loopback), with a distinct sessctr;
//   * every frame of every session reaches the edge's sinks exactly once;
//   * with more sessions than the edge keeps per device (5, the paper's), the oldest are evicted
//     first: 7 sessions per device evict sessions 1 and 2. The edge counts 2 evictions per device,
//     and a frame the device sent under session 1 or 2, published again, is refused as
//     `unknown_session` (the edge no longer has it), while one from session 3 (still held) is
//     refused as `replay`, not as unknown.
#include <chrono>
#include <iostream>

#include "fault_bed.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"

namespace dsekp::faults {
namespace {

constexpr int kDevices = 3;
constexpr int kResetEvery = 4;
constexpr int kSessions = 7;  // count = 7 x 4 frames: a reset after frames 4, 8, ..., 24
constexpr int kEdgeSessionLimit = 5;

/// The DATA frame of a client log row, as the device sent it (PROTOCOL.md 5.1, JSON).
std::string data_frame_json(const std::map<std::string, std::string>& row) {
  nlohmann::ordered_json j;
  j["seq"] = std::stoull(row.at("seq"));
  j["dev_id"] = row.at("dev_id");
  j["sessctr_id"] = std::stoull(row.at("sessctr_id"));
  j["ciphertext"] = row.at("ciphertext");
  j["iv"] = row.at("iv");
  j["tag"] = row.at("tag");
  j["sendts_ms"] = std::stoull(row.at("sendts_ms"));
  return j.dump();
}

class DeviceReboots : public FaultBed {
 protected:
  void TearDown() override {
    if (HasFailure() && broker_) std::cerr << "mosquitto:\n" << broker_->log();
    FaultBed::TearDown();
    broker_.reset();
  }
  std::unique_ptr<dsekp::test::MosquittoBroker> broker_;
};

TEST_F(DeviceReboots, EachRebootIsOneHandshakeAndTheOldestSessionsAreEvicted) {
  provision(kDevices);
  std::filesystem::create_directories(dir_.file("broker"));
  broker_ =
      std::make_unique<dsekp::test::MosquittoBroker>(dir_.file("broker"), "allow_anonymous true\n");
  const std::string address = "127.0.0.1:" + std::to_string(broker_->port());
  start_edge(address);
  ASSERT_FALSE(HasFatalFailure());
  start_fleet(address, {"--count", std::to_string(kSessions * kResetEvery), "--interval-ms", "50",
                        "--reset-every", std::to_string(kResetEvery)});
  ASSERT_EQ(wait_fleet(std::chrono::seconds(60)), std::optional<int>(0))
      << dsekp::test::read_file(dir_.file("device.err"));
  const nlohmann::json s = summary();
  EXPECT_EQ(s.at("resets"), kDevices * (kSessions - 1));
  EXPECT_EQ(s.at("handshakes").at("started"), kDevices * kSessions);
  EXPECT_EQ(s.at("handshakes").at("ok"), kDevices * kSessions);
  EXPECT_EQ(s.at("handshakes").at("retransmissions"), 0);

  // One INIT/ACK per session, in the order the device opened them.
  std::map<std::string, std::vector<std::uint64_t>> sessions;  // dev_id -> sessctr in order
  std::uint64_t handshake_ms_max = 0;
  for (const auto& h : read_rows(handshake_log())) {
    EXPECT_EQ(h.at("outcome"), "ok");
    EXPECT_EQ(h.at("attempts"), "1") << "a reboot needed more than one INIT";
    handshake_ms_max = std::max<std::uint64_t>(
        handshake_ms_max, std::stoull(h.at("ack_recv_ms")) - std::stoull(h.at("init_sent_ms")));
    sessions[h.at("dev_id")].push_back(std::stoull(h.at("sessctr_id")));
  }
  ASSERT_EQ(sessions.size(), static_cast<std::size_t>(kDevices));
  for (const auto& [dev, ids] : sessions) {
    ASSERT_EQ(ids.size(), static_cast<std::size_t>(kSessions)) << dev;
    EXPECT_EQ(std::set<std::uint64_t>(ids.begin(), ids.end()).size(), ids.size())
        << dev << " reused a sessctr";
  }

  // The edge counted the evictions: kSessions - 5 per device.
  wait_until([&] { return telemetry_count() >= kDevices * kSessions * kResetEvery; },
             std::chrono::seconds(10));
  const std::string before = metrics();
  EXPECT_EQ(metric_value(before, "dsekp_sessions_evicted_total"),
            kDevices * (kSessions - kEdgeSessionLimit))
      << before;

  // Frames sent again under each device's sessions 1..3 (the first frame of each).
  std::map<std::pair<std::string, std::uint64_t>, std::map<std::string, std::string>> first_frame;
  for (const auto& row : read_rows(client_log()))
    first_frame.emplace(std::make_pair(row.at("dev_id"), std::stoull(row.at("sessctr_id"))), row);
  dsekp::test::MqttTestClient attacker("fault-replayer");
  ASSERT_EQ(attacker.connect(broker_->port(), "", ""), std::optional<int>(0));
  for (const auto& [dev, ids] : sessions)
    for (int k = 0; k < 3; ++k)
      ASSERT_TRUE(attacker.publish("dsekp/data", data_frame_json(first_frame.at({dev, ids[k]}))));
  const double unknown_before =
      std::max(0.0, metric_value(before, "dsekp_rejections_total{reason=\"unknown_session\"}"));
  const double replay_before =
      std::max(0.0, metric_value(before, "dsekp_rejections_total{reason=\"replay\"}"));
  std::string after;
  wait_until(
      [&] {
        after = metrics();
        return metric_value(after, "dsekp_rejections_total{reason=\"unknown_session\"}") -
                       unknown_before >=
                   2 * kDevices &&
               metric_value(after, "dsekp_rejections_total{reason=\"replay\"}") - replay_before >=
                   kDevices;
      },
      std::chrono::seconds(10));
  // Sessions 1 and 2 of every device are gone (unknown), session 3 is still held (replay).
  EXPECT_EQ(
      metric_value(after, "dsekp_rejections_total{reason=\"unknown_session\"}") - unknown_before,
      2 * kDevices)
      << after;
  EXPECT_EQ(metric_value(after, "dsekp_rejections_total{reason=\"replay\"}") - replay_before,
            kDevices)
      << after;

  const Ledger l = settle_and_compare();
  EXPECT_TRUE(l.exactly_once()) << l.describe();
  EXPECT_EQ(l.sent, static_cast<std::size_t>(kDevices * kSessions * kResetEvery));
  std::cout << "[ FIGURE ] device reboots: " << kDevices << " devices x " << kSessions
            << " sessions, " << s.at("resets") << " resets, handshakes ok "
            << s.at("handshakes").at("ok") << " with 1 INIT each (slowest INIT->ACK "
            << handshake_ms_max << " ms), evicted "
            << metric_value(before, "dsekp_sessions_evicted_total") << "; " << l.describe() << "\n";
}

}  // namespace
}  // namespace dsekp::faults
