// Handshake between DeviceSession and EdgeProtocol: INIT/ACK, retransmission, freshness, forged
// and replayed messages, rate limiting. Runs on every device/edge backend pair.
#include <gtest/gtest.h>

#include "protocol_fixture.hpp"

namespace dsekp::testing {
namespace {

class Handshake : public ProtocolTest {
 protected:
  Handshake() : device_(device_crypto_, credentials_) {}

  InitFrame start(std::uint32_t now_s = kNowS) {
    InitFrame init;
    EXPECT_EQ(device_.start_handshake(now_s, device_rng_, init), Error::ok);
    return init;
  }
  Error edge_init(const InitFrame& init, AckFrame* ack = nullptr, bool* resent = nullptr,
                  std::uint64_t now_ms = kNowMs) {
    InitOutcome out;
    const Error e = accept_init(init, now_ms, out);
    if (ack != nullptr) *ack = out.ack;
    if (resent != nullptr) *resent = out.retransmission;
    return e;
  }

  DeviceSession device_;
};

TEST_P(Handshake, InitAckEstablishesBothSidesInBothEncodings) {
  for (Encoding enc : {Encoding::json, Encoding::compact}) {
    const InitFrame init = wire(start(), enc);
    AckFrame ack;
    ASSERT_EQ(edge_init(init, &ack), Error::ok);
    EXPECT_TRUE(state_.has_pending);
    EXPECT_EQ(state_.established_count, 0u);  // pending until key confirmation
    ASSERT_EQ(device_.handle_ack(wire(ack, enc)), Error::ok);
    EXPECT_TRUE(device_.established());
    EXPECT_FALSE(device_.handshake_pending());
    EXPECT_EQ(device_.sessctr(), init.sessctr);
  }
}

TEST_P(Handshake, RetransmittedInitGetsTheSameAck) {
  const InitFrame init = start();
  AckFrame first, second;
  bool resent = true;
  ASSERT_EQ(edge_init(init, &first, &resent), Error::ok);
  EXPECT_FALSE(resent);
  ASSERT_EQ(edge_init(device_.current_init(), &second, &resent), Error::ok);
  EXPECT_TRUE(resent);
  EXPECT_TRUE(first.edge_nonce.equals(second.edge_nonce));
  EXPECT_TRUE(first.proof.equals(second.proof));
  EXPECT_EQ(device_.handle_ack(second), Error::ok);
}

TEST_P(Handshake, ReplayedInitIsRejectedOnceSessionMovedOn) {
  const InitFrame old_init = start();
  AckFrame ack;
  ASSERT_EQ(edge_init(old_init), Error::ok);
  // The device reboots and starts again: the old INIT is no longer the pending one.
  ASSERT_EQ(edge_init(start()), Error::ok);
  // The new INIT's `t` is greater (a device's `t` always grows): the old one is superseded.
  EXPECT_EQ(edge_init(old_init), Error::superseded_init);
}

TEST_P(Handshake, StaleTimestampsAreRejected) {
  // One device per INIT: a DeviceSession never lets its own `t` go backwards.
  const auto init_at = [&](std::uint32_t t) {
    DeviceSession device(device_crypto_, credentials_);
    InitFrame init;
    EXPECT_EQ(device.start_handshake(t, device_rng_, init), Error::ok);
    return init;
  };
  EXPECT_EQ(edge_init(init_at(kNowS - 301)), Error::stale_timestamp);
  EXPECT_EQ(edge_init(init_at(kNowS + 301)), Error::stale_timestamp);
  EXPECT_EQ(edge_init(init_at(kNowS - 300)), Error::ok);
  EXPECT_EQ(edge_init(init_at(kNowS + 300)), Error::ok);
}

TEST_P(Handshake, ClocklessDevicesNeedMaxSkewZero) {
  EdgeConfig config = make_edge_config(credentials_);
  config.max_skew_s = 0;
  EdgeProtocol clockless(edge_crypto_, config);
  InitOutcome out;
  EXPECT_EQ(
      clockless.handle_init(start(0), credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
      Error::ok);
  EXPECT_EQ(edge_init(start(0)), Error::stale_timestamp);  // default config checks the clock
}

TEST_P(Handshake, AnyChangedInitFieldFailsTheProof) {
  const InitFrame good = start();
  InitFrame f = good;
  f.sessctr ^= 1;
  EXPECT_EQ(edge_init(f), Error::bad_proof);
  f = good;
  f.t -= 1;
  EXPECT_EQ(edge_init(f), Error::bad_proof);
  f = good;
  f.dev_nonce.data()[11] ^= 0x80;
  EXPECT_EQ(edge_init(f), Error::bad_proof);
  f = good;
  f.proof.data()[0] ^= 1;
  EXPECT_EQ(edge_init(f), Error::bad_proof);
  f = good;
  ASSERT_EQ(f.dev_id.assign("esp32-02"), Error::ok);
  EXPECT_EQ(edge_init(f), Error::bad_proof);
  EXPECT_FALSE(state_.has_pending);  // nothing was created by any of them
  EXPECT_EQ(edge_init(good), Error::ok);
}

TEST_P(Handshake, InitUnderAnotherSecretFailsTheProof) {
  DeviceCredentials impostor = make_credentials("esp32-01", 0x22);
  DeviceSession fake(device_crypto_, impostor);
  InitFrame init;
  ASSERT_EQ(fake.start_handshake(kNowS, device_rng_, init), Error::ok);
  EXPECT_EQ(edge_init(init), Error::bad_proof);
}

TEST_P(Handshake, DeviceRejectsForgedOrMismatchedAcks) {
  AckFrame stray;
  EXPECT_EQ(device_.handle_ack(stray), Error::no_pending_handshake);

  const InitFrame init = start();
  AckFrame ack;
  ASSERT_EQ(edge_init(init, &ack), Error::ok);

  AckFrame forged = ack;
  forged.proof.data()[15] ^= 1;
  EXPECT_EQ(device_.handle_ack(forged), Error::bad_ack_proof);
  forged = ack;
  forged.edge_nonce.data()[0] ^= 1;  // an attacker's nonce would give keys the edge lacks
  EXPECT_EQ(device_.handle_ack(forged), Error::bad_ack_proof);
  forged = ack;
  forged.status = 1;
  EXPECT_EQ(device_.handle_ack(forged), Error::bad_ack_proof);
  forged = ack;
  forged.sessctr ^= 1;
  EXPECT_EQ(device_.handle_ack(forged), Error::ack_mismatch);
  forged = ack;
  ASSERT_EQ(forged.dev_id.assign("esp32-02"), Error::ok);
  EXPECT_EQ(device_.handle_ack(forged), Error::ack_mismatch);

  EXPECT_FALSE(device_.established());
  DataFrame frame;
  EXPECT_EQ(device_.seal(as_bytes("x"), 1, frame), Error::no_session);
  EXPECT_EQ(device_.handle_ack(ack), Error::ok);  // the genuine ACK still works
}

TEST_P(Handshake, AckFromAnEdgeWithAnotherSecretIsRejected) {
  const InitFrame init = start();
  DeviceCredentials other = make_credentials("esp32-01", 0x33);
  EdgeDeviceState other_state;
  InitOutcome out;
  // An edge that does not know this device's secret cannot even accept the INIT...
  EXPECT_EQ(edge_.handle_init(init, other.dev_secret, other_state, kNowMs, edge_rng_, out),
            Error::bad_proof);
  // ...and an ACK built under other keys does not verify at the device.
  HandshakeKeys keys;
  const InitParams params{&init.dev_id, init.sessctr, init.t, init.dev_nonce};
  ASSERT_EQ(derive_handshake_keys(edge_crypto_, other.dev_secret, other.edge_salt, params, keys),
            Error::ok);
  AckFrame forged;
  forged.dev_id = init.dev_id;
  forged.sessctr = init.sessctr;
  ASSERT_EQ(
      compute_ack_proof(edge_crypto_, keys.k_ack, init.proof, forged.edge_nonce, 0, forged.proof),
      Error::ok);
  EXPECT_EQ(device_.handle_ack(forged), Error::bad_ack_proof);
}

TEST_P(Handshake, AckAfterEstablishmentIsUnexpected) {
  AckFrame ack;
  ASSERT_EQ(edge_init(start(), &ack), Error::ok);
  ASSERT_EQ(device_.handle_ack(ack), Error::ok);
  EXPECT_EQ(device_.handle_ack(ack), Error::no_pending_handshake);
}

TEST_P(Handshake, PerDeviceRateLimitRefills) {
  EdgeConfig config = make_edge_config(credentials_);
  config.init_rate = {3, 10'000};
  EdgeProtocol limited(edge_crypto_, config);
  InitOutcome out;
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(limited.handle_init(start(), credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
              Error::ok);
  EXPECT_EQ(limited.handle_init(start(), credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
            Error::rate_limited);
  EXPECT_EQ(limited.handle_init(start(), credentials_.dev_secret, state_, kNowMs + 10'000,
                                edge_rng_, out),
            Error::ok);
}

TEST_P(Handshake, AdmissionHookCanRefuse) {
  struct Refuse : InitAdmissionHook {
    int calls = 0;
    bool admit_init(const DevId&, std::uint64_t) noexcept override {
      ++calls;
      return false;
    }
  } hook;
  EdgeConfig config = make_edge_config(credentials_);
  config.admission_hook = &hook;
  EdgeProtocol hooked(edge_crypto_, config);
  InitOutcome out;
  EXPECT_EQ(hooked.handle_init(start(), credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
            Error::rate_limited);
  EXPECT_EQ(hook.calls, 1);
}

TEST_P(Handshake, FullReplayCacheFailsClosedWithAClock) {
  EdgeConfig config = make_edge_config(credentials_);
  config.init_rate.capacity = 0;  // unlimited: only the replay cache bounds INITs
  EdgeProtocol edge(edge_crypto_, config);
  InitOutcome out;
  for (std::size_t i = 0; i < kInitReplayCacheSize; ++i)
    ASSERT_EQ(edge.handle_init(start(), credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
              Error::ok)
        << i;
  EXPECT_EQ(edge.handle_init(start(), credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
            Error::rate_limited);
  // Entries expire once their INIT could no longer pass the timestamp check.
  EXPECT_EQ(edge.handle_init(start(kNowS + 301), credentials_.dev_secret, state_, kNowMs + 301'000,
                             edge_rng_, out),
            Error::ok);
}

TEST_P(Handshake, ClocklessReplaysAreRefusedHoweverManyWereRecorded) {
  // A clockless edge (max_skew 0) relies on the device's counter, not on the 32-entry cache: an
  // attacker replaying any number of recorded INITs in rotation gets nothing, and in particular
  // cannot use up the device's INIT budget (all replays are refused before the token bucket).
  EdgeConfig config = make_edge_config(credentials_);
  config.max_skew_s = 0;
  config.init_rate = {3, 3'600'000};
  EdgeProtocol edge(edge_crypto_, config);
  DeviceConfig device_config;
  device_config.clockless = true;
  DeviceSession device(device_crypto_, credentials_, device_config);
  std::vector<InitFrame> recorded;
  InitOutcome out;
  for (std::uint32_t counter = 1; counter <= 2; ++counter) {
    InitFrame init;
    ASSERT_EQ(device.start_handshake(counter, device_rng_, init), Error::ok);
    ASSERT_EQ(edge.handle_init(init, credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
              Error::ok);
    recorded.push_back(init);
  }
  for (int round = 0; round < 50; ++round) {
    for (const InitFrame& old : recorded) {
      const Error e =
          edge.handle_init(old, credentials_.dev_secret, state_, kNowMs, edge_rng_, out);
      // The newest one is still pending: it gets its own ACK back, nothing else changes.
      if (&old == &recorded.back()) {
        EXPECT_EQ(e, Error::ok);
        EXPECT_TRUE(out.retransmission);
      } else {
        EXPECT_EQ(e, Error::superseded_init);
      }
    }
  }
  InitFrame fresh;
  ASSERT_EQ(device.start_handshake(3, device_rng_, fresh), Error::ok);
  EXPECT_EQ(edge.handle_init(fresh, credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
            Error::ok);
}

TEST_P(Handshake, ClocklessCounterMustGrow) {
  EdgeConfig config = make_edge_config(credentials_);
  config.max_skew_s = 0;
  EdgeProtocol edge(edge_crypto_, config);
  InitOutcome out;
  // Two devices objects = a reboot that lost the counter: the same counter again is refused.
  ASSERT_EQ(edge.handle_init(start(7), credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
            Error::ok);
  DeviceSession rebooted(device_crypto_, credentials_);
  InitFrame init;
  ASSERT_EQ(rebooted.start_handshake(7, device_rng_, init), Error::ok);
  EXPECT_EQ(edge.handle_init(init, credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
            Error::superseded_init);
  ASSERT_EQ(rebooted.start_handshake(8, device_rng_, init), Error::ok);
  EXPECT_EQ(edge.handle_init(init, credentials_.dev_secret, state_, kNowMs, edge_rng_, out),
            Error::ok);
}

TEST_P(Handshake, RetransmissionScheduleBacksOffWithJitter) {
  DeviceConfig config;
  config.retransmit_initial_ms = 1000;
  config.retransmit_max_ms = 8000;
  DeviceSession device(device_crypto_, credentials_, config);
  InitFrame init;
  ASSERT_EQ(device.start_handshake(kNowS, device_rng_, init), Error::ok);
  std::uint64_t now = 0;
  EXPECT_TRUE(device.retransmit_due(now));
  std::uint32_t expected_ceiling = 1000;
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(device.note_init_sent(now, device_rng_), Error::ok);
    EXPECT_FALSE(device.retransmit_due(now + expected_ceiling / 2 - 1)) << i;
    EXPECT_TRUE(device.retransmit_due(now + expected_ceiling)) << i;
    now += expected_ceiling;
    expected_ceiling = std::min<std::uint32_t>(expected_ceiling * 2, 8000);
  }
  // The INIT to resend is bytes-identical.
  EXPECT_TRUE(device.current_init().proof.equals(init.proof));
  EXPECT_TRUE(device.current_init().dev_nonce.equals(init.dev_nonce));
}

INSTANTIATE_TEST_SUITE_P(Backends, Handshake, all_backend_pairs(), pair_name);

}  // namespace
}  // namespace dsekp::testing
