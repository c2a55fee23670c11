// Round trips of every frame kind through both encodings, at the edges of every value range, and
// the encoders' own argument and buffer checks.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "codec_test_support.hpp"

namespace dsekp {
namespace {

using test::Bytes;

class RoundTrip : public ::testing::TestWithParam<Encoding> {};

INSTANTIATE_TEST_SUITE_P(BothEncodings, RoundTrip,
                         ::testing::Values(Encoding::json, Encoding::compact),
                         [](const auto& param_info) {
                           return std::string(param_info.param == Encoding::json ? "Json"
                                                                                 : "Compact");
                         });

const std::string kShortestId = "q";
const std::string kLongestId(kDevIdMaxSize, 'L');

// Encodes, checks the claimed encoding, decodes, and checks the frame survived; also checks that
// every shorter output buffer is refused without a partial success.
template <typename Frame>
void expect_round_trip(const Frame& f, const Frame& expected, Encoding enc,
                       Direction d = Direction::uplink) {
  const Bytes wire = test::encode_to_bytes(f, enc);
  ASSERT_FALSE(wire.empty());
  EXPECT_EQ(detect_encoding(wire), enc);
  Frame back;
  if constexpr (std::is_same_v<Frame, DataFrame>) {
    ASSERT_EQ(test::decode_frame(wire, back, d), Error::ok);
  } else {
    ASSERT_EQ(test::decode_frame(wire, back), Error::ok);
  }
  EXPECT_EQ(back, expected);
  // Re-encoding the decoded frame reproduces the wire bytes: both encodings are canonical.
  EXPECT_EQ(test::encode_to_bytes(back, enc), wire);
}

template <typename Frame>
void expect_round_trip(const Frame& f, Encoding enc) {
  expect_round_trip(f, f, enc);
}

TEST_P(RoundTrip, InitAtRangeEdges) {
  for (const std::string& id : {kShortestId, kLongestId}) {
    for (const bool high : {false, true}) {
      InitFrame f = test::sample_init();
      f.dev_id = test::make_dev_id(id);
      f.sessctr = high ? UINT16_MAX : 0;
      f.t = high ? UINT32_MAX : 0;
      f.dev_nonce = test::counting<DevNonce>(high ? 0xF4 : 0);
      f.proof = test::counting<Proof>(high ? 0xF0 : 0);
      expect_round_trip(f, GetParam());
    }
  }
  expect_round_trip(test::sample_init(), GetParam());
}

TEST_P(RoundTrip, AckAtRangeEdges) {
  for (const std::string& id : {kShortestId, kLongestId}) {
    for (const bool high : {false, true}) {
      AckFrame f = test::sample_ack();
      f.dev_id = test::make_dev_id(id);
      f.sessctr = high ? UINT16_MAX : 0;
      f.status = high ? UINT8_MAX : 0;
      f.edge_nonce = test::counting<EdgeNonce>(high ? 0xF4 : 0);
      f.proof = test::counting<Proof>(high ? 0xF0 : 0);
      expect_round_trip(f, GetParam());
    }
  }
  expect_round_trip(test::sample_ack(), GetParam());
}

TEST_P(RoundTrip, RekeyAtRangeEdges) {
  for (const std::string& id : {kShortestId, kLongestId}) {
    for (const bool high : {false, true}) {
      RekeyFrame f = test::sample_rekey();
      f.dev_id = test::make_dev_id(id);
      f.sessctr = high ? UINT16_MAX : 0;
      f.seq = high ? UINT32_MAX : 0;
      f.proof = test::counting<Proof>(high ? 0xF0 : 0);
      expect_round_trip(f, GetParam());
    }
  }
  // Compact: 24 + len(dev_id) bytes (PROTOCOL.md 5.2).
  if (GetParam() == Encoding::compact)
    EXPECT_EQ(test::encode_to_bytes(test::sample_rekey(), GetParam()).size(), 24u + 8u);
}

TEST_P(RoundTrip, DataBothDirectionsAllPayloadSizesAndEdges) {
  const Encoding enc = GetParam();
  const std::size_t payloads[] = {0, 1, 2, 3, 4, 19, 47, 48, 49, 1023, kMaxPayloadSize};
  for (const Direction d : {Direction::uplink, Direction::downlink}) {
    for (const std::size_t payload : payloads) {
      for (const bool high : {false, true}) {
        DataFrame f = test::sample_data(d, payload);
        f.dev_id = test::make_dev_id(high ? kLongestId : kShortestId);
        f.sessctr = high ? UINT16_MAX : 0;
        f.seq = high ? UINT32_MAX : 0;
        f.sendts_ms = high ? test::kMaxSendTs : 0;
        SCOPED_TRACE(testing::Message() << "payload " << payload << " high " << high);
        expect_round_trip(f, test::as_received(f, enc), enc, d);
      }
    }
  }
}

TEST(JsonData, DecoderStoresTheRequestedDirection) {
  // JSON has no type byte: the topic decides the direction, and the decoder records it.
  const Bytes wire = test::encode_to_bytes(test::sample_data(Direction::uplink), Encoding::json);
  DataFrame back;
  ASSERT_EQ(decode_data(wire, Direction::downlink, back), Error::ok);
  EXPECT_EQ(back.direction, Direction::downlink);
  EXPECT_TRUE(back.has_iv);
}

TEST_P(RoundTrip, PskAllPayloadSizesAndEdges) {
  const std::size_t payloads[] = {0, 1, 2, 3, 19, 1000, kMaxPayloadSize};
  for (const std::size_t payload : payloads) {
    for (const bool high : {false, true}) {
      PskFrame f = test::sample_psk(payload);
      f.dev_id = test::make_dev_id(high ? kLongestId : kShortestId);
      f.seq = high ? UINT32_MAX : 0;
      f.sendts_ms = high ? test::kMaxSendTs : 0;
      f.iv = test::counting<AeadNonce>(high ? 0xF4 : 0);
      SCOPED_TRACE(testing::Message() << "payload " << payload << " high " << high);
      expect_round_trip(f, GetParam());
    }
  }
}

TEST_P(RoundTrip, EveryShorterBufferIsRefused) {
  const Encoding enc = GetParam();
  const auto check = [enc](const auto& f) {
    const Bytes wire = test::encode_to_bytes(f, enc);
    for (std::size_t n = 0; n < wire.size(); ++n) {
      Bytes buf(n);
      std::size_t written = 12345;
      ASSERT_EQ(encode(f, enc, buf, written), Error::buffer_too_small) << n;
      EXPECT_EQ(written, 0U);
    }
    Bytes exact(wire.size());
    std::size_t written = 0;
    ASSERT_EQ(encode(f, enc, exact, written), Error::ok);
    EXPECT_EQ(written, wire.size());
    EXPECT_EQ(exact, wire);
  };
  check(test::sample_init());
  check(test::sample_ack());
  check(test::sample_data(Direction::uplink, 19));
  check(test::sample_data(Direction::downlink, 0));
  check(test::sample_psk(19));
}

TEST_P(RoundTrip, EncodersRefuseValuesTheDecodersWouldReject) {
  const Encoding enc = GetParam();
  Bytes buf(kMaxFrameSize);
  std::size_t written = 0;
  InitFrame init = test::sample_init();
  init.dev_id = DevId{};
  EXPECT_EQ(encode(init, enc, buf, written), Error::invalid_argument);
  AckFrame ack = test::sample_ack();
  ack.dev_id = DevId{};
  EXPECT_EQ(encode(ack, enc, buf, written), Error::invalid_argument);
  DataFrame data = test::sample_data();
  data.sendts_ms = test::kMaxSendTs + 1;
  EXPECT_EQ(encode(data, enc, buf, written), Error::invalid_argument);
  data = test::sample_data();
  data.dev_id = DevId{};
  EXPECT_EQ(encode(data, enc, buf, written), Error::invalid_argument);
  PskFrame psk = test::sample_psk();
  psk.sendts_ms = UINT64_MAX;
  EXPECT_EQ(encode(psk, enc, buf, written), Error::invalid_argument);
  psk = test::sample_psk();
  psk.dev_id = DevId{};
  EXPECT_EQ(encode(psk, enc, buf, written), Error::invalid_argument);
  EXPECT_EQ(written, 0U);
}

TEST(CrossEncoding, EveryFrameSurvivesCompactToJsonToCompact) {
  const auto check = [](const auto& f) {
    using Frame = std::decay_t<decltype(f)>;
    Frame from_compact;
    Frame from_json;
    ASSERT_EQ(test::decode_frame(test::encode_to_bytes(f, Encoding::compact), from_compact),
              Error::ok);
    ASSERT_EQ(test::decode_frame(test::encode_to_bytes(from_compact, Encoding::json), from_json),
              Error::ok);
    EXPECT_EQ(test::encode_to_bytes(from_json, Encoding::compact),
              test::encode_to_bytes(f, Encoding::compact));
  };
  check(test::sample_init());
  check(test::sample_ack());
  check(test::sample_data(Direction::uplink, 19));
  check(test::sample_psk(19));
}

}  // namespace
}  // namespace dsekp
