// core/hex: the spelling of provisioning material and admin payloads, both directions.
#include "hex.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace dsekp {
namespace {

std::string encoded(const std::vector<std::uint8_t>& bytes) {
  std::string out(2 * bytes.size(), '?');
  EXPECT_TRUE(hex::encode(ByteView(bytes), out));
  return out;
}

TEST(Hex, EncodesLowercaseTwoDigitsPerByte) {
  EXPECT_EQ(encoded({}), "");
  EXPECT_EQ(encoded({0x00, 0x09, 0x0a, 0x0f, 0x10, 0x9f, 0xa0, 0xff}), "00090a0f109fa0ff");
  std::array<char, 3> small{};
  const std::array<std::uint8_t, 2> two{1, 2};
  EXPECT_FALSE(hex::encode(ByteView(two), small));
}

TEST(Hex, EveryByteRoundTripsInEitherCase) {
  std::vector<std::uint8_t> all(256);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint8_t>(i);
  std::string text = encoded(all);
  std::vector<std::uint8_t> back(all.size());
  ASSERT_TRUE(hex::decode(text, MutableByteView(back)));
  EXPECT_EQ(back, all);
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::fill(back.begin(), back.end(), 0);
  ASSERT_TRUE(hex::decode(text, MutableByteView(back)));
  EXPECT_EQ(back, all);
}

TEST(Hex, EveryCharacterThatIsNoDigitIsRefusedAndFound) {
  const std::string digits = "0123456789abcdefABCDEF";
  for (int c = 0; c < 256; ++c) {
    const char ch = static_cast<char>(c);
    const bool is_digit = digits.find(ch) != std::string::npos;
    const std::string text = std::string("a1") + ch + "0";
    std::array<std::uint8_t, 2> out{0x55, 0x55};
    EXPECT_EQ(hex::decode(text, MutableByteView(out)), is_digit) << c;
    EXPECT_EQ(hex::find_non_digit(text), is_digit ? 4u : 2u) << c;
    if (!is_digit) {
      EXPECT_EQ(out, (std::array<std::uint8_t, 2>{0, 0})) << "wiped, " << c;
    }
  }
}

TEST(Hex, OddLengthsAndShortOutputsAreRefused) {
  std::array<std::uint8_t, 2> out{};
  EXPECT_FALSE(hex::decode("abc", MutableByteView(out)));
  EXPECT_FALSE(hex::decode("aabbcc", MutableByteView(out)));
  EXPECT_TRUE(hex::decode("", MutableByteView(out)));
}

}  // namespace
}  // namespace dsekp
