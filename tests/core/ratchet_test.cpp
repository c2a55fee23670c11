// The ratchet (PROTOCOL.md 6.6): a device in ratchet mode replaces its long-term secret after
// every session it takes, the edge follows when it learns so, and a secret taken from either
// side later does not open the sessions before it. Each test runs a device and an edge on every
// pairing of the two crypto backends, frames carried through the wire codecs.
#include <gtest/gtest.h>

#include <optional>

#include "dsekp/key_schedule.hpp"
#include "protocol_fixture.hpp"
#include "tests/support/memory_secret_store.hpp"

namespace dsekp::testing {
namespace {

using FlashSecretStore = dsekp::test::MemorySecretStore;

/// What an eavesdropper on the broker keeps of one session.
struct RecordedSession {
  InitFrame init;
  AckFrame ack;
  DataFrame data;
  std::string plaintext;
};

class Ratchet : public ProtocolTest {
 protected:
  Ratchet() { EXPECT_TRUE(enable_ratchet(state_, credentials_.dev_id, credentials_.dev_secret)); }

  /// A device's configuration at boot: a new DeviceRatchet (what it held in RAM is gone).
  DeviceConfig ratchet_config() {
    ratchets_.push_back(std::make_unique<DeviceRatchet>(flash_));
    DeviceConfig c;
    c.ratchet = ratchets_.back().get();
    return c;
  }
  std::unique_ptr<DeviceSession> boot_device() {
    return std::make_unique<DeviceSession>(device_crypto_, flash_.read(credentials_),
                                           ratchet_config());
  }

  /// One INIT -> ACK, every frame through the codecs; `t` grows by a second each time.
  Error handshake(DeviceSession& device, InitOutcome& out, Encoding enc = Encoding::compact) {
    InitFrame init;
    if (Error e = device.start_handshake(next_t_, device_rng_, init); e != Error::ok) return e;
    ++next_t_;
    last_init_ = wire(init, enc);
    if (Error e = accept_init(last_init_, kNowMs, out); e != Error::ok) return e;
    return device.handle_ack(wire(out.ack, enc));
  }

  /// The first DATA frame of the device's session, opened by the edge (key confirmation).
  Error confirm(DeviceSession& device, const std::string& reading, DataOutcome& outcome,
                DataFrame* sent = nullptr) {
    DataFrame frame;
    if (Error e = device.seal(as_bytes(reading), kNowMs, frame); e != Error::ok) return e;
    if (sent != nullptr) *sent = wire(frame, Encoding::compact);
    std::array<std::uint8_t, kMaxPayloadSize> plain{};
    return edge_.open_data(wire(frame, Encoding::compact), state_, kNowMs, plain, outcome);
  }

  /// A whole session as the broker saw it.
  RecordedSession recorded_session(DeviceSession& device, const std::string& reading) {
    RecordedSession r;
    InitOutcome out;
    EXPECT_EQ(handshake(device, out), Error::ok);
    r.init = last_init_;
    r.ack = wire(out.ack, Encoding::compact);
    DataOutcome confirmed;
    EXPECT_EQ(confirm(device, reading, confirmed, &r.data), Error::ok);
    EXPECT_TRUE(confirmed.confirmed_session);
    r.plaintext = reading;
    return r;
  }

  /// The attacker's computation: the session keys from a long-term secret and the recorded
  /// INIT and ACK (PROTOCOL.md section 3), then the recorded DATA frame opened with them.
  Error attack(const RecordedSession& r, const DevSecret& secret, std::string& plaintext) {
    const InitParams params{&r.init.dev_id, r.init.sessctr, r.init.t, r.init.dev_nonce};
    HandshakeKeys keys;
    EdgeSession session;
    if (Error e = derive_handshake_keys(edge_crypto_, secret, credentials_.edge_salt, params, keys);
        e != Error::ok)
      return e;
    if (Error e =
            derive_traffic_keys(edge_crypto_, keys.session_secret, r.ack.edge_nonce, session.keys);
        e != Error::ok)
      return e;
    session.sessctr = r.data.sessctr;
    EdgeProtocol attacker(edge_crypto_, make_edge_config(credentials_));
    std::array<std::uint8_t, kMaxPayloadSize> plain{};
    std::size_t size = 0;
    Error e = attacker.open_established(r.data, session, kNowMs, plain, size);
    plaintext.assign(plain.begin(), plain.begin() + static_cast<std::ptrdiff_t>(size));
    return e;
  }

  DevSecret step(const DevSecret& s, int times = 1) {
    DevSecret out = s.clone();
    for (int i = 0; i < times; ++i)
      EXPECT_EQ(
          derive_next_secret(edge_crypto_, out, credentials_.edge_salt, credentials_.dev_id, out),
          Error::ok);
    return out;
  }

  FlashSecretStore flash_;
  std::vector<std::unique_ptr<DeviceRatchet>> ratchets_;  // of every boot, for the sessions'
                                                          // lifetime
  InitFrame last_init_;
  std::uint32_t next_t_ = kNowS;
};

TEST_P(Ratchet, BothSidesStepOncePerSessionAndStayEqual) {
  auto device = boot_device();
  for (std::uint32_t n = 1; n <= 3; ++n) {
    InitOutcome out;
    ASSERT_EQ(handshake(*device, out), Error::ok);
    EXPECT_EQ(out.ratchet_steps, 0u);
    EXPECT_EQ(device->epoch(), n) << "the device steps at the ACK";
    EXPECT_EQ(state_.ratchet.epoch, n - 1) << "the edge waits for the confirmation";
    DataOutcome confirmed;
    ASSERT_EQ(confirm(*device, "reading", confirmed), Error::ok);
    EXPECT_TRUE(confirmed.ratcheted);
    EXPECT_EQ(state_.ratchet.epoch, n);
    // Later frames of the session step nothing.
    ASSERT_EQ(confirm(*device, "more", confirmed), Error::ok);
    EXPECT_FALSE(confirmed.ratcheted);
  }
  EXPECT_EQ(flash_.writes(), 3) << "one write of the secret per session";
  EXPECT_TRUE(constant_time_equal(state_.ratchet.secret.view(),
                                  flash_.read(credentials_).dev_secret.view()));
  EXPECT_TRUE(
      constant_time_equal(state_.ratchet.secret.view(), step(credentials_.dev_secret, 3).view()));
  EXPECT_FALSE(constant_time_equal(state_.ratchet.secret.view(), credentials_.dev_secret.view()));
}

// The attacker holds every INIT, ACK and DATA frame of the device's first sessions and then
// takes the secret from the device's flash (or from the edge's state) after N more sessions.
TEST_P(Ratchet, ACapturedSecretAfterNRatchetsDoesNotOpenAnEarlierSession) {
  auto device = boot_device();
  std::vector<RecordedSession> recorded;
  for (int i = 0; i < 3; ++i)
    recorded.push_back(recorded_session(*device, "secret " + std::to_string(i)));
  for (int i = 0; i < 2; ++i) (void)recorded_session(*device, "later");
  const DevSecret stolen_from_device = flash_.read(credentials_).dev_secret.clone();
  const DevSecret stolen_from_edge = state_.ratchet.secret.clone();

  for (const RecordedSession& r : recorded) {
    std::string plaintext;
    // The method works: with the secret of the session's epoch it opens the frame. Without the
    // ratchet that secret would be the one on the device for ever.
    ASSERT_EQ(attack(r, credentials_.dev_secret, plaintext) == Error::ok ||
                  attack(r, step(credentials_.dev_secret, 1), plaintext) == Error::ok ||
                  attack(r, step(credentials_.dev_secret, 2), plaintext) == Error::ok,
              true);
    EXPECT_EQ(plaintext, r.plaintext);
    // With either stolen secret, and with any number of further steps of it, it does not.
    for (const DevSecret* stolen : {&stolen_from_device, &stolen_from_edge}) {
      for (int k = 0; k < 8; ++k) {
        EXPECT_EQ(attack(r, step(*stolen, k), plaintext), Error::auth_failed)
            << "session " << r.plaintext << " opened with the stolen secret stepped " << k;
      }
    }
  }
  // What is not claimed: the stolen secret opens the sessions after the theft (no
  // post-compromise security without a key exchange).
  const RecordedSession next = recorded_session(*device, "after the theft");
  std::string plaintext;
  EXPECT_EQ(attack(next, stolen_from_device, plaintext), Error::ok);
  EXPECT_EQ(plaintext, "after the theft");
}

TEST_P(Ratchet, ALostAckChangesNeitherSecret) {
  auto device = boot_device();
  InitFrame init;
  ASSERT_EQ(device->start_handshake(kNowS, device_rng_, init), Error::ok);
  InitOutcome lost;
  ASSERT_EQ(accept_init(init, kNowMs, lost), Error::ok);
  EXPECT_EQ(device->epoch(), 0u);
  EXPECT_EQ(flash_.writes(), 0);
  // The same INIT again: the same ACK, which now arrives.
  InitOutcome again;
  ASSERT_EQ(accept_init(init, kNowMs + 1'000, again), Error::ok);
  EXPECT_TRUE(again.retransmission);
  ASSERT_EQ(device->handle_ack(again.ack), Error::ok);
  EXPECT_EQ(device->epoch(), 1u);
  DataOutcome confirmed;
  ASSERT_EQ(confirm(*device, "x", confirmed), Error::ok);
  EXPECT_EQ(state_.ratchet.epoch, 1u);

  // An INIT abandoned with its ACK lost: the next one is under the same secret, step 0.
  ASSERT_EQ(device->start_handshake(kNowS + 1, device_rng_, init), Error::ok);
  ASSERT_EQ(accept_init(init, kNowMs + 1'000, lost), Error::ok);
  InitOutcome out;
  ASSERT_EQ(handshake(*device, out), Error::ok);
  EXPECT_EQ(out.ratchet_steps, 0u);
  ASSERT_EQ(confirm(*device, "x", confirmed), Error::ok);
  EXPECT_EQ(state_.ratchet.epoch, 2u);
  EXPECT_EQ(device->epoch(), 2u);
}

// The device took the ACK (and stored the next secret) but its first frame never reached the
// edge: lost, or the device lost power before sending it. It boots from the stored secret.
TEST_P(Ratchet, ALostConfirmationIsCaughtUpByTheNextInit) {
  auto device = boot_device();
  InitOutcome out;
  ASSERT_EQ(handshake(*device, out), Error::ok);
  ASSERT_EQ(device->epoch(), 1u);
  device = boot_device();  // power cut: nothing of the session was sent
  EXPECT_EQ(device->epoch(), 1u);
  EXPECT_EQ(state_.ratchet.epoch, 0u);
  ASSERT_EQ(handshake(*device, out), Error::ok);
  EXPECT_EQ(out.ratchet_steps, 1u) << "the INIT verified one step ahead";
  EXPECT_EQ(state_.ratchet.epoch, 1u) << "and the edge dropped the secret the device no longer has";
  DataOutcome confirmed;
  ASSERT_EQ(confirm(*device, "x", confirmed), Error::ok);
  EXPECT_TRUE(confirmed.ratcheted);
  EXPECT_EQ(state_.ratchet.epoch, 2u);
  EXPECT_EQ(device->epoch(), 2u);
  EXPECT_TRUE(constant_time_equal(state_.ratchet.secret.view(),
                                  flash_.read(credentials_).dev_secret.view()));
}

TEST_P(Ratchet, AFailedSecretWriteRefusesTheAckAndKeepsTheOldSecret) {
  auto device = boot_device();
  InitFrame init;
  ASSERT_EQ(device->start_handshake(kNowS, device_rng_, init), Error::ok);
  InitOutcome out;
  ASSERT_EQ(accept_init(init, kNowMs, out), Error::ok);
  flash_.set_failing(true);
  EXPECT_EQ(device->handle_ack(out.ack), Error::secret_store_failed);
  EXPECT_EQ(device->epoch(), 0u);
  EXPECT_TRUE(device->handshake_pending()) << "the INIT stays outstanding";
  EXPECT_FALSE(device->established());
  DataFrame frame;
  EXPECT_EQ(device->seal(as_bytes("x"), kNowMs, frame), Error::no_session)
      << "nothing is sent under a session whose step could be lost";

  // A reboot now finds the old secret, which the edge still holds.
  {
    auto rebooted = boot_device();
    EXPECT_EQ(rebooted->epoch(), 0u);
  }
  // The retransmitted INIT brings the same ACK back; the write succeeds this time.
  flash_.set_failing(false);
  InitOutcome again;
  ASSERT_EQ(accept_init(init, kNowMs + 1'000, again), Error::ok);
  ASSERT_EQ(device->handle_ack(again.ack), Error::ok);
  EXPECT_EQ(device->epoch(), 1u);
  DataOutcome confirmed;
  ASSERT_EQ(confirm(*device, "x", confirmed), Error::ok);
  EXPECT_EQ(state_.ratchet.epoch, 1u);
}

// The edge's state went back in time (a store restored from an older copy): the device is
// several steps ahead. Within the look-ahead the edge catches up; beyond it the device is
// locked out, as PROTOCOL.md 6.6 says, until the operator re-provisions it.
TEST_P(Ratchet, AStateRolledBackWithinTheLookAheadCatchesUp) {
  auto device = boot_device();
  for (int i = 0; i < 4; ++i) (void)recorded_session(*device, "x");
  ASSERT_EQ(device->epoch(), 4u);

  for (std::uint32_t lookahead : {3u, 4u}) {
    EdgeConfig config = make_edge_config(credentials_);
    config.ratchet_lookahead = lookahead;
    EdgeProtocol edge(edge_crypto_, config);
    EdgeDeviceState restored;  // the copy from before the four sessions
    ASSERT_TRUE(enable_ratchet(restored, credentials_.dev_id, credentials_.dev_secret));
    InitFrame init;
    ASSERT_EQ(device->start_handshake(next_t_++, device_rng_, init), Error::ok);
    InitOutcome out;
    const Error e =
        edge.handle_init(init, credentials_.dev_secret, restored, kNowMs, edge_rng_, out);
    if (lookahead < 4) {
      EXPECT_EQ(e, Error::bad_proof);
      EXPECT_EQ(restored.ratchet.epoch, 0u);
      EXPECT_FALSE(restored.has_pending);
    } else {
      ASSERT_EQ(e, Error::ok);
      EXPECT_EQ(out.ratchet_steps, 4u);
      EXPECT_EQ(restored.ratchet.epoch, 4u);
      ASSERT_EQ(device->handle_ack(out.ack), Error::ok);
      EXPECT_EQ(device->epoch(), 5u);
    }
  }
}

TEST_P(Ratchet, ARefusedInitStepsNothing) {
  auto device = boot_device();
  InitOutcome out;
  ASSERT_EQ(handshake(*device, out), Error::ok);
  device = boot_device();  // one step ahead of the edge, as after a lost confirmation
  // An INIT the edge refuses after its proof verified one step ahead (`t` not newer).
  InitFrame init;
  device->restore_last_init_t(0);
  ASSERT_EQ(device->start_handshake(kNowS - 10, device_rng_, init), Error::ok);
  EXPECT_EQ(accept_init(init, kNowMs, out), Error::superseded_init);
  EXPECT_EQ(state_.ratchet.epoch, 0u);
  // A forged one costs the look-ahead and changes nothing either.
  init.proof.mutable_view()[0] ^= 1;
  EXPECT_EQ(accept_init(init, kNowMs, out), Error::bad_proof);
  EXPECT_EQ(state_.ratchet.epoch, 0u);
  ASSERT_EQ(handshake(*device, out), Error::ok);
  EXPECT_EQ(out.ratchet_steps, 1u);
}

// An edge that holds no session of the device (it lost it) asks for a rekey under K_rekey of
// its own secret, which may be one step behind the device's (PROTOCOL.md 6.6).
TEST_P(Ratchet, ARekeyRequestIsAuthenticUnderTheDevicesSecretOrTheOneBefore) {
  auto device = boot_device();
  (void)recorded_session(*device, "x");  // both at epoch 1
  InitOutcome out;
  ASSERT_EQ(handshake(*device, out), Error::ok);  // device at 2, the edge at 1
  DataFrame frame;
  ASSERT_EQ(device->seal(as_bytes("x"), kNowMs, frame), Error::ok);
  const auto request_under = [&](const DeviceSession& to, const DevSecret& secret) {
    RekeyFrame r;
    r.dev_id = credentials_.dev_id;
    r.sessctr = to.sessctr();
    r.seq = 0;
    EXPECT_EQ(rekey_request_proof(edge_crypto_, secret, credentials_.edge_salt, r, r.proof),
              Error::ok);
    return r;
  };
  EXPECT_EQ(device->handle_rekey(request_under(*device, credentials_.dev_secret), 0),
            Error::bad_rekey_proof);
  EXPECT_EQ(device->handle_rekey(request_under(*device, step(credentials_.dev_secret, 3)), 0),
            Error::bad_rekey_proof);
  EXPECT_EQ(device->handle_rekey(request_under(*device, step(credentials_.dev_secret, 1)), 0),
            Error::ok)
      << "the edge's secret, one step behind";
  // The device's own secret: a rebooted device (epoch 2) takes a session (epoch 3).
  auto rebooted = boot_device();
  ASSERT_EQ(handshake(*rebooted, out), Error::ok);
  ASSERT_EQ(rebooted->epoch(), 3u);
  ASSERT_EQ(rebooted->seal(as_bytes("x"), kNowMs, frame), Error::ok);
  EXPECT_EQ(rebooted->handle_rekey(request_under(*rebooted, step(credentials_.dev_secret, 3)), 0),
            Error::ok);
}

TEST_P(Ratchet, WithoutTheRatchetNothingSteps) {
  EdgeDeviceState v1_state;
  DeviceSession device(device_crypto_, credentials_);
  for (int i = 0; i < 2; ++i) {
    InitFrame init;
    ASSERT_EQ(device.start_handshake(next_t_++, device_rng_, init), Error::ok);
    InitOutcome out;
    ASSERT_EQ(edge_.handle_init(init, credentials_.dev_secret, v1_state, kNowMs, edge_rng_, out),
              Error::ok);
    ASSERT_EQ(device.handle_ack(out.ack), Error::ok);
    DataFrame frame;
    ASSERT_EQ(device.seal(as_bytes("x"), kNowMs, frame), Error::ok);
    std::array<std::uint8_t, kMaxPayloadSize> plain{};
    DataOutcome confirmed;
    ASSERT_EQ(edge_.open_data(frame, v1_state, kNowMs, plain, confirmed), Error::ok);
    EXPECT_FALSE(confirmed.ratcheted);
  }
  EXPECT_EQ(device.epoch(), 0u);
  EXPECT_FALSE(v1_state.ratchet.active);
  EXPECT_EQ(flash_.writes(), 0);
}

TEST_P(Ratchet, EnablingIsBoundToTheDeviceAndKeepsANewerSecret) {
  auto device = boot_device();
  (void)recorded_session(*device, "x");
  ASSERT_EQ(state_.ratchet.epoch, 1u);
  EXPECT_TRUE(enable_ratchet(state_, credentials_.dev_id, credentials_.dev_secret));
  EXPECT_EQ(state_.ratchet.epoch, 1u) << "the provisioned secret does not come back";
  DevId other;
  ASSERT_EQ(other.assign("esp32-02"), Error::ok);
  EXPECT_FALSE(enable_ratchet(state_, other, credentials_.dev_secret));
  EdgeDeviceState fresh;
  ASSERT_TRUE(enable_ratchet(fresh, credentials_.dev_id, credentials_.dev_secret));
  EXPECT_TRUE(fresh.dev_id == credentials_.dev_id);
  EdgeDeviceState moved(std::move(fresh));
  EXPECT_TRUE(moved.ratchet.active);
  EXPECT_FALSE(fresh.ratchet.active) << "a moved-from state is empty, not keyless but live";
  EXPECT_TRUE(constant_time_equal(moved.ratchet.secret.view(), credentials_.dev_secret.view()));
}

INSTANTIATE_TEST_SUITE_P(Backends, Ratchet, all_backend_pairs(), pair_name);

}  // namespace
}  // namespace dsekp::testing
