// Encoder output checked byte for byte against hand-derived frames (base64 values computed
// independently of this code), plus the frame-size facts the design relies on.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "codec_test_support.hpp"

namespace dsekp {
namespace {

using test::Bytes;

// Appends the ASCII text of `s` to `b`.
void put(Bytes& b, std::string_view s) {
  b.insert(b.end(), s.begin(), s.end());
}
void put_counting(Bytes& b, std::size_t n, std::uint8_t first) {
  const Bytes c = test::counting_bytes(n, first);
  b.insert(b.end(), c.begin(), c.end());
}

TEST(CodecGolden, InitJson) {
  EXPECT_EQ(test::as_string(test::encode_to_bytes(test::sample_init(), Encoding::json)),
            R"({"v":1,"dev_id":"esp32-01","sessctr":4660,"t":1700000000,)"
            R"("dev_nonce":"AAECAwQFBgcICQoL","proof":"EBESExQVFhcYGRobHB0eHw=="})");
}

TEST(CodecGolden, AckJson) {
  EXPECT_EQ(test::as_string(test::encode_to_bytes(test::sample_ack(), Encoding::json)),
            R"({"v":1,"dev_id":"edge-test","sessctr":65535,"edge_nonce":"oKGio6Slpqeoqaqr",)"
            R"("status":0,"proof":"sLGys7S1tre4ubq7vL2+vw=="})");
}

TEST(CodecGolden, DataJsonUplinkAndDownlinkAreIdentical) {
  const std::string expected =
      R"({"seq":7,"dev_id":"esp32-01","sessctr_id":54321,"ciphertext":"aGVsbG8=",)"
      R"("iv":"wMHCw8TFxsfIycrL","tag":"0NHS09TV1tfY2drb3N3e3w==","sendts_ms":1700000000123})";
  EXPECT_EQ(test::as_string(test::encode_to_bytes(test::sample_data(), Encoding::json)), expected);
  EXPECT_EQ(test::as_string(
                test::encode_to_bytes(test::sample_data(Direction::downlink), Encoding::json)),
            expected);
}

TEST(CodecGolden, DataJsonWritesIvEvenWithoutHasIv) {
  DataFrame f = test::sample_data();
  f.has_iv = false;
  EXPECT_NE(test::as_string(test::encode_to_bytes(f, Encoding::json)).find(R"("iv":"wMHCw8TF)"),
            std::string::npos);
}

TEST(CodecGolden, PskJson) {
  EXPECT_EQ(test::as_string(test::encode_to_bytes(test::sample_psk(), Encoding::json)),
            R"({"seq":42,"dev_id":"esp32-01","ciphertext":"AQID","iv":"4OHi4+Tl5ufo6err",)"
            R"("tag":"8PHy8/T19vf4+fr7/P3+/w==","sendts_ms":0})");
}

TEST(CodecGolden, InitCompact) {
  Bytes expected = {0x01, 8};
  put(expected, "esp32-01");
  expected.insert(expected.end(), {0x12, 0x34, 0x65, 0x53, 0xF1, 0x00});  // 4660, 1700000000
  put_counting(expected, 12, 0x00);
  put_counting(expected, 16, 0x10);
  EXPECT_EQ(test::encode_to_bytes(test::sample_init(), Encoding::compact), expected);
  EXPECT_EQ(expected.size(), 36U + 8U);
}

TEST(CodecGolden, AckCompact) {
  Bytes expected = {0x02, 9};
  put(expected, "edge-test");
  expected.insert(expected.end(), {0xFF, 0xFF});
  put_counting(expected, 12, 0xA0);
  expected.push_back(0x00);
  put_counting(expected, 16, 0xB0);
  EXPECT_EQ(test::encode_to_bytes(test::sample_ack(), Encoding::compact), expected);
  EXPECT_EQ(expected.size(), 33U + 9U);
}

TEST(CodecGolden, DataCompactUplinkAndDownlink) {
  Bytes expected = {0x03, 8};
  put(expected, "esp32-01");
  // sessctr 54321, seq 7, sendts_ms 1700000000123 = 0x0000018BCFE5687B; no iv
  expected.insert(expected.end(),
                  {0xD4, 0x31, 0, 0, 0, 7, 0, 0, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x7B});
  put(expected, "hello");
  put_counting(expected, 16, 0xD0);
  EXPECT_EQ(test::encode_to_bytes(test::sample_data(), Encoding::compact), expected);
  expected[0] = 0x04;
  EXPECT_EQ(test::encode_to_bytes(test::sample_data(Direction::downlink), Encoding::compact),
            expected);
}

TEST(CodecGolden, PskCompact) {
  Bytes expected = {0x05, 8};
  put(expected, "esp32-01");
  expected.insert(expected.end(), {0, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0, 0});
  put_counting(expected, 12, 0xE0);
  expected.insert(expected.end(), {1, 2, 3});
  put_counting(expected, 16, 0xF0);
  EXPECT_EQ(test::encode_to_bytes(test::sample_psk(), Encoding::compact), expected);
}

// The design's target: a DHT11-sized reading (19 bytes) in at most 64 bytes on the wire.
TEST(CodecGolden, CompactDataFrameForEsp32With19BytesIs59Bytes) {
  const DataFrame f = test::sample_data(Direction::uplink, 19);
  const Bytes wire = test::encode_to_bytes(f, Encoding::compact);
  EXPECT_EQ(wire.size(), 1U + 1U + 8U + 2U + 4U + 8U + 19U + 16U);
  EXPECT_EQ(wire.size(), 59U);
}

TEST(CodecGolden, JsonDataFrameSizeForEsp32With19Bytes) {
  // 5-digit sessctr_id and 13-digit sendts_ms as in sample_data(); seq 7 is one digit, and each
  // further digit of seq adds one byte.
  const DataFrame f = test::sample_data(Direction::uplink, 19);
  const Bytes wire = test::encode_to_bytes(f, Encoding::json);
  std::cout << "JSON DATA frame, dev_id esp32-01, 19-byte ciphertext, seq 7, sessctr_id 54321, "
               "sendts_ms 1700000000123: "
            << wire.size() << " bytes\n";
  RecordProperty("json_data_size_esp32_19", static_cast<int>(wire.size()));
  // 174 bytes for everything but seq, plus its one digit.
  EXPECT_EQ(wire.size(), 175U);
}

TEST(CodecGolden, MaxEncodedDataSizeIsExactForTheWidestFrame) {
  for (const std::size_t payload :
       {std::size_t{0}, std::size_t{1}, std::size_t{19}, kMaxPayloadSize}) {
    DataFrame f = test::sample_data(Direction::uplink, payload);
    f.dev_id = test::make_dev_id(std::string(kDevIdMaxSize, 'w'));
    f.seq = UINT32_MAX;
    f.sessctr = UINT16_MAX;
    f.sendts_ms = test::kMaxSendTs;
    const std::size_t bound = max_encoded_data_size(payload);
    EXPECT_EQ(test::encode_to_bytes(f, Encoding::json).size(), bound) << payload;
    EXPECT_LT(test::encode_to_bytes(f, Encoding::compact).size(), bound) << payload;
    PskFrame p = test::sample_psk(payload);
    p.dev_id = f.dev_id;
    p.seq = UINT32_MAX;
    p.sendts_ms = test::kMaxSendTs;
    EXPECT_LE(test::encode_to_bytes(p, Encoding::json).size(), bound) << payload;
  }
  // The decoders' frame cap admits every frame the encoders can produce.
  EXPECT_LE(max_encoded_data_size(kMaxPayloadSize), kMaxFrameSize);
}

TEST(CodecGolden, DetectEncodingByFirstByte) {
  EXPECT_EQ(detect_encoding(test::as_bytes("{}")), Encoding::json);
  EXPECT_EQ(detect_encoding(test::as_bytes(" {}")), Encoding::compact);
  EXPECT_EQ(detect_encoding(Bytes{0x03, 0x7B}), Encoding::compact);
  EXPECT_EQ(detect_encoding(ByteView()), Encoding::compact);
}

}  // namespace
}  // namespace dsekp
