// Broker faults: Mosquitto (persistence on, its own persistence folder) is killed mid-stream while
// the real edge and a fleet of 10 `dsekp device`s stream DATA at QoS 1, and restarted on the same
// port 1.5 s later. The devices and the edge reconnect on their own.
//
// What Mosquitto promises (mosquitto.conf(5)): with `persistence true` the in-memory database
// (retained messages, persistent sessions such as the edge's, and the messages queued for them)
// is written to disk every `autosave_interval` seconds, or after that many changes with
// `autosave_on_changes true`, and when the broker shuts down cleanly (SIGTERM/SIGINT). Hence:
//   * SIGTERM: the database is saved on the way out, so every frame the broker acknowledged to
//     a device and had not yet delivered to the edge is delivered after the restart; frames it had
//     not acknowledged are resent by the devices' MQTT client after they reconnect. Asserted:
//     every frame exactly once.
//   * SIGKILL: only the last save survives. A frame the broker acknowledged after its last save
//     and had not yet handed to the edge is lost for good (the device forgot it at the PUBACK).
//     With `autosave_interval 1` + `autosave_on_changes true` (save after every change) the
//     window is one loop iteration of the broker. Asserted: nothing doubled, nothing unexpected,
//     every frame sent after the restart delivered, every lost frame sent before the kill; the
//     number lost is measured and printed.
// The recovery time (broker accepting connections again -> first frame the edge accepted after
// it) is printed, and only bounded generously.
#include <signal.h>

#include <chrono>
#include <iostream>

#include "fault_bed.hpp"
#include "persistent_broker.hpp"

namespace dsekp::faults {
namespace {

using dsekp::test::PersistentBrokerOptions;

std::uint64_t unix_ms() {
  return edge::testing::unix_ms_now();
}

struct RestartFigures {
  Ledger ledger;
  std::uint64_t kill_ms = 0;
  std::uint64_t up_ms = 0;
  std::uint64_t first_after_ms = 0;  // first recvts_ms at or after up_ms (0: none)
  std::size_t lost_after_restart = 0;
  std::size_t lost_after_kill = 0;
  std::size_t queued = 0;  // frames sent while the edge was stopped, before the kill
};

class BrokerRestart : public FaultBed {
 protected:
  void TearDown() override {
    if (HasFailure() && broker_) std::cerr << "mosquitto:\n" << broker_->log();
    FaultBed::TearDown();
    broker_.reset();
  }

  /// 10 devices x 80 frames, 100 ms apart, QoS 1; the broker is killed with `sig` once the edge
  /// holds 200 frames and restarted 1.5 s later. With `edge_down` the edge is stopped (SIGTERM)
  /// 1.5 s before the kill, so that the broker holds a queue of frames for the edge's persistent
  /// session when it dies, and started again once the broker is back.
  RestartFigures run(int sig, PersistentBrokerOptions options, bool edge_down = false) {
    RestartFigures f;
    provision(10);
    std::filesystem::create_directories(dir_.file("broker"));
    broker_ = std::make_unique<dsekp::test::PersistentBroker>(dir_.file("broker"), options);
    start_edge(broker_->address());
    if (HasFatalFailure()) return f;
    start_fleet(broker_->address(), {"--count", "80", "--interval-ms", "100", "--qos", "1",
                                     "--keepalive-s", "5", "--give-up-s", "30"});
    EXPECT_TRUE(wait_until([&] { return telemetry_count() >= 200; }, std::chrono::seconds(20)))
        << "the stream did not start: " << telemetry_count();
    std::uint64_t edge_stopped_ms = 0;
    if (edge_down) {
      EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
      edge_stopped_ms = unix_ms();
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    }
    f.kill_ms = unix_ms();
    EXPECT_EQ(broker_->kill(sig), std::optional<int>(sig == SIGKILL ? 128 + SIGKILL : 0));
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_TRUE(broker_->restart());
    f.up_ms = unix_ms();
    if (edge_down) {
      EXPECT_TRUE(edge_->start());
    }
    const auto code = wait_fleet(std::chrono::seconds(60));
    EXPECT_EQ(code, std::optional<int>(0)) << dsekp::test::read_file(dir_.file("device.err"));
    const nlohmann::json s = summary();
    EXPECT_GE(s.value("disconnects", 0), 10) << "every device should have lost its connection";
    EXPECT_EQ(s.value("packets_acked", -1), s.value("packets_sent", -2));
    EXPECT_EQ(s.at("handshakes").value("ok", 0), 10);
    f.ledger = settle_and_compare();
    for (const auto& row : read_rows(server_log())) {
      const std::uint64_t t = std::stoull(row.at("recvts_ms"));
      if (t >= f.up_ms && (f.first_after_ms == 0 || t < f.first_after_ms)) f.first_after_ms = t;
    }
    std::map<PacketId, std::uint64_t> sent_at;
    for (const auto& row : read_rows(client_log())) {
      const std::uint64_t t = std::stoull(row.at("sendts_ms"));
      sent_at[packet_of(row)] = t;
      if (edge_down && t >= edge_stopped_ms && t <= f.kill_ms) ++f.queued;
    }
    for (const PacketId& p : f.ledger.lost) {
      if (sent_at[p] >= f.up_ms) ++f.lost_after_restart;
      if (sent_at[p] > f.kill_ms) ++f.lost_after_kill;
    }
    if (!edge_down) {
      EXPECT_NE(edge_->all_stderr().find("connection lost"), std::string::npos)
          << "the edge never noticed the broker go";
    }
    std::cout << "[ FIGURE ] broker " << (sig == SIGKILL ? "SIGKILL" : "SIGTERM")
              << " (autosave_interval " << options.autosave_interval
              << (options.autosave_on_changes ? " changes" : " s") << ")"
              << (edge_down ? ", edge down, " + std::to_string(f.queued) +
                                  " frames sent while it was down"
                            : std::string(", edge up"))
              << ": lost frames sent after the kill " << f.lost_after_kill << ", after the restart "
              << f.lost_after_restart << "; down " << (f.up_ms - f.kill_ms)
              << " ms; broker up -> first frame accepted "
              << (f.first_after_ms > 0 ? std::to_string(f.first_after_ms - f.up_ms) + " ms"
                                       : std::string("never"))
              << "; device disconnects " << s.value("disconnects", 0) << ", connect failures "
              << s.value("connect_failures", 0) << "; " << f.ledger.describe() << "\n";
    return f;
  }

  std::unique_ptr<dsekp::test::PersistentBroker> broker_;
};

TEST_F(BrokerRestart, SigtermLosesAndDoublesNothing) {
  const RestartFigures f = run(SIGTERM, {});
  if (HasFatalFailure()) return;
  EXPECT_TRUE(f.ledger.exactly_once()) << f.ledger.describe();
  EXPECT_GE(f.ledger.sent, 800u);
  ASSERT_NE(f.first_after_ms, 0u) << "no frame accepted after the restart";
  // Reconnect backoff is 1 s doubling (devices, edge): generous, not a speed claim.
  EXPECT_LT(f.first_after_ms - f.up_ms, 15'000u);
}

TEST_F(BrokerRestart, SigkillLosesAtMostWhatWasAckedAfterTheLastSave) {
  PersistentBrokerOptions options;
  options.autosave_interval = 1;  // save after every change
  options.autosave_on_changes = true;
  const RestartFigures f = run(SIGKILL, options);
  if (HasFatalFailure()) return;
  const Ledger& l = f.ledger;
  EXPECT_EQ(l.client_doubles, 0u);
  EXPECT_EQ(l.doubled_csv, 0u) << l.describe();
  EXPECT_EQ(l.doubled_telemetry, 0u) << l.describe();
  EXPECT_EQ(l.unexpected, 0u) << l.describe();
  EXPECT_EQ(l.lost_csv, l.lost_telemetry) << "the CSV and the telemetry table disagree";
  EXPECT_EQ(f.lost_after_kill, 0u) << "a frame sent after the kill was lost: " << l.describe();
  EXPECT_EQ(f.lost_after_restart, 0u) << l.describe();
  EXPECT_GE(l.sent, 800u);
  ASSERT_NE(f.first_after_ms, 0u) << "no frame accepted after the restart";
  EXPECT_LT(f.first_after_ms - f.up_ms, 15'000u);
}

TEST_F(BrokerRestart, SigtermWithTheEdgeDownKeepsTheEdgesQueue) {
  const RestartFigures f = run(SIGTERM, {}, /*edge_down=*/true);
  if (HasFatalFailure()) return;
  EXPECT_GT(f.queued, 50u) << "the broker held no queue for the edge: the case proves nothing";
  EXPECT_TRUE(f.ledger.exactly_once()) << f.ledger.describe();
  EXPECT_GE(f.ledger.sent, 800u);
}

/// With a save after every change, a SIGKILL loses at most what changed in the broker's last
/// loop iteration; what it loses is printed. Asserted: nothing doubled or unexpected, nothing
/// sent after the kill lost, and most of the queue kept.
TEST_F(BrokerRestart, SigkillWithTheEdgeDownKeepsTheLastSavedQueue) {
  PersistentBrokerOptions options;
  options.autosave_interval = 1;
  options.autosave_on_changes = true;
  const RestartFigures f = run(SIGKILL, options, /*edge_down=*/true);
  if (HasFatalFailure()) return;
  const Ledger& l = f.ledger;
  EXPECT_GT(f.queued, 50u);
  EXPECT_EQ(l.doubled_csv + l.doubled_telemetry + l.unexpected + l.client_doubles, 0u)
      << l.describe();
  EXPECT_EQ(f.lost_after_kill, 0u) << l.describe();
  EXPECT_LE(l.lost_telemetry * 2, f.queued) << l.describe();
}

/// Not in the suite (a measurement, run by hand with --gtest_also_run_disabled_tests): the same
/// with Mosquitto's default autosave (every 1800 s). Nothing was ever saved, so a SIGKILL loses
/// the whole queue held for the edge. (The restarted broker no longer knows the edge's session
/// either, so a frame published after the restart and before the edge has subscribed again
/// would have no subscriber; here the devices are still reconnecting then.) Measured: 154 and
/// 159 of 800 lost, every one sent while the edge was down and before the kill.
TEST_F(BrokerRestart, DISABLED_SigkillWithTheEdgeDownAndDefaultAutosave) {
  const RestartFigures f = run(SIGKILL, {}, /*edge_down=*/true);
  if (HasFatalFailure()) return;
  EXPECT_EQ(f.ledger.unexpected + f.ledger.doubled_telemetry, 0u) << f.ledger.describe();
}

}  // namespace
}  // namespace dsekp::faults
