// REKEY requests (PROTOCOL.md 4.5, 6.1 step 7): an edge that lost a device's session asks it to
// rekey under a key derived from DEV_SECRET alone; the device acts only on an authentic request
// for its current session and a recently sent seq, at most once per interval.
#include <gtest/gtest.h>

#include "dsekp/key_schedule.hpp"
#include "protocol_fixture.hpp"

namespace dsekp::testing {
namespace {

class RekeyRequest : public ProtocolTest {
 protected:
  /// A device with an established session that has sealed `frames` frames.
  std::unique_ptr<DeviceSession> established_device(std::uint32_t frames,
                                                    DeviceConfig config = {}) {
    auto device = std::make_unique<DeviceSession>(device_crypto_, credentials_, config);
    InitFrame init;
    EXPECT_EQ(device->start_handshake(kNowS, device_rng_, init), Error::ok);
    InitOutcome out;
    EXPECT_EQ(accept_init(init, kNowMs, out), Error::ok);
    EXPECT_EQ(device->handle_ack(out.ack), Error::ok);
    for (std::uint32_t i = 0; i < frames; ++i) {
      DataFrame f;
      EXPECT_EQ(device->seal(as_bytes("x"), kNowMs, f), Error::ok);
    }
    return device;
  }

  /// The request an edge that knows DEV_SECRET makes for (sessctr, seq).
  RekeyFrame request(std::uint16_t sessctr, std::uint32_t seq, const DevSecret* secret = nullptr) {
    RekeyFrame r;
    r.dev_id = credentials_.dev_id;
    r.sessctr = sessctr;
    r.seq = seq;
    EXPECT_EQ(rekey_request_proof(edge_crypto_, secret ? *secret : credentials_.dev_secret,
                                  credentials_.edge_salt, r, r.proof),
              Error::ok);
    return r;
  }
};

TEST_P(RekeyRequest, AnAuthenticRequestForTheCurrentSessionMakesARekeyDue) {
  auto device = established_device(3);
  EXPECT_FALSE(device->rekey_due());
  const RekeyFrame r = request(device->sessctr(), 2);
  for (Encoding enc : {Encoding::json, Encoding::compact}) {
    RekeyFrame received =
        over_the_wire(r, enc, [](ByteView w, RekeyFrame& o) { return decode_rekey(w, o); });
    EXPECT_EQ(received.seq, 2u);
    EXPECT_TRUE(received.proof.equals(r.proof));
  }
  ASSERT_EQ(device->handle_rekey(r, 1'000), Error::ok);
  EXPECT_TRUE(device->rekey_due());
  // The new handshake clears it; the old session keeps sealing until its ACK.
  InitFrame init;
  ASSERT_EQ(device->start_handshake(kNowS + 1, device_rng_, init), Error::ok);
  EXPECT_FALSE(device->rekey_due());
  DataFrame f;
  EXPECT_EQ(device->seal(as_bytes("x"), kNowMs, f), Error::ok);
}

TEST_P(RekeyRequest, ARequestNamingAnythingButTheCurrentSessionIsIgnored) {
  DeviceSession fresh(device_crypto_, credentials_);
  EXPECT_EQ(fresh.handle_rekey(request(1, 0), 0), Error::no_session);

  auto device = established_device(3);
  const std::uint16_t sessctr = device->sessctr();
  EXPECT_EQ(device->handle_rekey(request(static_cast<std::uint16_t>(sessctr + 1), 1), 0),
            Error::rekey_mismatch);
  RekeyFrame other_device = request(sessctr, 1);
  ASSERT_EQ(other_device.dev_id.assign("esp32-02"), Error::ok);
  EXPECT_EQ(device->handle_rekey(other_device, 0), Error::rekey_mismatch);
  // A seq the session has not sent (a request made in advance for a guessed sessctr).
  EXPECT_EQ(device->handle_rekey(request(sessctr, 3), 0), Error::stale_rekey);
  EXPECT_EQ(device->handle_rekey(request(sessctr, 0xFFFFFFFFu), 0), Error::stale_rekey);
  // Not from an edge that knows this device's secret.
  DevSecret wrong = DevSecret::from(std::array<std::uint8_t, kDevSecretSize>{});
  EXPECT_EQ(device->handle_rekey(request(sessctr, 1, &wrong), 0), Error::bad_rekey_proof);
  RekeyFrame tampered = request(sessctr, 2);
  tampered.seq = 1;
  EXPECT_EQ(device->handle_rekey(tampered, 0), Error::bad_rekey_proof);
  EXPECT_FALSE(device->rekey_due());

  // While a handshake is outstanding the device is rekeying already.
  ASSERT_EQ(device->handle_rekey(request(sessctr, 1), 0), Error::ok);
  InitFrame init;
  ASSERT_EQ(device->start_handshake(kNowS + 1, device_rng_, init), Error::ok);
  EXPECT_EQ(device->handle_rekey(request(sessctr, 2), 120'000), Error::rekey_mismatch);
}

TEST_P(RekeyRequest, OnlyARecentSeqCounts) {
  auto device = established_device(kRekeyRecentFrames + 10);
  const std::uint16_t sessctr = device->sessctr();
  EXPECT_EQ(device->handle_rekey(request(sessctr, 9), 0), Error::stale_rekey);
  EXPECT_EQ(device->handle_rekey(request(sessctr, 10), 0), Error::ok);  // the oldest that counts
}

TEST_P(RekeyRequest, AcceptedAtMostOncePerInterval) {
  DeviceConfig config;
  config.rekey_request_interval_ms = 60'000;
  auto device = established_device(5, config);
  const std::uint16_t sessctr = device->sessctr();
  ASSERT_EQ(device->handle_rekey(request(sessctr, 1), 10'000), Error::ok);
  // A replay of a recorded request, e.g. for a session the device happened to draw again.
  EXPECT_EQ(device->handle_rekey(request(sessctr, 2), 69'999), Error::rate_limited);
  EXPECT_EQ(device->handle_rekey(request(sessctr, 2), 70'000), Error::ok);
  // A monotonic clock that went back (a reboot of the clock source) does not lock it out.
  EXPECT_EQ(device->handle_rekey(request(sessctr, 3), 5'000), Error::ok);
}

TEST_P(RekeyRequest, SeqsBelowTheSessionsFirstSeqWereNeverSent) {
  DeviceConfig config;
  config.first_seq = 100;
  auto device = established_device(2, config);
  EXPECT_EQ(device->handle_rekey(request(device->sessctr(), 99), 0), Error::stale_rekey);
  EXPECT_EQ(device->handle_rekey(request(device->sessctr(), 101), 0), Error::ok);
}

// The backstop when no REKEY request gets through (a v1 edge, an attacker crowding them out on
// shared topics): a session is due for a rekey a day after its INIT was first sent.
TEST_P(RekeyRequest, ASessionIsDueForARekeyAfterItsMaximumAge) {
  DeviceConfig config;
  config.rekey_after_ms = 3'600'000;
  DeviceSession device(device_crypto_, credentials_, config);
  InitFrame init;
  ASSERT_EQ(device.start_handshake(kNowS, device_rng_, init), Error::ok);
  ASSERT_EQ(device.note_init_sent(1'000, device_rng_), Error::ok);
  InitOutcome out;
  ASSERT_EQ(accept_init(init, kNowMs, out), Error::ok);
  ASSERT_EQ(device.handle_ack(out.ack), Error::ok);
  EXPECT_FALSE(device.rekey_due(1'000 + 3'599'999));
  EXPECT_TRUE(device.rekey_due(1'000 + 3'600'000));
  EXPECT_FALSE(device.rekey_due()) << "the seq alone does not make it due";
  ASSERT_EQ(device.start_handshake(kNowS + 3600, device_rng_, init), Error::ok);
  ASSERT_EQ(device.note_init_sent(1'000 + 3'600'000, device_rng_), Error::ok);
  ASSERT_EQ(accept_init(init, kNowMs + 3'600'000, out), Error::ok);
  ASSERT_EQ(device.handle_ack(out.ack), Error::ok);
  EXPECT_FALSE(device.rekey_due(1'000 + 3'600'001)) << "the new session counts from its INIT";
  // 0: never; the default is a day.
  EXPECT_EQ(DeviceConfig{}.rekey_after_ms, 24ull * 3600 * 1000);
  config.rekey_after_ms = 0;
  DeviceSession ageless(device_crypto_, credentials_, config);
  ASSERT_EQ(ageless.start_handshake(kNowS + 7200, device_rng_, init), Error::ok);
  ASSERT_EQ(ageless.note_init_sent(0, device_rng_), Error::ok);
  ASSERT_EQ(accept_init(init, kNowMs + 7'200'000, out), Error::ok);
  ASSERT_EQ(ageless.handle_ack(out.ack), Error::ok);
  EXPECT_FALSE(ageless.rekey_due(UINT64_MAX));
}

INSTANTIATE_TEST_SUITE_P(Backends, RekeyRequest, all_backend_pairs(), pair_name);

}  // namespace
}  // namespace dsekp::testing
