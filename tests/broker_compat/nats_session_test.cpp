// The edge's persistent session on NATS: NATS keeps an MQTT 3.1.1 session with clean_session =
// false in JetStream. (1) The edge is stopped while PSK devices send at QoS 1, then restarted:
// are the queued frames delivered? (2) The edge is SIGKILLed in the middle of a DSEKP run and
// restarted: is every frame in the sinks exactly once (redelivered frames refused as replays)?
// (3) NATS itself is restarted while it holds frames queued for the stopped edge: does JetStream
// keep them?
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "fleet_fixture.hpp"

namespace dsekp::broker_compat {
namespace {

using NatsSession = NatsFleetTest;

TEST_F(NatsSession, FramesSentWhileTheEdgeIsStoppedAreDeliveredAfterItsRestart) {
  provision(5);
  start_edge("3.1.1");  // creates the edge's session and its subscriptions on NATS
  ASSERT_EQ(edge_->terminate(), std::optional<int>(0));
  const auto r =
      run_devices({"--mode", "psk", "--qos", "1", "--count", "10", "--interval-ms", "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary().at("packets_acked"), 50);  // NATS acknowledged all 50 with no edge there
  // The backlog comes before the SUBACKs: wait for the connection, not the ready file.
  ASSERT_TRUE(edge_->start(false));
  EXPECT_TRUE(wait_until([&] { return telemetry_rows() >= 50; }, std::chrono::seconds(15)))
      << telemetry_rows() << " of 50";
  EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
  expect_every_frame_once("psk", 50);
}

TEST_F(NatsSession, EdgeKilledMidRunAndRestartedLosesNothingAndAcceptsNothingTwice) {
  const std::int64_t at_kill = kill_and_restart_mid_run();
  std::cerr << "[ figures  ] telemetry rows at the kill: " << at_kill << " of 200\n";
}

// NATS keeps MQTT sessions and their QoS 1 messages in JetStream (file storage here), so a
// NATS restart (SIGTERM, same store dir) loses neither the edge's session nor its backlog.
// Mosquitto does the same only with `persistence true` (its test broker runs without).
TEST_F(NatsSession, QueuedFramesSurviveANatsRestart) {
  provision(5);
  start_edge("3.1.1");
  ASSERT_EQ(edge_->terminate(), std::optional<int>(0));
  const auto r =
      run_devices({"--mode", "psk", "--qos", "1", "--count", "10", "--interval-ms", "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary().at("packets_acked"), 50);
  nats_->restart();
  ASSERT_TRUE(edge_->start(false));
  EXPECT_TRUE(wait_until([&] { return telemetry_rows() >= 50; }, std::chrono::seconds(15)))
      << telemetry_rows() << " of 50";
  EXPECT_EQ(edge_->terminate(), std::optional<int>(0));
  expect_every_frame_once("psk", 50);
}

}  // namespace
}  // namespace dsekp::broker_compat
