// Histogram buckets: "le" semantics (a value equal to a bound counts in that bucket), cumulative
// counts in the exposition, +Inf equal to _count, and NaN not poisoning the sum.
#include <gtest/gtest.h>

#include <limits>

#include "edge/metrics/metric_types.hpp"
#include "edge/metrics/metrics_registry.hpp"
#include "edge/metrics/prometheus_text.hpp"
#include "exposition_parser.hpp"

namespace dsekp::edge::metrics {
namespace {

TEST(MetricsHistogram, SnapshotIsCumulativeWithInfEqualToCount) {
  Histogram h({0.25, 0.5, 1.0});
  for (double v : {0.125, 0.25, 0.3, 0.5, 0.75, 1.0, 2.0, 1e9, -1.0}) h.observe(v);
  const HistogramSnapshot s = h.snapshot();
  EXPECT_EQ(s.upper_bounds, (std::vector<double>{0.25, 0.5, 1.0}));
  // <=0.25: 0.125, 0.25, -1 | <=0.5: +0.3, 0.5 | <=1: +0.75, 1.0 | +Inf: +2, 1e9
  EXPECT_EQ(s.cumulative, (std::vector<std::uint64_t>{3, 5, 7}));
  EXPECT_EQ(s.count, 9U);
  EXPECT_DOUBLE_EQ(s.sum, 0.125 + 0.25 + 0.3 + 0.5 + 0.75 + 1.0 + 2.0 + 1e9 - 1.0);
}

TEST(MetricsHistogram, NaNIsIgnoredAndInfinityGoesToTheInfBucket) {
  Histogram h({1.0});
  h.observe(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(h.snapshot().count, 0U);
  EXPECT_EQ(h.snapshot().sum, 0.0);
  h.observe(std::numeric_limits<double>::infinity());
  EXPECT_EQ(h.snapshot().cumulative, std::vector<std::uint64_t>{0});
  EXPECT_EQ(h.snapshot().count, 1U);
}

TEST(MetricsHistogram, ExpositionBucketsAreCumulativeAndEndWithInf) {
  Registry r;
  auto& fam = r.add_histogram({"proc_seconds", "Processing time.", {"mode"}, {{"a"}, {"b"}}},
                              {5e-6, 1e-4, 0.1});
  Histogram& a = fam.at({"a"});
  for (double v : {1e-6, 5e-6, 5e-5, 5e-5, 0.05, 3.0}) a.observe(v);

  const std::string text = write_text(r.collect());
  const auto e = testing::parse_exposition(text);
  ASSERT_TRUE(e.errors.empty()) << e.errors.front() << "\n" << text;

  auto bucket = [&](const char* series, const char* le) {
    return testing::find_sample(e, "proc_seconds_bucket", {{"mode", series}, {"le", le}});
  };
  EXPECT_EQ(bucket("a", "5e-06"), 2.0);
  EXPECT_EQ(bucket("a", "0.0001"), 4.0);
  EXPECT_EQ(bucket("a", "0.1"), 5.0);
  EXPECT_EQ(bucket("a", "+Inf"), 6.0);
  EXPECT_EQ(testing::find_sample(e, "proc_seconds_count", {{"mode", "a"}}), 6.0);
  EXPECT_EQ(bucket("b", "+Inf"), 0.0);
  EXPECT_EQ(testing::find_sample(e, "proc_seconds_sum", {{"mode", "b"}}), 0.0);
  // The le label comes after the family's labels, buckets in increasing order.
  EXPECT_NE(text.find("proc_seconds_bucket{mode=\"a\",le=\"5e-06\"} 2\n"
                      "proc_seconds_bucket{mode=\"a\",le=\"0.0001\"} 4\n"
                      "proc_seconds_bucket{mode=\"a\",le=\"0.1\"} 5\n"
                      "proc_seconds_bucket{mode=\"a\",le=\"+Inf\"} 6\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace dsekp::edge::metrics
