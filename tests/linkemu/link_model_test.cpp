// The link's arithmetic without sockets: the token bucket's pass times, and the per-chunk draws
// (mean and spread of each delay distribution, probabilities), from fixed seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "linkemu/chunk_draws.hpp"
#include "linkemu/token_bucket.hpp"

namespace dsekp::linkemu {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(TokenBucket, UnlimitedPassesAtOnce) {
  TokenBucket bucket(0, 0);
  const Clock::time_point t0{1s};
  EXPECT_EQ(bucket.pass(t0, 1'000'000), t0);
  EXPECT_EQ(bucket.pass(t0, 1'000'000), t0);
}

TEST(TokenBucket, WithoutBurstItSerializes) {
  TokenBucket bucket(8'000'000, 0);  // 1 byte per microsecond
  const Clock::time_point t0{1s};
  EXPECT_EQ(bucket.pass(t0, 1000), t0 + 1000us);
  EXPECT_EQ(bucket.pass(t0, 1000), t0 + 2000us);  // behind the first
  // Offered after the link went idle: starts when offered.
  EXPECT_EQ(bucket.pass(t0 + 10ms, 500), t0 + 10ms + 500us);
}

TEST(TokenBucket, BurstPassesAtOnceThenRefillsAtRate) {
  TokenBucket bucket(8'000'000, 4000);
  const Clock::time_point t0{1s};
  EXPECT_EQ(bucket.pass(t0, 3000), t0);           // the bucket starts full
  EXPECT_EQ(bucket.pass(t0, 3000), t0 + 2000us);  // 1000 left, 2000 more at 1 B/us
  // After 10 ms idle the bucket is full again (capped at its depth).
  EXPECT_EQ(bucket.pass(t0 + 12ms, 4000), t0 + 12ms);
  // A chunk bigger than the depth waits for what it lacks.
  EXPECT_EQ(bucket.pass(t0 + 12ms, 5000), t0 + 17ms);
}

TEST(TokenBucket, ThroughputMatchesRate) {
  TokenBucket bucket(1'000'000, 1500);  // 125 kB/s
  const Clock::time_point t0{1s};
  Clock::time_point last = t0;
  for (int i = 0; i < 125; ++i) last = bucket.pass(t0, 1000);
  // 125 kB minus the initial 1500 B burst, at 125 kB/s.
  const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(last - t0);
  EXPECT_NEAR(static_cast<double>(elapsed.count()), 1e6 * (125000.0 - 1500) / 125000, 10);
}

struct Moments {
  double mean = 0;
  double sd = 0;
  double min = 0;
};

Moments sample(const LinkSpec& spec, int n) {
  ChunkDraws draws(spec, 42);
  std::vector<double> ms;
  for (int i = 0; i < n; ++i)
    ms.push_back(std::chrono::duration<double, std::milli>(draws.delay()).count());
  Moments m;
  m.min = ms.front();
  for (double v : ms) {
    m.mean += v;
    m.min = std::min(m.min, v);
  }
  m.mean /= n;
  for (double v : ms) m.sd += (v - m.mean) * (v - m.mean);
  m.sd = std::sqrt(m.sd / (n - 1));
  return m;
}

TEST(ChunkDraws, ConstantDelayWithoutJitter) {
  LinkSpec spec;
  spec.delay = 50ms;
  ChunkDraws draws(spec, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(draws.delay(), 50ms);
}

TEST(ChunkDraws, EachDistributionHasTheSpecsMeanAndSpread) {
  for (const DelayDistribution d :
       {DelayDistribution::normal, DelayDistribution::lognormal, DelayDistribution::pareto}) {
    LinkSpec spec;
    spec.delay = 250ms;
    spec.jitter = 80ms;
    spec.distribution = d;
    const Moments m = sample(spec, 50'000);
    EXPECT_NEAR(m.mean, 250, 250 * 0.03) << to_string(d);
    EXPECT_NEAR(m.sd, 80, 80 * 0.15) << to_string(d);
    EXPECT_GE(m.min, 0) << to_string(d);
  }
}

TEST(ChunkDraws, ParetoHasAFloorAndNormalIsCutAtZero) {
  LinkSpec spec;
  spec.delay = 250ms;
  spec.jitter = 80ms;
  spec.distribution = DelayDistribution::pareto;
  // alpha = 1 + sqrt(1 + (250/80)^2), x_m = 250 (alpha - 1) / alpha: no draw below x_m.
  const double alpha = 1 + std::sqrt(1 + (250.0 / 80) * (250.0 / 80));
  EXPECT_GE(sample(spec, 10'000).min, 250 * (alpha - 1) / alpha - 1e-6);

  spec.distribution = DelayDistribution::normal;
  spec.delay = 1ms;
  spec.jitter = 10ms;  // most draws would be negative
  EXPECT_EQ(sample(spec, 1000).min, 0);
}

TEST(ChunkDraws, Probabilities) {
  LinkSpec spec;
  spec.stall = 0.25;
  spec.drop = 0.0;
  ChunkDraws draws(spec, 7);
  int stalls = 0;
  int drops = 0;
  for (int i = 0; i < 20'000; ++i) {
    stalls += draws.stall() ? 1 : 0;
    drops += draws.drop() ? 1 : 0;
  }
  EXPECT_NEAR(stalls, 5000, 300);
  EXPECT_EQ(drops, 0);
  spec.drop = 1.0;
  draws.set_spec(spec);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(draws.drop());
}

TEST(ChunkDraws, SameSeedSameDraws) {
  LinkSpec spec;
  spec.delay = 20ms;
  spec.jitter = 10ms;
  ChunkDraws a(spec, 99);
  ChunkDraws b(spec, 99);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.delay(), b.delay());
}

}  // namespace
}  // namespace dsekp::linkemu
