// Data path between an established device and the edge: key confirmation, replay and tamper
// rejection, eviction of old sessions, rekeying, seq exhaustion and downlink. Every backend pair.
#include <gtest/gtest.h>

#include "protocol_fixture.hpp"

namespace dsekp::testing {
namespace {

const std::string kReading = R"({"t":24.0,"h":51.0})";

class Session : public ProtocolTest {
 protected:
  /// A (re)booted device that completes a handshake; `now_ms` orders sessions by age.
  std::unique_ptr<DeviceSession> boot(std::uint64_t now_ms = kNowMs, DeviceConfig config = {}) {
    auto device = std::make_unique<DeviceSession>(device_crypto_, credentials_, config);
    handshake(*device, now_ms);
    return device;
  }
  void handshake(DeviceSession& device, std::uint64_t now_ms) {
    InitFrame init;
    ASSERT_EQ(device.start_handshake(static_cast<std::uint32_t>(now_ms / 1000), device_rng_, init),
              Error::ok);
    InitOutcome out;
    ASSERT_EQ(accept_init(init, now_ms, out), Error::ok);
    ASSERT_EQ(device.handle_ack(out.ack), Error::ok);
  }
  DataFrame seal(DeviceSession& device, const std::string& text = kReading,
                 std::uint64_t sendts = kNowMs) {
    DataFrame f;
    EXPECT_EQ(device.seal(as_bytes(text), sendts, f), Error::ok);
    return f;
  }
  Error open(const DataFrame& f, std::string* text = nullptr, DataOutcome* outcome = nullptr,
             std::uint64_t now_ms = kNowMs) {
    std::vector<std::uint8_t> pt(kMaxPayloadSize);
    DataOutcome out;
    Error e = edge_.open_data(f, state_, now_ms, pt, out);
    if (text != nullptr) *text = std::string(pt.begin(), pt.begin() + out.plaintext_size);
    if (outcome != nullptr) *outcome = out;
    return e;
  }
};

// The cross-backend acceptance test: a handshake and 1,000 frames through both encodings.
TEST_P(Session, HandshakeAndThousandFramesOverTheWire) {
  auto device = boot();
  for (std::uint32_t i = 0; i < 1000; ++i) {
    const std::string text = R"({"t":)" + std::to_string(20 + i % 10) + R"(.0,"h":51.0})";
    const Encoding enc = i % 2 == 0 ? Encoding::json : Encoding::compact;
    const DataFrame received = wire(seal(*device, text, kNowMs + i), enc);
    std::string got;
    DataOutcome outcome;
    ASSERT_EQ(open(received, &got, &outcome), Error::ok) << i;
    EXPECT_EQ(got, text);
    EXPECT_EQ(received.seq, i);
    EXPECT_EQ(outcome.confirmed_session, i == 0);
  }
  EXPECT_EQ(state_.established_count, 1u);
  EXPECT_FALSE(state_.has_pending);
}

TEST_P(Session, ReplaysAndOldFramesAreRejectedAfterAuthentication) {
  auto device = boot();
  std::vector<DataFrame> frames;
  for (int i = 0; i < 100; ++i) frames.push_back(seal(*device));
  ASSERT_EQ(open(frames[99]), Error::ok);
  EXPECT_EQ(open(frames[99]), Error::replay);
  EXPECT_EQ(open(frames[50]), Error::ok);  // late but inside the window
  EXPECT_EQ(open(frames[50]), Error::replay);
  EXPECT_EQ(open(frames[35]), Error::too_old);  // 64 behind the highest
}

TEST_P(Session, TamperedHeaderFieldsFailAuthentication) {
  auto device = boot();
  const DataFrame good = seal(*device);
  DataFrame f = good;
  f.sendts_ms += 1;
  EXPECT_EQ(open(f), Error::auth_failed);
  f = good;
  f.seq += 1;
  f.iv = make_nonce(IvBase{}, 0);  // pretend to be a compact frame with no iv
  f.has_iv = false;
  EXPECT_EQ(open(f), Error::auth_failed);
  f = good;
  f.seq += 1;  // JSON frame whose iv no longer matches seq
  EXPECT_EQ(open(f), Error::nonce_mismatch);
  f = good;
  f.tag.data()[0] ^= 1;
  EXPECT_EQ(open(f), Error::auth_failed);
  f = good;
  f.ciphertext.storage()[0] ^= 1;
  EXPECT_EQ(open(f), Error::auth_failed);
  f = good;
  f.sessctr ^= 1;
  EXPECT_EQ(open(f), Error::unknown_session);
  // Forged frames never moved the window or confirmed anything; the real one still opens.
  EXPECT_TRUE(state_.has_pending);
  EXPECT_EQ(state_.established_count, 0u);
  EXPECT_EQ(open(good), Error::ok);
}

TEST_P(Session, ForgedFrameWithHugeSeqDoesNotMoveTheWindow) {
  auto device = boot();
  const DataFrame first = seal(*device);
  ASSERT_EQ(open(first), Error::ok);
  DataFrame forged = seal(*device);
  forged.seq = 1'000'000;
  forged.has_iv = false;
  EXPECT_EQ(open(forged), Error::auth_failed);
  EXPECT_EQ(open(seal(*device)), Error::ok);  // seq 2 would be too_old had the window moved
}

TEST_P(Session, AtMostFiveSessionsOldestEvictedFirst) {
  std::vector<std::unique_ptr<DeviceSession>> boots;
  for (int i = 0; i < 7; ++i) {
    boots.push_back(boot(kNowMs + static_cast<std::uint64_t>(i) * 1000));
    DataOutcome outcome;
    ASSERT_EQ(open(seal(*boots.back()), nullptr, &outcome), Error::ok) << i;
    EXPECT_TRUE(outcome.confirmed_session);
    EXPECT_EQ(outcome.evicted, i >= 5) << i;
    if (i >= 5) {
      EXPECT_EQ(outcome.evicted_sessctr, boots[static_cast<std::size_t>(i - 5)]->sessctr());
    }
  }
  EXPECT_EQ(state_.established_count, 5u);
  EXPECT_EQ(open(seal(*boots[0])), Error::unknown_session);
  EXPECT_EQ(open(seal(*boots[1])), Error::unknown_session);
  for (std::size_t i = 2; i < 7; ++i) EXPECT_EQ(open(seal(*boots[i])), Error::ok) << i;
}

TEST_P(Session, PendingSessionNeverEvictsEstablishedOnes) {
  std::vector<std::unique_ptr<DeviceSession>> boots;
  for (int i = 0; i < 5; ++i) {
    boots.push_back(boot(kNowMs + static_cast<std::uint64_t>(i) * 1000));  // a boot a second
    ASSERT_EQ(open(seal(*boots.back())), Error::ok);
  }
  auto unconfirmed = boot(kNowMs + 10'000);  // handshake done, no data yet
  EXPECT_TRUE(state_.has_pending);
  EXPECT_EQ(state_.established_count, 5u);
  for (auto& d : boots) EXPECT_EQ(open(seal(*d)), Error::ok);
}

TEST_P(Session, RebootWithTheSameSessctrSupersedesTheOldSession) {
  auto first = boot();
  ASSERT_EQ(open(seal(*first)), Error::ok);
  // Make the next boot draw the same sessctr: a fresh device's first 2 random bytes are it.
  const std::uint16_t s = first->sessctr();
  ScriptedRng scripted({{static_cast<std::uint8_t>(s >> 8), static_cast<std::uint8_t>(s)},
                        std::vector<std::uint8_t>(kNonceSize, 0x42)});
  DeviceSession second(device_crypto_, credentials_);
  InitFrame init;
  ASSERT_EQ(second.start_handshake(kNowS + 5, scripted, init), Error::ok);
  ASSERT_EQ(init.sessctr, s);
  InitOutcome out;
  ASSERT_EQ(edge_.handle_init(init, credentials_.dev_secret, state_, kNowMs + 5000, edge_rng_, out),
            Error::ok);
  ASSERT_EQ(second.handle_ack(out.ack), Error::ok);
  // Old session still works while the new one is unconfirmed...
  EXPECT_EQ(open(seal(*first)), Error::ok);
  // ...and a tampered frame of it fails both candidates: auth_failed (its iv is right for the
  // established session; the pending one, tried second, would say nonce_mismatch).
  DataFrame tampered = seal(*first);
  tampered.ciphertext.storage()[0] ^= 0x01;
  EXPECT_EQ(open(tampered), Error::auth_failed);
  DataOutcome outcome;
  ASSERT_EQ(open(seal(second), nullptr, &outcome), Error::ok);
  EXPECT_TRUE(outcome.confirmed_session);
  EXPECT_TRUE(outcome.evicted);
  EXPECT_EQ(state_.established_count, 1u);
  // ...and is replaced once the new one is confirmed: the old session's frames no longer verify
  // (the JSON-profile iv already differs from the new session's nonce).
  EXPECT_EQ(open(seal(*first)), Error::nonce_mismatch);
  DataFrame compact_like = seal(*first);
  compact_like.has_iv = false;
  EXPECT_EQ(open(compact_like), Error::auth_failed);
}

TEST_P(Session, RekeyWhileTheOldSessionKeepsSending) {
  DeviceConfig config;
  config.rekey_at_seq = 10;
  auto device = boot(kNowMs, config);
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(device->rekey_due());
    ASSERT_EQ(open(seal(*device)), Error::ok);
  }
  EXPECT_TRUE(device->rekey_due());
  const std::uint16_t old_sessctr = device->sessctr();
  InitFrame init;
  ASSERT_EQ(device->start_handshake(kNowS + 1, device_rng_, init), Error::ok);
  EXPECT_NE(init.sessctr, old_sessctr);
  ASSERT_EQ(open(seal(*device)), Error::ok);  // still the old session until the ACK arrives
  InitOutcome out;
  ASSERT_EQ(edge_.handle_init(init, credentials_.dev_secret, state_, kNowMs + 1000, edge_rng_, out),
            Error::ok);
  ASSERT_EQ(device->handle_ack(out.ack), Error::ok);
  EXPECT_FALSE(device->rekey_due());
  EXPECT_EQ(device->next_seq(), 0u);
  DataOutcome outcome;
  ASSERT_EQ(open(seal(*device), nullptr, &outcome), Error::ok);
  EXPECT_TRUE(outcome.confirmed_session);
  EXPECT_EQ(state_.established_count, 2u);
}

TEST_P(Session, SeqSpaceEndsAtTheMaximumSeq) {
  DeviceConfig config;
  config.first_seq = 0xFFFFFFFEu;
  config.rekey_at_seq = 0xFFFFFFF0u;
  auto device = boot(kNowMs, config);
  EXPECT_TRUE(device->rekey_due());
  const DataFrame a = seal(*device);
  const DataFrame b = seal(*device);
  EXPECT_EQ(b.seq, 0xFFFFFFFFu);
  DataFrame c;
  EXPECT_EQ(device->seal(as_bytes(kReading), kNowMs, c), Error::session_exhausted);
  EXPECT_EQ(open(b), Error::ok);
  EXPECT_EQ(open(a), Error::ok);
  EXPECT_EQ(open(b), Error::replay);
}

TEST_P(Session, DownlinkRoundTripWithReplayProtection) {
  auto device = boot();
  DataFrame down;
  EXPECT_EQ(edge_.seal_downlink(state_, as_bytes("on"), kNowMs, down),
            Error::no_session);  // not confirmed yet
  ASSERT_EQ(open(seal(*device)), Error::ok);
  std::vector<std::uint8_t> pt(kMaxPayloadSize);
  for (std::uint32_t i = 0; i < 3; ++i) {
    ASSERT_EQ(edge_.seal_downlink(state_, as_bytes("relay=on"), kNowMs, down), Error::ok);
    EXPECT_EQ(down.seq, i);
    for (Encoding enc : {Encoding::json, Encoding::compact}) {
      const DataFrame received = wire(down, enc);
      std::size_t n = 0;
      const Error e = device->open_downlink(received, pt, n);
      if (enc == Encoding::json) {
        ASSERT_EQ(e, Error::ok);
        EXPECT_EQ(std::string(pt.begin(), pt.begin() + n), "relay=on");
      } else {
        EXPECT_EQ(e, Error::replay);  // the same frame again, other encoding
      }
    }
  }
  DataFrame forged = down;
  forged.seq = 10;
  forged.has_iv = false;
  std::size_t n = 0;
  EXPECT_EQ(device->open_downlink(forged, pt, n), Error::auth_failed);
  // An uplink frame cannot be reflected back to the device as downlink.
  DataFrame reflected = seal(*device);
  reflected.direction = Direction::downlink;
  EXPECT_NE(device->open_downlink(reflected, pt, n), Error::ok);
}

TEST_P(Session, UnknownSessionBeforeAnyHandshake) {
  DeviceSession device(device_crypto_, credentials_);
  DataFrame f;
  EXPECT_EQ(device.seal(as_bytes(kReading), kNowMs, f), Error::no_session);
  f.direction = Direction::uplink;
  EXPECT_EQ(open(f), Error::unknown_session);
}

INSTANTIATE_TEST_SUITE_P(Backends, Session, all_backend_pairs(), pair_name);

}  // namespace
}  // namespace dsekp::testing
