// Tests of the strict base64 decoder on OpenSSL (codec_simdjson/strict_base64.hpp): RFC 4648
// vectors, exact-size output without overrun, every non-canonical form rejected, and agreement
// with the portable decoder (core/base64.hpp) exhaustively on final groups and on random text.
#include "strict_base64.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "base64.hpp"
#include "codec_test_support.hpp"
#include "tests/support/base64_cases.hpp"

namespace dsekp {
namespace {

using test::Bytes;

constexpr std::uint8_t kGuard = 0xA5;

// Decodes into a buffer of exactly `capacity` bytes followed by guard bytes that must survive.
Error strict_decode(std::string_view text, Bytes& out, std::size_t capacity = 2048) {
  Bytes buf(capacity + 8, kGuard);
  std::size_t n = 99;
  const Error e = simd_detail::base64::decode(text, MutableByteView(buf.data(), capacity), n);
  for (std::size_t i = capacity; i < buf.size(); ++i) {
    EXPECT_EQ(buf[i], kGuard) << "wrote past the buffer decoding \"" << text << '"';
  }
  if (e != Error::ok) {
    EXPECT_EQ(n, 0U);
  }
  out.assign(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(e == Error::ok ? n : 0));
  return e;
}

Error portable_decode(std::string_view text, Bytes& out, std::size_t capacity = 2048) {
  out.assign(capacity, 0);
  std::size_t n = 0;
  const Error e = base64::decode(text, out, n);
  out.resize(e == Error::ok ? n : 0);
  return e;
}

std::string portable_encode(const Bytes& in) {
  std::string out(base64::encoded_size(in.size()), '?');
  std::size_t n = 0;
  EXPECT_EQ(base64::encode(in, std::span<char>(out.data(), out.size()), n), Error::ok);
  return out;
}

TEST(StrictBase64, Rfc4648Vectors) {
  for (const auto& [plain, encoded] : test::kRfc4648Base64) {
    Bytes out;
    ASSERT_EQ(strict_decode(encoded, out), Error::ok) << encoded;
    EXPECT_EQ(test::as_string(out), plain);
  }
}

TEST(StrictBase64, EveryLengthIntoExactAndRoomyBuffers) {
  // OpenSSL writes 3 bytes per group, padding included; the decoder must still fit the exact size.
  // Exact, +1, +2 and roomy buffers take each of its three ways to call OpenSSL (straight into the
  // output, through the stack buffer, head and tail apart) at every length and padding.
  for (std::size_t len = 0; len <= 1100; ++len) {
    Bytes in(len);
    for (std::size_t i = 0; i < len; ++i) in[i] = static_cast<std::uint8_t>(i * 53 + len);
    const std::string text = portable_encode(in);
    for (const std::size_t capacity : {len, len + 1, len + 2, std::size_t{2048}}) {
      Bytes out;
      ASSERT_EQ(strict_decode(text, out, capacity), Error::ok) << len << " into " << capacity;
      ASSERT_EQ(out, in) << len << " into " << capacity;
    }
  }
}

TEST(StrictBase64, BufferTooSmallOnlyForValidText) {
  Bytes out;
  EXPECT_EQ(strict_decode("Zm9vYmFy", out, 5), Error::buffer_too_small);
  EXPECT_EQ(strict_decode("Zm9vYg==", out, 3), Error::buffer_too_small);
  EXPECT_EQ(strict_decode("Zm9vYg==", out, 4), Error::ok);
  EXPECT_EQ(strict_decode("", out, 0), Error::ok);
  // Invalid text is reported as invalid even when it would not fit either (as core/base64.hpp).
  EXPECT_EQ(strict_decode("Zm9v!mFy", out, 1), Error::bad_base64);
  // Non-zero unused bits are found after the size check, in both decoders.
  EXPECT_EQ(strict_decode("Zh==", out, 0), Error::buffer_too_small);
  EXPECT_EQ(portable_decode("Zh==", out, 0), Error::buffer_too_small);
}

TEST(StrictBase64, RejectsNonCanonicalText) {
  const auto& bad = test::kNonCanonicalBase64;
  for (const std::string_view text : bad) {
    Bytes out;
    EXPECT_EQ(strict_decode(text, out), Error::bad_base64) << '"' << text << '"';
  }
  Bytes out;
  EXPECT_EQ(strict_decode(std::string_view("Zm9\0", 4), out), Error::bad_base64);
  EXPECT_EQ(strict_decode(std::string_view("\0\0\0\0", 4), out), Error::bad_base64);
}

TEST(StrictBase64, UnusedBitsExhaustivelyAsPortable) {
  // Every final group with one or two padding characters, after a full group: the decoders must
  // agree on each (accept exactly when the unused bits are zero) and on the bytes.
  constexpr std::string_view kDigits =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t accepted = 0;
  for (const char a : kDigits) {
    for (const char b : kDigits) {
      const std::string two = std::string("Zm9v") + a + b + "==";
      Bytes s, p;
      const Error es = strict_decode(two, s);
      ASSERT_EQ(es, portable_decode(two, p)) << two;
      ASSERT_EQ(s, p) << two;
      accepted += es == Error::ok;
      for (const char c : kDigits) {
        const std::string one = std::string("Zm9v") + a + b + c + "=";
        const Error e1 = strict_decode(one, s);
        ASSERT_EQ(e1, portable_decode(one, p)) << one;
        ASSERT_EQ(s, p) << one;
        accepted += e1 == Error::ok;
      }
    }
  }
  EXPECT_EQ(accepted, 64U * 4U + 64U * 64U * 16U);  // 256 one-byte and 65536 two-byte tails
}

TEST(StrictBase64, RandomTextAgreesWithPortable) {
  // Valid encodings with a few characters replaced, inserted or removed, plus short strings over
  // a small alphabet that hits every rule: both decoders must agree on verdict and bytes.
  std::mt19937 rng(4648);
  constexpr std::string_view kChars = "AQgwBZaz09+/=-_ \n\\\x80";
  const auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  std::size_t ok = 0;
  for (int i = 0; i < 40000; ++i) {
    std::string text;
    if (i % 2 == 0) {
      Bytes in(pick(40));
      for (auto& b : in) b = static_cast<std::uint8_t>(rng());
      text = portable_encode(in);
      for (std::size_t edits = pick(3); edits > 0; --edits) {
        const char c = kChars[pick(kChars.size())];
        const std::size_t at = pick(text.size() + 1);
        switch (pick(3)) {
          case 0:
            if (at < text.size()) text[at] = c;
            break;
          case 1:
            text.insert(at, 1, c);
            break;
          default:
            if (at < text.size()) text.erase(at, 1);
            break;
        }
      }
    } else {
      text.resize(4 * (1 + pick(3)));
      for (char& c : text) c = kChars[pick(kChars.size())];
    }
    Bytes s, p;
    const Error es = strict_decode(text, s, 32);
    ASSERT_EQ(es, portable_decode(text, p, 32)) << '"' << text << '"';
    ASSERT_EQ(s, p) << text;
    ok += es == Error::ok;
  }
  EXPECT_GT(ok, 5000U);  // the run exercised acceptance too, not only rejection
}

}  // namespace
}  // namespace dsekp
