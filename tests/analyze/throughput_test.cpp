// Throughput on hand-made cases: 1 s receive bins (out-of-order rows, negative-free floor), the
// two rate definitions, and the windowed rate series of the figure.
#include "throughput.hpp"

#include <gtest/gtest.h>

namespace dsekp::analyze {
namespace {

TEST(Throughput, BinsByReceiveSecondInAnyOrder) {
  ReceiveBins bins;
  for (const double t : {1000.0, 1999.9, 2000.0, 1500.0, 5999.0, 2000.5, 1000.0}) bins.add(t);
  EXPECT_EQ(bins.finish(), (std::vector<SecondCount>{{1, 4}, {2, 2}, {5, 1}}));
}

TEST(Throughput, RatesOverNonEmptyBinsAndActiveTime) {
  // Run 1: 3 packets in second 10, 1 in second 13 (seconds 10..13 active: 4 s).
  // Run 2: 2 packets in second 100 (1 s). 6 packets of 150 bytes.
  const std::vector<std::vector<SecondCount>> runs = {{{10, 3}, {13, 1}}, {{100, 2}}};
  const auto s = summarize_throughput(runs, 900);
  EXPECT_EQ(s.packets, 6u);
  EXPECT_EQ(s.occupied_bins, 3u);
  EXPECT_EQ(s.active_seconds, 5u);  // runs are not joined across the gap between them
  EXPECT_EQ(s.max_packets_in_bin, 3u);
  EXPECT_DOUBLE_EQ(*s.pps_nonempty_bins, 2.0);
  EXPECT_DOUBLE_EQ(*s.bps_nonempty_bins, 2400.0);
  EXPECT_DOUBLE_EQ(*s.pps_active, 1.2);
  EXPECT_DOUBLE_EQ(*s.bps_active, 1440.0);
}

TEST(Throughput, OnePacketEveryTwoSecondsIsOnePpsOverNonEmptyBins) {
  // The paper's Table 7 case: a packet every 2 s gives "1.00 pps" only over non-empty bins.
  std::vector<SecondCount> bins;
  for (std::int64_t s = 0; s < 100; s += 2) bins.push_back({s, 1});
  const std::vector<std::vector<SecondCount>> runs = {bins};
  const auto s = summarize_throughput(runs, 50 * 155);
  EXPECT_DOUBLE_EQ(*s.pps_nonempty_bins, 1.0);
  EXPECT_DOUBLE_EQ(*s.bps_nonempty_bins, 155.0 * 8);
  EXPECT_NEAR(*s.pps_active, 50.0 / 99.0, 1e-12);
}

TEST(Throughput, EmptyHasNoRates) {
  const auto s = summarize_throughput({}, 0);
  EXPECT_FALSE(s.pps_nonempty_bins);
  EXPECT_FALSE(s.pps_active);
}

TEST(Throughput, RateSeriesWindows) {
  // 10 active seconds, at most 4 points: windows of 3 s, the last one 1 s long.
  const std::vector<std::vector<SecondCount>> runs = {{{100, 3}, {102, 3}, {104, 6}, {109, 2}}};
  const auto series = rate_series(runs, 4);
  EXPECT_EQ(series.window_s, 3);
  ASSERT_EQ(series.points.size(), 4u);
  EXPECT_DOUBLE_EQ(series.points[0].t_s, 1.5);
  EXPECT_DOUBLE_EQ(series.points[0].pps, 2.0);  // 6 packets / 3 s
  EXPECT_DOUBLE_EQ(series.points[1].pps, 2.0);  // second 104
  EXPECT_DOUBLE_EQ(series.points[2].pps, 0.0);
  EXPECT_DOUBLE_EQ(series.points[3].t_s, 9.5);
  EXPECT_DOUBLE_EQ(series.points[3].pps, 2.0);  // 2 packets / 1 s
}

}  // namespace
}  // namespace dsekp::analyze
