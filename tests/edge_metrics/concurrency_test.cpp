// One thread updates (as the MQTT callback thread will) while another scrapes: every scrape must
// be a well-formed exposition whose counters never go backwards and whose histograms are
// internally consistent, and the final scrape must show exactly what was written.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "edge/metrics/metrics_registry.hpp"
#include "edge/metrics/prometheus_text.hpp"
#include "exposition_parser.hpp"

namespace dsekp::edge::metrics {
namespace {

// The writer goes on until the scraper has seen enough scrapes (so the two really overlap),
// within bounds on both loops.
constexpr int kMinScrapes = 50;
constexpr int kMaxScrapes = 100000;
constexpr std::uint64_t kMinUpdates = 100000;
constexpr std::uint64_t kMaxUpdates = 50000000;

TEST(MetricsConcurrency, ScrapesDuringUpdatesAreConsistent) {
  Registry r;
  auto& frames = r.add_counter({"f_total", "h", {"outcome"}, {{"accepted"}, {"rejected"}}});
  Counter& accepted = frames.at({"accepted"});
  Counter& rejected = frames.at({"rejected"});
  Gauge& active = r.add_gauge({"active", "h", {}, {}}).get();
  Histogram& seconds = r.add_histogram({"t_seconds", "h", {}, {}}, {0.25, 0.5}).get();

  std::atomic<bool> done{false};
  std::atomic<int> scrapes{0};
  std::uint64_t updates = 0;  // read after join
  std::thread writer([&] {
    std::uint64_t i = 0;
    for (; i < kMaxUpdates && (i < kMinUpdates || scrapes.load() < kMinScrapes); ++i) {
      accepted.inc();
      if (i % 4 == 0) rejected.inc();
      active.set(static_cast<double>(i % 100));
      // Powers of two: the final sum is exact whatever the order of additions.
      seconds.observe(i % 2 == 0 ? 0.125 : 1.0);
    }
    updates = i;
    done = true;
  });

  double last_accepted = 0;
  double last_count = 0;
  std::vector<std::string> failures;
  while (!done.load() && scrapes < kMaxScrapes && failures.empty()) {
    scrapes.fetch_add(1);
    const auto e = testing::parse_exposition(write_text(r.collect()));
    if (!e.errors.empty()) {
      failures.push_back(e.errors.front());
      break;
    }
    const double a = testing::find_sample(e, "f_total", {{"outcome", "accepted"}}).value_or(-1);
    const double le025 = testing::find_sample(e, "t_seconds_bucket", {{"le", "0.25"}}).value_or(-1);
    const double le05 = testing::find_sample(e, "t_seconds_bucket", {{"le", "0.5"}}).value_or(-1);
    const double inf = testing::find_sample(e, "t_seconds_bucket", {{"le", "+Inf"}}).value_or(-1);
    const double count = testing::find_sample(e, "t_seconds_count").value_or(-1);
    if (a < last_accepted) failures.push_back("counter went backwards");
    if (count < last_count) failures.push_back("histogram count went backwards");
    if (!(le025 <= le05 && le05 <= inf)) failures.push_back("buckets not cumulative");
    if (inf != count) failures.push_back("+Inf bucket differs from _count");
    last_accepted = a;
    last_count = count;
  }
  writer.join();
  EXPECT_TRUE(failures.empty()) << failures.front() << " (after " << scrapes << " scrapes)";
  EXPECT_GE(scrapes.load(), kMinScrapes);
  const std::uint64_t n = updates;
  const std::uint64_t small = (n + 1) / 2;  // even i observed 0.125, odd i 1.0

  const auto e = testing::parse_exposition(write_text(r.collect()));
  ASSERT_TRUE(e.errors.empty()) << e.errors.front();
  EXPECT_EQ(testing::find_sample(e, "f_total", {{"outcome", "accepted"}}), static_cast<double>(n));
  EXPECT_EQ(testing::find_sample(e, "f_total", {{"outcome", "rejected"}}),
            static_cast<double>((n + 3) / 4));
  EXPECT_EQ(testing::find_sample(e, "t_seconds_count"), static_cast<double>(n));
  EXPECT_EQ(testing::find_sample(e, "t_seconds_bucket", {{"le", "0.25"}}),
            static_cast<double>(small));
  EXPECT_EQ(testing::find_sample(e, "t_seconds_sum"),
            static_cast<double>(small) * 0.125 + static_cast<double>(n - small));
  EXPECT_EQ(testing::find_sample(e, "active"), static_cast<double>((n - 1) % 100));
}

}  // namespace
}  // namespace dsekp::edge::metrics
