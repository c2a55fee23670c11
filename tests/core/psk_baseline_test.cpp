// The static-PSK baseline: it round-trips, and it has exactly the paper's weaknesses (no replay
// protection, unauthenticated header), which these tests pin down so nobody "fixes" it by accident.
#include "dsekp/psk_baseline.hpp"

#include <gtest/gtest.h>

#include "protocol_fixture.hpp"

namespace dsekp::testing {
namespace {

class PskBaseline : public ::testing::TestWithParam<BackendPair> {};

TEST_P(PskBaseline, RoundTripAcrossBackendsAndEncodings) {
  Backends sealer_side, opener_side;
  CryptoBackend& sealer = sealer_side.get(GetParam().device);
  CryptoBackend& opener = opener_side.get(GetParam().edge);
  std::array<std::uint8_t, kAeadKeySize> key_bytes{};
  key_bytes.fill(0x77);
  const PskKey key = PskKey::from(key_bytes);
  DevId dev_id;
  ASSERT_EQ(dev_id.assign("esp32-01"), Error::ok);
  SeededRng rng(9);
  const std::string reading = R"({"t":24.0,"h":51.0})";
  PskFrame frame;
  ASSERT_EQ(psk_seal(sealer, key, dev_id, 7, 1'700'000'000'000, as_bytes(reading), rng, frame),
            Error::ok);
  for (Encoding enc : {Encoding::json, Encoding::compact}) {
    std::vector<std::uint8_t> buf(kMaxFrameSize);
    std::size_t n = 0;
    ASSERT_EQ(encode(frame, enc, buf, n), Error::ok);
    PskFrame received;
    ASSERT_EQ(decode_psk(ByteView(buf.data(), n), received), Error::ok);
    std::vector<std::uint8_t> pt(kMaxPayloadSize);
    std::size_t pt_size = 0;
    ASSERT_EQ(psk_open(opener, key, received, pt, pt_size), Error::ok);
    EXPECT_EQ(std::string(pt.begin(), pt.begin() + pt_size), reading);
    // Weakness kept on purpose: the same frame opens again (no replay protection)...
    EXPECT_EQ(psk_open(opener, key, received, pt, pt_size), Error::ok);
    // ...and header fields can be changed without detection (no AAD).
    received.sendts_ms += 5000;
    received.seq = 99;
    EXPECT_EQ(psk_open(opener, key, received, pt, pt_size), Error::ok);
  }
  PskFrame tampered = frame;
  tampered.tag.data()[3] ^= 4;
  std::vector<std::uint8_t> pt(kMaxPayloadSize);
  std::size_t pt_size = 0;
  EXPECT_EQ(psk_open(opener, key, tampered, pt, pt_size), Error::auth_failed);
}

TEST_P(PskBaseline, FreshRandomIvPerFrame) {
  Backends backends;
  CryptoBackend& crypto = backends.get(GetParam().device);
  std::array<std::uint8_t, kAeadKeySize> key_bytes{};
  key_bytes.fill(0x77);
  const PskKey key = PskKey::from(key_bytes);
  DevId dev_id;
  ASSERT_EQ(dev_id.assign("esp32-01"), Error::ok);
  SeededRng rng(10);
  PskFrame a, b;
  ASSERT_EQ(psk_seal(crypto, key, dev_id, 1, 1, as_bytes("x"), rng, a), Error::ok);
  ASSERT_EQ(psk_seal(crypto, key, dev_id, 2, 2, as_bytes("x"), rng, b), Error::ok);
  EXPECT_FALSE(a.iv.equals(b.iv));
}

INSTANTIATE_TEST_SUITE_P(Backends, PskBaseline, all_backend_pairs(), pair_name);

}  // namespace
}  // namespace dsekp::testing
