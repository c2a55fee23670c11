// Tests of the raw-value conversions of the fast path (codec_simdjson/field_values.hpp), chiefly
// the integer reader's edges: every digit count up to and past 20, the 64-bit boundary, and the
// range limit, against an independent reference built on std::from_chars.
#include "field_values.hpp"

#include <gtest/gtest.h>

#include <charconv>
#include <random>
#include <string>

namespace dsekp {
namespace {

// Reference: canonical (digits only, no leading zero but "0") and from_chars-parsable within max.
bool reference_uint(const std::string& s, std::uint64_t max, std::uint64_t& out) {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v > max) return false;
  out = v;
  return true;
}

TEST(FieldValues, ReadUintEdges) {
  std::uint64_t v = 0;
  EXPECT_TRUE(simd_detail::read_uint("18446744073709551615", UINT64_MAX, v));
  EXPECT_EQ(v, UINT64_MAX);
  for (const char* bad : {"18446744073709551616", "18446744073709551620", "20000000000000000000",
                          "99999999999999999999", "100000000000000000000", "", "00", "01", "-1",
                          "+1", "1 ", " 1", "1.0", "1e3", "0x1", "1844674407370955161a"}) {
    EXPECT_FALSE(simd_detail::read_uint(bad, UINT64_MAX, v)) << bad;
  }
  EXPECT_TRUE(simd_detail::read_uint("0", 0, v));
  EXPECT_EQ(v, 0U);
  EXPECT_FALSE(simd_detail::read_uint("1", 0, v));
  EXPECT_TRUE(simd_detail::read_uint("65535", UINT16_MAX, v));
  EXPECT_FALSE(simd_detail::read_uint("65536", UINT16_MAX, v));
}

TEST(FieldValues, ReadUintMatchesReference) {
  std::mt19937_64 rng(53);
  const std::uint64_t maxima[] = {
      0, 255, UINT16_MAX, UINT32_MAX, (std::uint64_t{1} << 53) - 1, UINT64_MAX};
  for (int i = 0; i < 200000; ++i) {
    std::string s(1 + rng() % 22, '0');
    for (char& c : s) c = static_cast<char>('0' + rng() % 10);
    if (rng() % 8 == 0) s[rng() % s.size()] = "x-+. e"[rng() % 6];
    if (rng() % 4 == 0) s[0] = static_cast<char>('1' + rng() % 9);
    const std::uint64_t max = maxima[rng() % std::size(maxima)];
    std::uint64_t got = 0, want = 0;
    const bool ok = simd_detail::read_uint(s, max, got);
    ASSERT_EQ(ok, reference_uint(s, max, want)) << s << " max " << max;
    if (ok) {
      ASSERT_EQ(got, want) << s;
    }
  }
}

TEST(FieldValues, StringsAreCheckedRaw) {
  DevId id;
  EXPECT_TRUE(simd_detail::read_dev_id("\"esp32-01\"", id));
  EXPECT_EQ(id.str(), "esp32-01");
  for (const char* bad :
       {"esp32-01", "\"esp32-01", "esp32-01\"", "\"\"", "\"a\\u0062\"", "\"a\" \"b\"", "\""}) {
    EXPECT_FALSE(simd_detail::read_dev_id(bad, id)) << bad;
  }
  AeadNonce iv;
  EXPECT_TRUE(simd_detail::read_fixed("\"AAAAAAAAAAAAAAAA\"", iv.mutable_view()));
  EXPECT_FALSE(simd_detail::read_fixed("\"AAAAAAAAAAAAAAA=\"", iv.mutable_view()));      // 11 bytes
  EXPECT_FALSE(simd_detail::read_fixed("\"AAAAAAAAAAAAAAAAAAAA\"", iv.mutable_view()));  // 15
  BoundedBytes<kMaxPayloadSize> payload;
  EXPECT_TRUE(simd_detail::read_payload("\"\"", payload));
  EXPECT_EQ(payload.size(), 0U);
  EXPECT_TRUE(simd_detail::read_payload("\"aGVsbG8=\"", payload));
  EXPECT_EQ(payload.size(), 5U);
  EXPECT_FALSE(simd_detail::read_payload("aGVsbG8=", payload));
}

}  // namespace
}  // namespace dsekp
