// INIT freshness beyond the timestamp window: withheld INITs, replays that must not cost the
// device its budget, an INIT that outlived the window while the edge was away, and the device's
// rule that `t` never goes backwards. Every backend pairing.
#include <gtest/gtest.h>

#include "protocol_fixture.hpp"

namespace dsekp::testing {
namespace {

class InitFreshness : public ProtocolTest {
 protected:
  Error edge_init(const InitFrame& init, std::uint64_t now_ms, AckFrame* ack = nullptr) {
    InitOutcome out;
    const Error e = accept_init(init, now_ms, out);
    if (ack != nullptr) *ack = out.ack;
    return e;
  }
  Error open(const DataFrame& f, std::uint64_t now_ms) {
    std::vector<std::uint8_t> pt(kMaxPayloadSize);
    DataOutcome out;
    return edge_.open_data(f, state_, now_ms, pt, out);
  }
};

TEST_P(InitFreshness, WithheldOlderInitCannotDisplaceTheLiveHandshake) {
  // An attacker on the broker holds back INIT1; the device reboots and completes INIT2; then
  // INIT1 is released, still inside the timestamp window and never seen by the edge.
  DeviceSession first_boot(device_crypto_, credentials_);
  InitFrame withheld;
  ASSERT_EQ(first_boot.start_handshake(kNowS, device_rng_, withheld), Error::ok);

  DeviceSession second_boot(device_crypto_, credentials_);
  InitFrame init;
  ASSERT_EQ(second_boot.start_handshake(kNowS + 20, device_rng_, init), Error::ok);
  AckFrame ack;
  ASSERT_EQ(edge_init(init, kNowMs + 20'000, &ack), Error::ok);
  ASSERT_EQ(second_boot.handle_ack(ack), Error::ok);

  EXPECT_EQ(edge_init(withheld, kNowMs + 21'000), Error::superseded_init);
  DataFrame frame;
  ASSERT_EQ(second_boot.seal(as_bytes("{}"), kNowMs + 22'000, frame), Error::ok);
  EXPECT_EQ(open(frame, kNowMs + 22'000), Error::ok);  // the live session was not displaced
}

TEST_P(InitFreshness, ReplaysDoNotUseUpTheDeviceBudget) {
  EdgeConfig config = make_edge_config(credentials_);
  config.init_rate = {2, 3'600'000};  // two INITs per hour
  EdgeProtocol edge(edge_crypto_, config);
  DeviceSession device(device_crypto_, credentials_);
  InitOutcome out;
  InitFrame old_init, pending_init;
  ASSERT_EQ(device.start_handshake(kNowS, device_rng_, old_init), Error::ok);
  ASSERT_EQ(edge.handle_init(old_init, credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
            Error::ok);
  ASSERT_EQ(device.start_handshake(kNowS + 1, device_rng_, pending_init), Error::ok);
  ASSERT_EQ(edge.handle_init(pending_init, credentials_.dev_secret, state_, kNowMs + 1000,
                             edge_rng_, out),
            Error::ok);
  // The budget is now spent; replays of both INITs, many times, must not make things worse
  // nor be answered with anything new.
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(
        edge.handle_init(old_init, credentials_.dev_secret, state_, kNowMs + 2000, edge_rng_, out),
        Error::superseded_init);
    EXPECT_EQ(edge.handle_init(pending_init, credentials_.dev_secret, state_, kNowMs + 2000,
                               edge_rng_, out),
              Error::ok);
    EXPECT_TRUE(out.retransmission);
  }
  EXPECT_EQ(state_.init_bucket.tokens(), 0u);
}

TEST_P(InitFreshness, UnansweredInitIsAbandonedBeforeItGoesStale) {
  // The edge is unreachable for ten minutes. Retransmitting the same INIT all that time would
  // leave a device that can never get in (its `t` is stale by then); the device must start over.
  DeviceSession device(device_crypto_, credentials_);
  InitFrame init;
  ASSERT_EQ(device.start_handshake(kNowS, device_rng_, init), Error::ok);
  std::uint64_t now = kNowMs;
  ASSERT_EQ(device.note_init_sent(now, device_rng_), Error::ok);
  int restarts = 0;
  const std::uint64_t edge_back_at = kNowMs + 600'000;
  Error last = Error::ok;
  for (int step = 0; step < 2000 && now < kNowMs + 3'600'000; ++step) {
    now += 1000;
    if (device.handshake_expired(now)) {
      ASSERT_EQ(device.start_handshake(static_cast<std::uint32_t>(now / 1000), device_rng_, init),
                Error::ok);
      ++restarts;
    } else if (!device.retransmit_due(now)) {
      continue;
    }
    ASSERT_EQ(device.note_init_sent(now, device_rng_), Error::ok);
    if (now < edge_back_at) continue;  // lost while the edge is away
    AckFrame ack;
    last = edge_init(device.current_init(), now, &ack);
    if (last == Error::ok) {
      ASSERT_EQ(device.handle_ack(ack), Error::ok);
      break;
    }
  }
  EXPECT_TRUE(device.established());
  EXPECT_GE(restarts, 4);  // every 120 s while the edge was away
  EXPECT_LE(now - edge_back_at, 120'000u) << "recovered within one INIT lifetime";
}

// The finding: a device rebooted within one second; an attacker held back the INIT of the first
// boot and released it after the second boot's ACK had reached the device. Were equal seconds
// allowed, it would replace the pending session the device now uses, every later frame would be
// unknown_session, and the device (which rekeys only near seq exhaustion) would never recover.
TEST_P(InitFreshness, AHeldBackInitOfTheSameSecondCannotReplaceTheSessionInUse) {
  DeviceSession first_boot(device_crypto_, credentials_);
  InitFrame withheld;
  ASSERT_EQ(first_boot.start_handshake(kNowS, device_rng_, withheld), Error::ok);
  DeviceSession second_boot(device_crypto_, credentials_);
  InitFrame init;
  ASSERT_EQ(second_boot.start_handshake(kNowS, device_rng_, init), Error::ok);
  ASSERT_EQ(init.t, withheld.t);
  AckFrame ack;
  ASSERT_EQ(edge_init(init, kNowMs + 300, &ack), Error::ok);
  ASSERT_EQ(second_boot.handle_ack(ack), Error::ok);

  EXPECT_EQ(edge_init(withheld, kNowMs + 600), Error::superseded_init);
  DataFrame frame;
  ASSERT_EQ(second_boot.seal(as_bytes("{}"), kNowMs + 700, frame), Error::ok);
  EXPECT_EQ(open(frame, kNowMs + 700), Error::ok);
}

TEST_P(InitFreshness, DeviceTimestampAlwaysGrows) {
  DeviceSession device(device_crypto_, credentials_);
  InitFrame a, b, c;
  ASSERT_EQ(device.start_handshake(kNowS, device_rng_, a), Error::ok);
  ASSERT_EQ(device.start_handshake(kNowS - 50, device_rng_, b), Error::ok);  // clock stepped back
  EXPECT_EQ(b.t, a.t + 1);
  ASSERT_EQ(device.start_handshake(kNowS + 1, device_rng_, c), Error::ok);  // the same second
  EXPECT_EQ(c.t, a.t + 2);
  // What a device persists across a reboot: the new session goes on from there.
  DeviceSession rebooted(device_crypto_, credentials_);
  rebooted.restore_last_init_t(device.last_init_t());
  ASSERT_EQ(rebooted.start_handshake(kNowS + 1, device_rng_, b), Error::ok);
  EXPECT_EQ(b.t, c.t + 1);
  AckFrame ack;
  ASSERT_EQ(edge_init(c, kNowMs + 1000, &ack), Error::ok);
  EXPECT_EQ(edge_init(b, kNowMs + 1000, &ack), Error::ok) << "a later t is accepted";

  DeviceConfig clockless;
  clockless.clockless = true;
  DeviceSession counter_device(device_crypto_, credentials_, clockless);
  ASSERT_EQ(counter_device.start_handshake(5, device_rng_, a), Error::ok);
  ASSERT_EQ(counter_device.start_handshake(5, device_rng_, b), Error::ok);
  EXPECT_EQ(a.t, 5u);
  EXPECT_EQ(b.t, 6u);  // a clockless device's counter strictly grows
}

INSTANTIATE_TEST_SUITE_P(Backends, InitFreshness, all_backend_pairs(), pair_name);

}  // namespace
}  // namespace dsekp::testing
