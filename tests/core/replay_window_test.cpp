// Replay window: reordering, duplicates, the left edge, big jumps, seq 0 and the maximum seq,
// plus a randomized comparison against an obviously-correct reference (a set of accepted seqs).
#include "dsekp/replay_window.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>

namespace dsekp {
namespace {

TEST(ReplayWindow, FirstFrameMayBeSeqZero) {
  ReplayWindow w;
  EXPECT_EQ(w.top(), 0u);
  EXPECT_EQ(w.accept(0), Error::ok);
  EXPECT_EQ(w.accept(0), Error::replay);
  EXPECT_EQ(w.top(), 1u);
}

TEST(ReplayWindow, FirstFrameMayStartAnywhere) {
  ReplayWindow w;
  EXPECT_EQ(w.accept(1000), Error::ok);
  EXPECT_EQ(w.accept(1000 - 63), Error::ok);  // inside the 64-wide window
  EXPECT_EQ(w.accept(1000 - 64), Error::too_old);
}

TEST(ReplayWindow, InOrderAndDuplicates) {
  ReplayWindow w;
  for (std::uint32_t s = 0; s < 500; ++s) ASSERT_EQ(w.accept(s), Error::ok) << s;
  for (std::uint32_t s = 500 - 64; s < 500; ++s) EXPECT_EQ(w.accept(s), Error::replay) << s;
  EXPECT_EQ(w.accept(500 - 65), Error::too_old);
}

TEST(ReplayWindow, ReorderingInsideWindowIsAccepted) {
  ReplayWindow w;
  EXPECT_EQ(w.accept(10), Error::ok);
  EXPECT_EQ(w.accept(7), Error::ok);
  EXPECT_EQ(w.accept(9), Error::ok);
  EXPECT_EQ(w.accept(8), Error::ok);
  EXPECT_EQ(w.accept(7), Error::replay);
  EXPECT_EQ(w.accept(11), Error::ok);
  EXPECT_EQ(w.accept(10), Error::replay);
}

TEST(ReplayWindow, LeftEdgeExactly) {
  for (std::uint32_t size : {1u, 63u, 64u, 65u, 128u, 1000u, 1024u}) {
    ReplayWindow w(size);
    ASSERT_EQ(w.accept(5000), Error::ok);
    // The window covers seqs top-size .. top-1 = 5000-size+1 .. 5000.
    EXPECT_EQ(w.check(5000 - size + 1), size == 1 ? Error::replay : Error::ok) << size;
    EXPECT_EQ(w.check(5000 - size), Error::too_old) << size;
    if (size > 1) {
      EXPECT_EQ(w.accept(5000 - size + 1), Error::ok) << size;
      EXPECT_EQ(w.accept(5000 - size + 1), Error::replay) << size;
    }
  }
}

TEST(ReplayWindow, BigJumpForgetsEverythingBehind) {
  ReplayWindow w(128);
  for (std::uint32_t s = 0; s < 100; ++s) ASSERT_EQ(w.accept(s), Error::ok);
  EXPECT_EQ(w.accept(1'000'000), Error::ok);
  EXPECT_EQ(w.accept(99), Error::too_old);
  EXPECT_EQ(w.accept(1'000'000 - 127), Error::ok);  // never seen, inside the window
  EXPECT_EQ(w.accept(1'000'000 - 128), Error::too_old);
}

TEST(ReplayWindow, JumpByLessThanWindowKeepsHistory) {
  ReplayWindow w(256);
  EXPECT_EQ(w.accept(100), Error::ok);
  EXPECT_EQ(w.accept(100 + 150), Error::ok);  // shift by 150: crosses word boundaries
  EXPECT_EQ(w.accept(100), Error::replay);
  EXPECT_EQ(w.accept(101), Error::ok);
  EXPECT_EQ(w.accept(0), Error::ok);  // 250 seqs back, still inside the 256-wide window
}

TEST(ReplayWindow, MaximumSeq) {
  ReplayWindow w;
  const std::uint32_t max = 0xFFFFFFFFu;
  EXPECT_EQ(w.accept(max - 1), Error::ok);
  EXPECT_EQ(w.accept(max), Error::ok);
  EXPECT_EQ(w.top(), std::uint64_t{1} << 32);
  EXPECT_EQ(w.accept(max), Error::replay);
  EXPECT_EQ(w.accept(max - 1), Error::replay);
  EXPECT_EQ(w.accept(max - 2), Error::ok);
  EXPECT_EQ(w.accept(max - 64), Error::too_old);
}

TEST(ReplayWindow, CheckDoesNotMutate) {
  ReplayWindow w;
  EXPECT_EQ(w.check(5), Error::ok);
  EXPECT_EQ(w.check(5), Error::ok);
  EXPECT_EQ(w.top(), 0u);
  EXPECT_EQ(w.accept(5), Error::ok);
  EXPECT_EQ(w.check(5), Error::replay);
}

TEST(ReplayWindow, SizeIsClamped) {
  EXPECT_EQ(ReplayWindow(0).size(), 1u);
  EXPECT_EQ(ReplayWindow(5000).size(), ReplayWindow::kMaxSize);
  EXPECT_EQ(ReplayWindow().size(), 64u);
}

TEST(ReplayWindow, RestoreRoundTrips) {
  ReplayWindow a(300);
  for (std::uint32_t s : {3u, 9u, 200u, 201u, 450u}) ASSERT_EQ(a.accept(s), Error::ok);
  ReplayWindow b(300);
  b.restore(a.top(), a.bitmap());
  for (std::uint32_t s = 0; s < 600; ++s) EXPECT_EQ(a.check(s), b.check(s)) << s;
}

// Reference model: accepted iff never accepted before and within `size` of the highest accepted.
class ReferenceWindow {
 public:
  explicit ReferenceWindow(std::uint32_t size) : size_(size) {}
  Error accept(std::uint32_t seq) {
    if (!accepted_.empty()) {
      const std::uint64_t highest = *accepted_.rbegin();
      if (seq < highest && highest - seq >= size_) return Error::too_old;
    }
    if (accepted_.count(seq) != 0) return Error::replay;
    accepted_.insert(seq);
    return Error::ok;
  }

 private:
  std::uint32_t size_;
  std::set<std::uint32_t> accepted_;
};

TEST(ReplayWindow, MatchesReferenceModelOnRandomTraffic) {
  std::mt19937_64 rng(20261129);
  for (std::uint32_t size : {1u, 7u, 64u, 65u, 129u, 512u, 1024u}) {
    ReplayWindow w(size);
    ReferenceWindow ref(size);
    std::uint32_t base = 0;
    for (int i = 0; i < 20000; ++i) {
      // Mostly near the front, sometimes far back, sometimes a jump ahead.
      const std::uint64_t r = rng() % 100;
      std::uint32_t seq;
      if (r < 70) {
        seq = base + static_cast<std::uint32_t>(rng() % (size + 8));
        seq = seq >= size / 2 ? seq - size / 2 : 0;
      } else if (r < 95) {
        seq = base > 0 ? static_cast<std::uint32_t>(rng() % base) : 0;
      } else {
        seq = base + static_cast<std::uint32_t>(rng() % (3 * size + 3));
      }
      if (seq > base) base = seq;
      ASSERT_EQ(w.accept(seq), ref.accept(seq))
          << "size " << size << " step " << i << " seq " << seq;
    }
  }
}

}  // namespace
}  // namespace dsekp
