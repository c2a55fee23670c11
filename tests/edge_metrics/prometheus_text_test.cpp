// The text exposition writer: the format spec's own examples (without their optional
// timestamps, which the edge does not write), escaping, number formatting, and the exact output
// for a small registry.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <limits>

#include "edge/metrics/metrics_registry.hpp"
#include "edge/metrics/prometheus_text.hpp"
#include "exposition_parser.hpp"

namespace dsekp::edge::metrics {
namespace {

TEST(MetricsText, SpecCounterExample) {
  const std::vector<FamilySnapshot> families{
      {"http_requests_total",
       "The total number of HTTP requests.",
       MetricType::counter,
       {"method", "code"},
       {{{"post", "200"}, std::uint64_t{1027}}, {{"post", "400"}, std::uint64_t{3}}}}};
  EXPECT_EQ(write_text(families),
            "# HELP http_requests_total The total number of HTTP requests.\n"
            "# TYPE http_requests_total counter\n"
            "http_requests_total{method=\"post\",code=\"200\"} 1027\n"
            "http_requests_total{method=\"post\",code=\"400\"} 3\n");
}

TEST(MetricsText, SpecHistogramExample) {
  HistogramSnapshot h{
      {0.05, 0.1, 0.2, 0.5, 1}, {24054, 33444, 100392, 129389, 133988}, 144320, 53423};
  const std::vector<FamilySnapshot> families{{"http_request_duration_seconds",
                                              "A histogram of the request duration.",
                                              MetricType::histogram,
                                              {},
                                              {{{}, h}}}};
  EXPECT_EQ(write_text(families),
            "# HELP http_request_duration_seconds A histogram of the request duration.\n"
            "# TYPE http_request_duration_seconds histogram\n"
            "http_request_duration_seconds_bucket{le=\"0.05\"} 24054\n"
            "http_request_duration_seconds_bucket{le=\"0.1\"} 33444\n"
            "http_request_duration_seconds_bucket{le=\"0.2\"} 100392\n"
            "http_request_duration_seconds_bucket{le=\"0.5\"} 129389\n"
            "http_request_duration_seconds_bucket{le=\"1\"} 133988\n"
            "http_request_duration_seconds_bucket{le=\"+Inf\"} 144320\n"
            "http_request_duration_seconds_sum 53423\n"
            "http_request_duration_seconds_count 144320\n");
}

TEST(MetricsText, SpecEscapingExample) {
  // The spec's label values C:\DIR\FILE.TXT and  Cannot find file:<newline>"FILE.TXT".
  const std::vector<FamilySnapshot> families{
      {"msdos_file_access_time_seconds",
       "Access time.",
       MetricType::gauge,
       {"path", "error"},
       {{{"C:\\DIR\\FILE.TXT", "Cannot find file:\n\"FILE.TXT\""}, 1.458255915e9}}}};
  const std::string text = write_text(families);
  EXPECT_NE(text.find("msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\","
                      "error=\"Cannot find file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e+09\n"),
            std::string::npos)
      << text;
  // And it reads back to the original values.
  const auto e = testing::parse_exposition(text);
  ASSERT_TRUE(e.errors.empty()) << e.errors.front();
  EXPECT_EQ(testing::find_sample(
                e, "msdos_file_access_time_seconds",
                {{"path", "C:\\DIR\\FILE.TXT"}, {"error", "Cannot find file:\n\"FILE.TXT\""}}),
            1.458255915e9);
}

TEST(MetricsText, SpecMinimalAndInfiniteLines) {
  const std::vector<FamilySnapshot> families{
      {"metric_without_timestamp_and_labels", "m", MetricType::gauge, {}, {{{}, 12.47}}},
      {"something_weird",
       "w",
       MetricType::gauge,
       {"problem"},
       {{{"division by zero"}, std::numeric_limits<double>::infinity()}}}};
  EXPECT_EQ(write_text(families),
            "# HELP metric_without_timestamp_and_labels m\n"
            "# TYPE metric_without_timestamp_and_labels gauge\n"
            "metric_without_timestamp_and_labels 12.47\n"
            "# HELP something_weird w\n"
            "# TYPE something_weird gauge\n"
            "something_weird{problem=\"division by zero\"} +Inf\n");
}

TEST(MetricsText, LabelValueEscaping) {
  EXPECT_EQ(escape_label_value("plain"), "plain");
  EXPECT_EQ(escape_label_value("a\\b"), "a\\\\b");
  EXPECT_EQ(escape_label_value("say \"hi\""), "say \\\"hi\\\"");
  EXPECT_EQ(escape_label_value("two\nlines"), "two\\nlines");
  EXPECT_EQ(escape_label_value("\\\"\n"), "\\\\\\\"\\n");
  // Anything else, tabs and UTF-8 included, is written as it is.
  EXPECT_EQ(escape_label_value("tab\there \xc3\xa9"), "tab\there \xc3\xa9");
}

TEST(MetricsText, HelpEscapingLeavesQuotes) {
  EXPECT_EQ(escape_help("a\\b\nc \"q\""), "a\\\\b\\nc \"q\"");
  const std::vector<FamilySnapshot> families{
      {"g", "line one\nline \\two\\", MetricType::gauge, {}, {{{}, 0.0}}}};
  EXPECT_EQ(write_text(families), "# HELP g line one\\nline \\\\two\\\\\n# TYPE g gauge\ng 0\n");
}

TEST(MetricsText, SampleValueFormatting) {
  EXPECT_EQ(format_sample_value(0.0), "0");
  EXPECT_EQ(format_sample_value(1.0), "1");
  EXPECT_EQ(format_sample_value(-3.5), "-3.5");
  EXPECT_EQ(format_sample_value(0.1), "0.1");
  EXPECT_EQ(format_sample_value(5e-6), "5e-06");
  EXPECT_EQ(format_sample_value(2.5e-5), "2.5e-05");
  EXPECT_EQ(format_sample_value(0.0001), "0.0001");
  EXPECT_EQ(format_sample_value(0.00025), "0.00025");
  EXPECT_EQ(format_sample_value(144320), "144320");
  EXPECT_EQ(format_sample_value(999999), "999999");
  EXPECT_EQ(format_sample_value(1e6), "1e+06");
  EXPECT_EQ(format_sample_value(1234567), "1.234567e+06");
  EXPECT_EQ(format_sample_value(-0.5), "-0.5");
  EXPECT_EQ(format_sample_value(1e21), "1e+21");
  EXPECT_EQ(format_sample_value(1e-100), "1e-100");
  EXPECT_EQ(format_sample_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_sample_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_sample_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  // Shortest form, yet exactly the same double when read back.
  for (double v : {0.1 + 0.2, 1.0 / 3.0, 6.02214076e23, 4.9e-324, -1.7976931348623157e308}) {
    const std::string s = format_sample_value(v);
    double back = 0;
    std::from_chars(s.data(), s.data() + s.size(), back);
    EXPECT_EQ(back, v) << s;
  }
}

TEST(MetricsText, CountersAreExactIntegers) {
  const std::vector<FamilySnapshot> families{
      {"big_total", "b", MetricType::counter, {}, {{{}, std::uint64_t{18446744073709551615U}}}}};
  EXPECT_EQ(write_text(families),
            "# HELP big_total b\n# TYPE big_total counter\nbig_total 18446744073709551615\n");
}

TEST(MetricsText, EmptyRegistryIsEmptyText) {
  Registry r;
  EXPECT_EQ(write_text(r.collect()), "");
}

TEST(MetricsText, KnownRegistryExactly) {
  Registry r;
  auto& requests =
      r.add_counter({"demo_requests_total", "Requests handled.", {"code"}, {{"200"}, {"500"}}});
  Gauge& temperature = r.add_gauge({"demo_temperature_celsius", "Temperature.", {}, {}}).get();
  Histogram& latency =
      r.add_histogram({"demo_latency_seconds", "Latency.", {}, {}}, {0.25, 0.5, 1}).get();
  requests.at({"200"}).add(7);
  requests.at({"500"}).inc();
  temperature.set(-3.5);
  for (double v : {0.125, 0.25, 0.75, 2.0}) latency.observe(v);

  EXPECT_EQ(write_text(r.collect()),
            "# HELP demo_latency_seconds Latency.\n"
            "# TYPE demo_latency_seconds histogram\n"
            "demo_latency_seconds_bucket{le=\"0.25\"} 2\n"
            "demo_latency_seconds_bucket{le=\"0.5\"} 2\n"
            "demo_latency_seconds_bucket{le=\"1\"} 3\n"
            "demo_latency_seconds_bucket{le=\"+Inf\"} 4\n"
            "demo_latency_seconds_sum 3.125\n"
            "demo_latency_seconds_count 4\n"
            "# HELP demo_requests_total Requests handled.\n"
            "# TYPE demo_requests_total counter\n"
            "demo_requests_total{code=\"200\"} 7\n"
            "demo_requests_total{code=\"500\"} 1\n"
            "# HELP demo_temperature_celsius Temperature.\n"
            "# TYPE demo_temperature_celsius gauge\n"
            "demo_temperature_celsius -3.5\n");
}

TEST(MetricsText, GrammarCheckerCatchesBrokenLines) {
  // The checker used by the other tests must itself refuse what Prometheus would refuse.
  for (const char* bad : {
           "# TYPE x counter\nx{a=\"unterminated} 1\n",  // quote never closed
           "# TYPE x counter\nx{a=\"b\\t\"} 1\n",        // \t is not an escape of the format
           "# TYPE x counter\nx 1,5\n",                  // locale decimal comma
           "# TYPE x counter\nx 1\n\n",                  // empty line
           "# TYPE x counter\nx 1",                      // no final newline
           "# TYPE x counter\ny 1\n",                    // sample outside its TYPE block
           "# TYPE x histogram\nx_bucket 1\n",           // bucket without le
           "# TYPE x gauge\nx 1\n# TYPE x gauge\n",      // family repeated
           "# TYPE x gauge\nx 1\nx 2\n",                 // series repeated
           "# TYPE x thing\nx 1\n",                      // unknown type
       }) {
    EXPECT_FALSE(testing::parse_exposition(bad).errors.empty()) << bad;
  }
  EXPECT_TRUE(testing::parse_exposition("# HELP x h\n# TYPE x counter\nx{a=\"\\\\\"} 1 123\n")
                  .errors.empty());
}

}  // namespace
}  // namespace dsekp::edge::metrics
