// Tests of the strict base64 wrapper (core/base64.hpp): RFC 4648 vectors, exact-size output,
// chunk boundaries against a reference encoder, and every non-canonical form rejected.
#include "base64.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "codec_test_support.hpp"
#include "tests/support/base64_cases.hpp"

namespace dsekp {
namespace {

using test::Bytes;

std::string encode_string(const Bytes& in) {
  std::string out(base64::encoded_size(in.size()), '?');
  std::size_t n = 0;
  EXPECT_EQ(base64::encode(in, std::span<char>(out.data(), out.size()), n), Error::ok);
  EXPECT_EQ(n, out.size());
  return out;
}

Error decode_string(std::string_view text, Bytes& out, std::size_t capacity = 2048) {
  out.assign(capacity, 0xAA);
  std::size_t n = 0;
  const Error e = base64::decode(text, out, n);
  out.resize(e == Error::ok ? n : 0);
  if (e != Error::ok) {
    EXPECT_EQ(n, 0U);
  }
  return e;
}

// A deliberately naive, independent encoder used to check the mbedTLS-based one at every length.
std::string reference_encode(const Bytes& in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    const std::size_t left = in.size() - i;
    const std::uint32_t v = (std::uint32_t{in[i]} << 16) |
                            (left > 1 ? std::uint32_t{in[i + 1]} << 8 : 0) |
                            (left > 2 ? std::uint32_t{in[i + 2]} : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += left > 1 ? kAlphabet[(v >> 6) & 63] : '=';
    out += left > 2 ? kAlphabet[v & 63] : '=';
  }
  return out;
}

TEST(Base64, EncodedSize) {
  EXPECT_EQ(base64::encoded_size(0), 0U);
  EXPECT_EQ(base64::encoded_size(1), 4U);
  EXPECT_EQ(base64::encoded_size(2), 4U);
  EXPECT_EQ(base64::encoded_size(3), 4U);
  EXPECT_EQ(base64::encoded_size(4), 8U);
  EXPECT_EQ(base64::encoded_size(12), 16U);
  EXPECT_EQ(base64::encoded_size(16), 24U);
  EXPECT_EQ(base64::encoded_size(1024), 1368U);
}

TEST(Base64, Rfc4648Vectors) {
  for (const auto& [plain, encoded] : test::kRfc4648Base64) {
    EXPECT_EQ(encode_string(test::as_bytes(plain)), encoded);
    Bytes out;
    ASSERT_EQ(decode_string(encoded, out), Error::ok) << encoded;
    EXPECT_EQ(test::as_string(out), plain);
  }
}

TEST(Base64, EveryLengthMatchesReferenceAcrossChunkBoundaries) {
  // Lengths up to past a full payload cover every chunk boundary of the 48-byte chunked encoder.
  for (std::size_t len = 0; len <= 1100; ++len) {
    Bytes in(len);
    for (std::size_t i = 0; i < len; ++i) in[i] = static_cast<std::uint8_t>(i * 37 + len);
    const std::string encoded = encode_string(in);
    ASSERT_EQ(encoded, reference_encode(in)) << len;
    Bytes out;
    ASSERT_EQ(decode_string(encoded, out), Error::ok) << len;
    ASSERT_EQ(out, in) << len;
  }
}

TEST(Base64, EncodeNeedsNoTerminatorButRejectsShortBuffer) {
  const Bytes in = test::as_bytes("foob");  // 8 chars
  char exact[8];
  std::size_t n = 99;
  ASSERT_EQ(base64::encode(in, exact, n), Error::ok);
  EXPECT_EQ(std::string_view(exact, n), "Zm9vYg==");
  char small[7];
  n = 99;
  EXPECT_EQ(base64::encode(in, small, n), Error::buffer_too_small);
  EXPECT_EQ(n, 0U);
  n = 99;
  EXPECT_EQ(base64::encode(Bytes{}, std::span<char>(), n), Error::ok);
  EXPECT_EQ(n, 0U);
}

TEST(Base64, DecodeIntoExactAndTooSmallBuffers) {
  Bytes out;
  EXPECT_EQ(decode_string("Zm9vYmFy", out, 6), Error::ok);
  EXPECT_EQ(test::as_string(out), "foobar");
  EXPECT_EQ(decode_string("Zm9vYmFy", out, 5), Error::buffer_too_small);
  EXPECT_EQ(decode_string("Zm9vYg==", out, 1), Error::buffer_too_small);
  EXPECT_EQ(decode_string("", out, 0), Error::ok);
  EXPECT_TRUE(out.empty());
  // Invalid text is reported as invalid even when it would not fit either.
  EXPECT_EQ(decode_string("Zm9v!mFy", out, 1), Error::bad_base64);
}

TEST(Base64, RejectsNonCanonicalText) {
  const auto& bad = test::kNonCanonicalBase64;
  for (const std::string_view text : bad) {
    Bytes out;
    EXPECT_EQ(decode_string(text, out), Error::bad_base64) << '"' << text << '"';
  }
  Bytes out;
  EXPECT_EQ(decode_string(std::string_view("Zm9\0", 4), out), Error::bad_base64);
}

}  // namespace
}  // namespace dsekp
