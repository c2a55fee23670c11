// DATA frames whose ciphertext lives in the caller's memory (DataFrameView), as the device SDK
// uses them: encoding from a ciphertext that is the tail of the output buffer itself, and
// decoding into a caller's buffer. Both must give exactly what the inline DataFrame paths give.
#include <gtest/gtest.h>

#include <cstring>

#include "codec_test_support.hpp"
#include "dsekp/codec.hpp"

namespace dsekp::test {
namespace {

constexpr Encoding kEncodings[] = {Encoding::json, Encoding::compact};

Bytes encode_inline(const DataFrame& frame, Encoding enc) {
  Bytes out(max_encoded_data_size(frame.ciphertext.size()));
  std::size_t n = 0;
  EXPECT_EQ(encode(frame, enc, out, n), Error::ok);
  out.resize(n);
  return out;
}

// Every payload length up to the cap, in both encodings: the ciphertext placed in the last bytes
// of the output buffer encodes to the same bytes as from a separate buffer (the JSON encoder's
// base64 must never overtake the ciphertext it has not read yet).
TEST(DataFrameView, CiphertextInTheTailOfTheOutputEncodesLikeASeparateOne) {
  for (const Encoding enc : kEncodings) {
    for (std::size_t len = 0; len <= kMaxPayloadSize; ++len) {
      const DataFrame frame = sample_data(Direction::uplink, len);
      const Bytes expected = encode_inline(frame, enc);
      const std::size_t n = frame.ciphertext.size();
      Bytes buffer(max_encoded_data_size(n), 0xee);
      std::memcpy(buffer.data() + buffer.size() - n, frame.ciphertext.view().data(), n);
      DataFrameView view = view_of(frame);
      view.ciphertext = ByteView(buffer).last(n);
      std::size_t written = 0;
      ASSERT_EQ(encode(view, enc, buffer, written), Error::ok) << len;
      ASSERT_EQ(Bytes(buffer.begin(), buffer.begin() + written), expected)
          << "payload " << n << (enc == Encoding::json ? " json" : " compact");
    }
  }
}

TEST(DataFrameView, AnyOtherOverlapWithTheOutputIsRefused) {
  const DataFrame frame = sample_data(Direction::uplink, 100);
  for (const Encoding enc : kEncodings) {
    Bytes buffer(max_encoded_data_size(100) + 8);
    DataFrameView view = view_of(frame);
    std::size_t written = 99;
    // Inside the buffer but not at its end.
    view.ciphertext = ByteView(buffer).subspan(buffer.size() - 108, 100);
    EXPECT_EQ(encode(view, enc, buffer, written), Error::invalid_argument);
    EXPECT_EQ(written, 0u);
    // At the start of the buffer, where the encoding begins.
    view.ciphertext = ByteView(buffer).first(100);
    EXPECT_EQ(encode(view, enc, buffer, written), Error::invalid_argument);
    // At the end of a buffer too short for the largest encoding of 100 bytes.
    const MutableByteView short_out = MutableByteView(buffer).last(max_encoded_data_size(100) - 1);
    view.ciphertext = ByteView(short_out).last(100);
    EXPECT_EQ(encode(view, enc, short_out, written), Error::invalid_argument);
  }
}

TEST(DataFrameView, DecodingIntoACallersBufferMatchesTheInlineDecoder) {
  for (const Encoding enc : kEncodings) {
    for (const std::size_t len : {0u, 1u, 2u, 3u, 47u, 48u, 49u, 1000u, 1024u}) {
      const DataFrame sent = sample_data(Direction::downlink, len);
      const Bytes wire = encode_inline(sent, enc);
      DataFrame inline_frame;
      ASSERT_EQ(decode_data(wire, Direction::downlink, inline_frame), Error::ok);
      Bytes storage(sent.ciphertext.size());
      DataFrameView view;
      ASSERT_EQ(decode_data(wire, Direction::downlink, view, storage), Error::ok) << len;
      EXPECT_EQ(view.ciphertext.data(), storage.data());
      EXPECT_EQ(Bytes(view.ciphertext.begin(), view.ciphertext.end()),
                Bytes(sent.ciphertext.view().begin(), sent.ciphertext.view().end()));
      EXPECT_EQ(view.seq, inline_frame.seq);
      EXPECT_EQ(view.sessctr, inline_frame.sessctr);
      EXPECT_EQ(view.sendts_ms, inline_frame.sendts_ms);
      EXPECT_TRUE(view.dev_id == inline_frame.dev_id);
      EXPECT_TRUE(view.tag.equals(inline_frame.tag));
      EXPECT_EQ(view.has_iv, inline_frame.has_iv);
      EXPECT_EQ(view.direction, Direction::downlink);
    }
  }
}

// A ciphertext the caller's buffer cannot hold is buffer_too_small; one above the protocol's cap
// stays payload_too_large whatever the buffer.
TEST(DataFrameView, ShortStorageIsBufferTooSmallAndOversizeIsPayloadTooLarge) {
  for (const Encoding enc : kEncodings) {
    const Bytes wire = encode_inline(sample_data(Direction::downlink, 64), enc);
    Bytes storage(63);
    DataFrameView view;
    EXPECT_EQ(decode_data(wire, Direction::downlink, view, storage), Error::buffer_too_small);
    EXPECT_TRUE(view.ciphertext.empty());
  }
  // JSON: 1,025 bytes of base64'd ciphertext; compact: 1,025 bytes before the tag.
  const std::string too_long_json =
      R"({"seq":1,"dev_id":"esp32-01","sessctr_id":2,"ciphertext":")" + std::string(1368 + 4, 'A') +
      R"(","iv":"AAAAAAAAAAAAAAAA",)" + R"("tag":"AAAAAAAAAAAAAAAAAAAAAA==","sendts_ms":3})";
  Bytes big_storage(4096);
  DataFrameView view;
  EXPECT_EQ(decode_data(as_bytes(too_long_json), Direction::downlink, view, big_storage),
            Error::payload_too_large);
  Bytes compact = encode_inline(sample_data(Direction::downlink, 1024), Encoding::compact);
  compact.insert(compact.end() - kTagSize, 0x00);
  EXPECT_EQ(decode_data(compact, Direction::downlink, view, big_storage), Error::payload_too_large);
}

TEST(DataFrameView, StorageOverlappingTheWireIsRefused) {
  Bytes wire = encode_inline(sample_data(Direction::downlink, 32), Encoding::compact);
  DataFrameView view;
  EXPECT_EQ(decode_data(wire, Direction::downlink, view, MutableByteView(wire)),
            Error::invalid_argument);
}

}  // namespace
}  // namespace dsekp::test
