// Fixed-size key/nonce/tag types refuse wrong lengths: at compile time through from(), at run time
// through assign(), never by padding or truncating silently.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "dsekp/spec.hpp"

namespace dsekp {
namespace {

template <typename T, typename Arg>
concept buildable_from = requires(const Arg& a) {
  T::from(a);
};

static_assert(buildable_from<DevSecret, std::array<std::uint8_t, 32>>);
static_assert(!buildable_from<DevSecret, std::array<std::uint8_t, 16>>);
static_assert(!buildable_from<DevSecret, std::vector<std::uint8_t>>);  // length unknown
static_assert(buildable_from<AeadNonce, std::array<std::uint8_t, 12>>);
static_assert(!buildable_from<AeadNonce, std::array<std::uint8_t, 16>>);

TEST(StrongTypes, AssignRefusesWrongLengthAndKeepsTheOldValue) {
  DevSecret secret;
  std::vector<std::uint8_t> bytes(32, 0x11);
  ASSERT_TRUE(secret.assign(bytes));
  const std::vector<std::uint8_t> short_secret(16, 0x22);
  EXPECT_FALSE(secret.assign(short_secret));
  EXPECT_FALSE(secret.assign(std::vector<std::uint8_t>(33, 0x22)));
  for (std::uint8_t b : secret.view()) EXPECT_EQ(b, 0x11);

  Proof proof;
  EXPECT_FALSE(proof.assign(std::vector<std::uint8_t>(15, 1)));
  EXPECT_TRUE(proof.assign(std::vector<std::uint8_t>(16, 1)));
}

TEST(StrongTypes, SecretsAreWipedWhenMovedFrom) {
  std::array<std::uint8_t, 16> raw{};
  raw.fill(0x5C);
  AeadKey a = AeadKey::from(raw);
  AeadKey b = std::move(a);
  for (std::uint8_t x : a.view()) EXPECT_EQ(x, 0);  // NOLINT(bugprone-use-after-move)
  for (std::uint8_t x : b.view()) EXPECT_EQ(x, 0x5C);
}

}  // namespace
}  // namespace dsekp
