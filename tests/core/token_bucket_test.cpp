// Token bucket: burst, refill with remainder carried over, unlimited mode.
#include "dsekp/token_bucket.hpp"

#include <gtest/gtest.h>

namespace dsekp {
namespace {

TEST(TokenBucket, BurstThenRefillOnePerInterval) {
  const TokenBucketConfig config{3, 1000};
  TokenBucket b;
  EXPECT_TRUE(b.try_take(config, 5000));
  EXPECT_TRUE(b.try_take(config, 5000));
  EXPECT_TRUE(b.try_take(config, 5000));
  EXPECT_FALSE(b.try_take(config, 5999));
  EXPECT_TRUE(b.try_take(config, 6000));
  EXPECT_FALSE(b.try_take(config, 6500));
  EXPECT_TRUE(b.try_take(config, 7000));  // the 500 ms remainder was kept
}

TEST(TokenBucket, RefillNeverExceedsCapacity) {
  const TokenBucketConfig config{2, 10};
  TokenBucket b;
  EXPECT_TRUE(b.try_take(config, 0));
  EXPECT_TRUE(b.try_take(config, 1'000'000));
  EXPECT_TRUE(b.try_take(config, 1'000'000));
  EXPECT_FALSE(b.try_take(config, 1'000'000));
}

TEST(TokenBucket, ZeroCapacityMeansUnlimited) {
  TokenBucket b;
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(b.try_take({0, 1000}, 0));
}

// A clock stepped back grants no token, and does not stop the refill until it passes the old
// time again: one interval after the step there is a token.
TEST(TokenBucket, AClockSteppedBackGrantsNothingAndKeepsRefilling) {
  const TokenBucketConfig config{1, 1000};
  TokenBucket b;
  EXPECT_TRUE(b.try_take(config, 10'000));
  EXPECT_FALSE(b.try_take(config, 5'000));
  EXPECT_FALSE(b.try_take(config, 5'999));
  EXPECT_TRUE(b.try_take(config, 6'000));
  EXPECT_FALSE(b.try_take(config, 6'500));
  EXPECT_TRUE(b.try_take(config, 7'000));
}

}  // namespace
}  // namespace dsekp

namespace dsekp {
namespace {

TEST(TokenBucket, StateRoundTripsThroughRestore) {
  const TokenBucketConfig config{3, 1000};
  TokenBucket a;
  ASSERT_TRUE(a.try_take(config, 10'000));
  ASSERT_TRUE(a.try_take(config, 10'400));
  TokenBucket b;
  b.restore(a.state());
  EXPECT_EQ(a.state(), b.state());
  for (std::uint64_t t = 10'400; t < 20'000; t += 300)
    EXPECT_EQ(a.try_take(config, t), b.try_take(config, t)) << t;
}

TEST(TokenBucket, RestoredCountAboveCapacityIsCutBack) {
  TokenBucket b;
  b.restore({true, 1'000'000, 5'000});
  const TokenBucketConfig config{2, 60'000};
  EXPECT_TRUE(b.try_take(config, 5'000));
  EXPECT_TRUE(b.try_take(config, 5'000));
  EXPECT_FALSE(b.try_take(config, 5'000));
}

TEST(TokenBucket, RestoringAFreshStateGivesAFullBucketOnFirstUse) {
  TokenBucket b;
  b.restore(TokenBucketState{});
  EXPECT_FALSE(b.state().initialised);
  const TokenBucketConfig config{2, 60'000};
  EXPECT_TRUE(b.try_take(config, 0));
  EXPECT_TRUE(b.try_take(config, 0));
  EXPECT_FALSE(b.try_take(config, 0));
}

}  // namespace
}  // namespace dsekp
