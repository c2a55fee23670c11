// Families computed at scrape time (Registry::add_computed) and the process metrics built on
// them (process_metrics.hpp): the same registration rules as the others, a fresh value on every
// scrape, and process values that follow what the process does.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <stdexcept>
#include <string>

#include "edge/metrics/metrics_registry.hpp"
#include "edge/metrics/process_metrics.hpp"
#include "edge/metrics/prometheus_text.hpp"

namespace dsekp::edge::metrics {
namespace {

double value_of(const Registry& r, const std::string& name) {
  for (const FamilySnapshot& f : r.collect())
    if (f.name == name) return std::get<double>(f.series.at(0).value);
  throw std::out_of_range(name);
}

TEST(ComputedMetrics, ReadAtEveryScrapeAndHeldToTheSameRules) {
  Registry r;
  double now = 1.5;
  r.add_computed({"x_seconds_total", "h", {}, {}}, MetricType::counter,
                 [&now] { return std::vector<double>{now}; });
  EXPECT_NE(write_text(r.collect()).find("# TYPE x_seconds_total counter\nx_seconds_total 1.5\n"),
            std::string::npos)
      << write_text(r.collect());
  now = 2.25;
  EXPECT_EQ(value_of(r, "x_seconds_total"), 2.25);
  EXPECT_THROW(r.add_computed({"x_seconds_total", "h", {}, {}}, MetricType::counter, {}),
               std::invalid_argument)
      << "a name taken";
  EXPECT_THROW(r.add_computed({"y", "h", {}, {}}, MetricType::counter, {}), std::invalid_argument)
      << "a counter without _total";
  EXPECT_THROW(r.add_computed({"z_total", "h", {}, {}}, MetricType::gauge, {}),
               std::invalid_argument);
  EXPECT_THROW(r.add_computed({"h", "h", {}, {}}, MetricType::histogram, {}),
               std::invalid_argument);
}

TEST(ComputedMetrics, ALabelledFamilyTakesOneValuePerSeries) {
  Registry r;
  r.add_computed({"silent", "h", {"over"}, {{"5m"}, {"1h"}}}, MetricType::gauge, [] {
    return std::vector<double>{3, 1};
  });
  const std::string text = write_text(r.collect());
  EXPECT_NE(text.find("silent{over=\"5m\"} 3\nsilent{over=\"1h\"} 1\n"), std::string::npos) << text;
}

TEST(ProcessMetrics, FollowTheProcess) {
  Registry r;
  declare_process_metrics(r);
  const double fds = value_of(r, "process_open_fds");
  const int fd = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(value_of(r, "process_open_fds"), fds + 1);
  ::close(fd);
  EXPECT_EQ(value_of(r, "process_open_fds"), fds);
  EXPECT_GT(value_of(r, "process_max_fds"), fds);

  const double cpu = value_of(r, "process_cpu_seconds_total");
  volatile double spin = 0;
  const std::clock_t until = std::clock() + CLOCKS_PER_SEC / 20;  // 50 ms of CPU
  while (std::clock() < until) spin = spin + 1;
  EXPECT_GE(value_of(r, "process_cpu_seconds_total"), cpu + 0.04);

  EXPECT_GT(value_of(r, "process_resident_memory_bytes"), 1e6);
  EXPECT_GE(value_of(r, "process_virtual_memory_bytes"),
            value_of(r, "process_resident_memory_bytes"));
  const double started = value_of(r, "process_start_time_seconds");
  const auto now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(started, now + 1);
  EXPECT_GT(started, now - 3600) << "this test process started within the hour";
}

}  // namespace
}  // namespace dsekp::edge::metrics
