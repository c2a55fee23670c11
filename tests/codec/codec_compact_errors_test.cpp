// One test per decoding error of the compact profile, for every compact decoder, including
// truncation at every byte position of a valid frame.
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "codec_test_support.hpp"

namespace dsekp {
namespace {

using test::Bytes;

struct Subject {
  std::string name;
  Bytes frame;                                // compact encoding of a sample frame
  std::function<Error(const Bytes&)> decode;  // the decoder under test
  std::uint8_t type;                          // its expected type byte
  bool variable = false;                      // ciphertext runs to the tag (DATA, DOWN, PSK)
  std::size_t sendts_offset = 0;              // where sendts_ms sits after the dev_id (variable)
};

template <typename Frame>
std::function<Error(const Bytes&)> decoder(Direction d = Direction::uplink) {
  return [d](const Bytes& wire) {
    Frame f;
    if constexpr (std::is_same_v<Frame, DataFrame>) {
      return test::decode_frame(wire, f, d);
    } else {
      return test::decode_frame(wire, f);
    }
  };
}

std::vector<Subject> subjects() {
  const auto compact = [](const auto& f) { return test::encode_to_bytes(f, Encoding::compact); };
  return {
      {"Init", compact(test::sample_init()), decoder<InitFrame>(), 0x01},
      {"Ack", compact(test::sample_ack()), decoder<AckFrame>(), 0x02},
      {"DataUp", compact(test::sample_data(Direction::uplink, 19)),
       decoder<DataFrame>(Direction::uplink), 0x03, true, 2 + 4},
      {"DataDown", compact(test::sample_data(Direction::downlink, 19)),
       decoder<DataFrame>(Direction::downlink), 0x04, true, 2 + 4},
      {"Psk", compact(test::sample_psk(19)), decoder<PskFrame>(), 0x05, true, 4},
      {"Rekey", compact(test::sample_rekey()), decoder<RekeyFrame>(), 0x06},
  };
}

void PrintTo(const Subject& s, std::ostream* os) {
  *os << s.name;
}

std::vector<Subject> subjects_where(bool variable) {
  std::vector<Subject> out;
  for (Subject& s : subjects()) {
    if (s.variable == variable) out.push_back(std::move(s));
  }
  return out;
}

class CompactErrors : public ::testing::TestWithParam<Subject> {
 protected:
  const Subject& s() const { return GetParam(); }
  const Bytes& frame() const { return GetParam().frame; }
  Error decode(const Bytes& wire) const { return GetParam().decode(wire); }
  // Offset of the first byte after the dev_id.
  std::size_t after_dev_id() const { return 2 + frame()[1]; }
  // The minimum frame: no ciphertext.
  std::size_t fixed_size() const { return s().variable ? frame().size() - 19 : frame().size(); }
};

// The same tests, for the fixed-size frames (INIT, ACK) or the variable ones (DATA, DOWN, PSK).
class CompactFixedErrors : public CompactErrors {};
class CompactVariableErrors : public CompactErrors {};

const auto kSubjectName = [](const auto& param_info) { return param_info.param.name; };
INSTANTIATE_TEST_SUITE_P(AllCompactDecoders, CompactErrors, ::testing::ValuesIn(subjects()),
                         kSubjectName);
INSTANTIATE_TEST_SUITE_P(FixedCompactDecoders, CompactFixedErrors,
                         ::testing::ValuesIn(subjects_where(false)), kSubjectName);
INSTANTIATE_TEST_SUITE_P(VariableCompactDecoders, CompactVariableErrors,
                         ::testing::ValuesIn(subjects_where(true)), kSubjectName);

TEST_P(CompactErrors, SampleFrameDecodes) {
  ASSERT_EQ(frame()[0], s().type);
  EXPECT_EQ(decode(frame()), Error::ok);
}

TEST_P(CompactErrors, FrameEmpty) {
  EXPECT_EQ(decode(Bytes{}), Error::frame_empty);
}

TEST_P(CompactErrors, FrameTooLarge) {
  Bytes big = frame();
  big.resize(kMaxFrameSize + 1, 0);
  EXPECT_EQ(decode(big), Error::frame_too_large);
}

TEST_P(CompactErrors, UnknownFrameType) {
  for (int type = 0; type < 256; ++type) {
    if (type == s().type || type == '{') continue;
    Bytes wire = frame();
    wire[0] = static_cast<std::uint8_t>(type);
    EXPECT_EQ(decode(wire), Error::unknown_frame_type) << type;
  }
}

TEST_P(CompactErrors, TruncatedAtEveryPosition) {
  for (std::size_t n = 1; n < frame().size(); ++n) {
    const Bytes prefix(frame().begin(), frame().begin() + static_cast<std::ptrdiff_t>(n));
    // A DATA/PSK prefix that still holds the whole header and 16 bytes is a valid frame with a
    // shorter ciphertext (and another tag); every shorter prefix is truncated.
    const Error expected = s().variable && n >= fixed_size() ? Error::ok : Error::truncated;
    EXPECT_EQ(decode(prefix), expected) << "prefix of " << n << " bytes";
  }
}

// (In DATA, DOWN and PSK frames extra bytes are ciphertext: see TruncatedAtEveryPosition.)
TEST_P(CompactFixedErrors, TrailingBytes) {
  for (const int extra : {0x00, 0xFF}) {
    Bytes wire = frame();
    wire.push_back(static_cast<std::uint8_t>(extra));
    EXPECT_EQ(decode(wire), Error::trailing_bytes);
  }
}

TEST_P(CompactErrors, BadDevId) {
  Bytes zero = frame();
  zero[1] = 0;  // empty dev_id
  EXPECT_EQ(decode(zero), Error::bad_dev_id);
  Bytes long_len = frame();
  long_len[1] = 65;  // longer than any dev_id
  long_len.resize(long_len.size() + 65, 'a');
  EXPECT_EQ(decode(long_len), Error::bad_dev_id);
  long_len[1] = 0xFF;
  EXPECT_EQ(decode(long_len), Error::bad_dev_id);
  for (const int c : {int{'/'}, int{' '}, int{'+'}, int{'#'}, 0x00, 0x80, int{'{'}}) {
    Bytes wire = frame();
    wire[2] = static_cast<std::uint8_t>(c);
    EXPECT_EQ(decode(wire), Error::bad_dev_id) << int(c);
  }
}

TEST_P(CompactErrors, DevIdOfOneAndSixtyFourBytes) {
  for (const std::size_t len : {std::size_t{1}, std::size_t{64}}) {
    Bytes wire = {s().type, static_cast<std::uint8_t>(len)};
    wire.insert(wire.end(), len, 'k');
    wire.insert(wire.end(), frame().begin() + static_cast<std::ptrdiff_t>(after_dev_id()),
                frame().end());
    EXPECT_EQ(decode(wire), Error::ok) << len;
  }
}

TEST_P(CompactVariableErrors, PayloadTooLarge) {
  Bytes wire = frame();
  // Grow the ciphertext (which sits right before the 16-byte tag) to the cap, then past it.
  const auto tag_at = static_cast<std::ptrdiff_t>(wire.size() - kTagSize);
  wire.insert(wire.begin() + tag_at, kMaxPayloadSize - 19, 0x5A);
  EXPECT_EQ(decode(wire), Error::ok);
  wire.insert(wire.begin() + tag_at, 1, 0x5A);
  ASSERT_LE(wire.size(), kMaxFrameSize);
  EXPECT_EQ(decode(wire), Error::payload_too_large);
}

TEST_P(CompactVariableErrors, BadIntegerForSendTsBeyondJsonRange) {
  const std::size_t at = after_dev_id() + s().sendts_offset;
  const auto set_sendts = [&](std::uint64_t v) {
    Bytes wire = frame();
    store_be64(wire.data() + at, v);
    return wire;
  };
  EXPECT_EQ(decode(set_sendts(test::kMaxSendTs)), Error::ok);
  EXPECT_EQ(decode(set_sendts(test::kMaxSendTs + 1)), Error::bad_integer);
  EXPECT_EQ(decode(set_sendts(UINT64_MAX)), Error::bad_integer);
}

TEST(CompactData, DirectionIsTheTypeByte) {
  const Bytes up = test::encode_to_bytes(test::sample_data(Direction::uplink), Encoding::compact);
  DataFrame f;
  EXPECT_EQ(decode_data(up, Direction::downlink, f), Error::unknown_frame_type);
  ASSERT_EQ(decode_data(up, Direction::uplink, f), Error::ok);
  EXPECT_EQ(f.direction, Direction::uplink);
  EXPECT_FALSE(f.has_iv);
  EXPECT_TRUE(f.iv.equals(AeadNonce{}));
}

}  // namespace
}  // namespace dsekp
