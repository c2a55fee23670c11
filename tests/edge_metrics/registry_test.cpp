// Registry rules: Prometheus names, the _total suffix, label sets declared up front, collisions
// between families' sample names, and that a refused registration changes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "edge/metrics/metric_names.hpp"
#include "edge/metrics/metrics_registry.hpp"

namespace dsekp::edge::metrics {
namespace {

TEST(MetricNames, MetricNameRules) {
  for (const char* ok : {"a", "_a", "dsekp_frames_total", "A9_b"}) {
    EXPECT_TRUE(is_valid_metric_name(ok)) << ok;
  }
  // ':' is valid Prometheus but reserved for recording rules, so refused for an exporter.
  for (const char* bad : {"", "9a", "a-b", "a b", "a.b", "a:b", "\xc3\xa9t\xc3\xa9", "a\n"}) {
    EXPECT_FALSE(is_valid_metric_name(bad)) << bad;
  }
}

TEST(MetricNames, LabelNameRules) {
  for (const char* ok : {"reason", "_x", "mode2"}) EXPECT_TRUE(is_valid_label_name(ok)) << ok;
  for (const char* bad : {"", "__name__", "__x", "1a", "a-b", "a:b"}) {
    EXPECT_FALSE(is_valid_label_name(bad)) << bad;
  }
}

TEST(MetricsRegistry, CounterMustEndInTotal) {
  Registry r;
  EXPECT_THROW(r.add_counter({"dsekp_frames", "h", {}, {}}), std::invalid_argument);
  EXPECT_THROW(r.add_counter({"_total", "h", {}, {}}), std::invalid_argument);
  EXPECT_THROW(r.add_counter({"dsekp_frames_totals", "h", {}, {}}), std::invalid_argument);
  EXPECT_NO_THROW(r.add_counter({"dsekp_frames_total", "h", {}, {}}));
}

TEST(MetricsRegistry, OnlyCountersEndInTotal) {
  Registry r;
  EXPECT_THROW(r.add_gauge({"x_total", "h", {}, {}}), std::invalid_argument);
  EXPECT_THROW(r.add_histogram({"y_total", "h", {}, {}}, {1.0}), std::invalid_argument);
}

TEST(MetricsRegistry, RefusesInvalidNamesAndEmptyHelp) {
  Registry r;
  EXPECT_THROW(r.add_gauge({"bad-name", "h", {}, {}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"", "h", {}, {}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"g", "", {}, {}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"g", "h", {"__reserved"}, {{"v"}}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"g", "h", {"bad-label"}, {{"v"}}}), std::invalid_argument);
  EXPECT_TRUE(r.collect().empty());
}

TEST(MetricsRegistry, LabelSetsAreDeclaredUpFront) {
  Registry r;
  // Same label twice, a series of the wrong arity, duplicate series, empty value, no series.
  EXPECT_THROW(r.add_gauge({"g", "h", {"a", "a"}, {{"x", "y"}}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"g", "h", {"a", "b"}, {{"x"}}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"g", "h", {"a"}, {{"x"}, {"x"}}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"g", "h", {"a"}, {{""}}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"g", "h", {"a"}, {}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"g", "h", {}, {{"x"}}}), std::invalid_argument);
  EXPECT_THROW(r.add_histogram({"hist", "h", {"le"}, {{"1"}}}, {1.0}), std::invalid_argument);

  auto& g = r.add_gauge({"g", "h", {"a", "b"}, {{"x", "1"}, {"x", "2"}}});
  EXPECT_EQ(g.size(), 2U);
  g.at({"x", "2"}).set(5);
  EXPECT_EQ(g.at({"x", "2"}).value(), 5.0);
  EXPECT_EQ(g.at({"x", "1"}).value(), 0.0);
  // No series can be made up later: an undeclared combination is an error, not a new series.
  EXPECT_THROW(g.at({"x", "3"}), std::out_of_range);
  EXPECT_THROW(g.at({"x"}), std::out_of_range);
  EXPECT_THROW(g.get(), std::out_of_range);
}

TEST(MetricsRegistry, RefusesNamesThatCollideWithAnotherFamilysSamples) {
  Registry r;
  r.add_histogram({"lat_seconds", "h", {}, {}}, {1.0});
  EXPECT_THROW(r.add_gauge({"lat_seconds", "h", {}, {}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"lat_seconds_count", "h", {}, {}}), std::invalid_argument);
  EXPECT_THROW(r.add_gauge({"lat_seconds_bucket", "h", {}, {}}), std::invalid_argument);

  r.add_gauge({"size_sum", "h", {}, {}});
  EXPECT_THROW(r.add_histogram({"size", "h", {}, {}}, {1.0}), std::invalid_argument);
  EXPECT_THROW(r.add_counter({"size_sum", "h", {}, {}}), std::invalid_argument);
  EXPECT_EQ(r.collect().size(), 2U);
}

TEST(MetricsRegistry, RefusesBadBucketsWithoutRegistering) {
  Registry r;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::vector<double>& bad : std::vector<std::vector<double>>{
           {}, {1.0, 1.0}, {2.0, 1.0}, {1.0, inf}, {nan}, {-inf, 1.0}}) {
    EXPECT_THROW(r.add_histogram({"h_seconds", "h", {}, {}}, bad), std::invalid_argument);
  }
  EXPECT_TRUE(r.collect().empty());
  EXPECT_NO_THROW(r.add_histogram({"h_seconds", "h", {}, {}}, {-1.0, 0.0, 1.0}));
}

TEST(MetricsRegistry, CollectIsSortedByNameWithSeriesInDeclarationOrder) {
  Registry r;
  r.add_gauge({"zeta", "h", {}, {}});
  r.add_counter({"alpha_total", "h", {"k"}, {{"z"}, {"a"}}});
  r.add_gauge({"mid", "h", {}, {}});
  const auto families = r.collect();
  ASSERT_EQ(families.size(), 3U);
  EXPECT_EQ(families[0].name, "alpha_total");
  EXPECT_EQ(families[1].name, "mid");
  EXPECT_EQ(families[2].name, "zeta");
  ASSERT_EQ(families[0].series.size(), 2U);
  EXPECT_EQ(families[0].series[0].label_values, std::vector<std::string>{"z"});
  EXPECT_EQ(families[0].type, MetricType::counter);
}

TEST(MetricsRegistry, CounterAndGaugeValues) {
  Registry r;
  Counter& c = r.add_counter({"c_total", "h", {}, {}}).get();
  Gauge& g = r.add_gauge({"g", "h", {}, {}}).get();
  c.inc();
  c.add(41);
  g.inc();
  g.inc();
  g.dec();
  g.add(0.5);
  EXPECT_EQ(c.value(), 42U);
  EXPECT_EQ(g.value(), 1.5);
  const auto families = r.collect();
  EXPECT_EQ(std::get<std::uint64_t>(families[0].series[0].value), 42U);
  EXPECT_EQ(std::get<double>(families[1].series[0].value), 1.5);
}

}  // namespace
}  // namespace dsekp::edge::metrics
