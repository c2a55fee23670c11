// The deterministic test RNGs: SeededRng is repeatable, seed-dependent, independent of how the
// stream is split into calls, and pinned to the C++ standard's mt19937_64; ScriptedRng replays
// its script in order and fails loudly on a wrong length or when used up.
#include <array>

#include "crypto/testing/seeded_rng.hpp"
#include "crypto_test_util.hpp"

namespace dsekp::test {
namespace {

Bytes draw(Rng& rng, std::size_t n) {
  Bytes out(n);
  EXPECT_EQ(rng.fill(out), Error::ok);
  return out;
}

TEST(SeededRng, SameSeedSameBytes) {
  SeededRng a(42), b(42);
  EXPECT_EQ(draw(a, 1000), draw(b, 1000));
  EXPECT_EQ(draw(a, 77), draw(b, 77));
}

TEST(SeededRng, DifferentSeedsDifferentBytes) {
  SeededRng a(1), b(2), c(0);
  const Bytes x = draw(a, 64), y = draw(b, 64), z = draw(c, 64);
  EXPECT_NE(x, y);
  EXPECT_NE(x, z);
  EXPECT_NE(y, z);
}

TEST(SeededRng, StreamDoesNotDependOnCallSizes) {
  SeededRng whole(7);
  const Bytes expected = draw(whole, 200);
  SeededRng pieces(7);
  Bytes got;
  for (std::size_t n : {1, 3, 0, 8, 5, 13, 64, 2, 104}) {
    const Bytes part = draw(pieces, n);
    got.insert(got.end(), part.begin(), part.end());
  }
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_EQ(got, expected);
}

// C++ standard [rand.predef]: the 10000th consecutive output of a default-constructed
// mt19937_64 (seed 5489) is 9981545732273789042. SeededRng emits each output little-endian.
TEST(SeededRng, MatchesTheStandardMt19937_64) {
  SeededRng rng(5489);
  const Bytes stream = draw(rng, 10000 * 8);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | stream[9999 * 8 + static_cast<std::size_t>(i)];
  EXPECT_EQ(v, 9981545732273789042ull);
}

TEST(ScriptedRng, ReturnsEntriesInOrderThenFails) {
  ScriptedRng rng({{1, 2, 3}, {}, {9, 8, 7, 6}});
  EXPECT_EQ(rng.remaining(), 3u);
  EXPECT_EQ(draw(rng, 3), (Bytes{1, 2, 3}));
  EXPECT_EQ(rng.fill({}), Error::ok);  // the empty entry answers a zero-length request
  EXPECT_EQ(draw(rng, 4), (Bytes{9, 8, 7, 6}));
  EXPECT_EQ(rng.remaining(), 0u);

  std::array<std::uint8_t, 4> out = {0xA5, 0xA5, 0xA5, 0xA5};
  EXPECT_EQ(rng.fill(out), Error::invalid_argument);
  EXPECT_TRUE(all_zero(out));
  EXPECT_EQ(rng.fill({}), Error::invalid_argument);
}

TEST(ScriptedRng, WrongLengthFailsWithoutConsuming) {
  ScriptedRng rng({{1, 2, 3}});
  std::array<std::uint8_t, 2> small = {0xA5, 0xA5};
  EXPECT_EQ(rng.fill(small), Error::invalid_argument);
  EXPECT_TRUE(all_zero(small));
  std::array<std::uint8_t, 4> large = {0xA5, 0xA5, 0xA5, 0xA5};
  EXPECT_EQ(rng.fill(large), Error::invalid_argument);
  EXPECT_TRUE(all_zero(large));
  EXPECT_EQ(rng.remaining(), 1u);
  EXPECT_EQ(draw(rng, 3), (Bytes{1, 2, 3}));
}

}  // namespace
}  // namespace dsekp::test
