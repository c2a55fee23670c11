// The pieces `dsekp bench e2e` and `dsekp bench scale` report with: percentiles (through the
// analysis library), the targets' rules (5 % or 10 us, whichever is larger; 1 ms; 100 %), and the
// /proc readers and their summary (CPU time and RSS of a process).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "bench/e2e/figures.hpp"
#include "bench/e2e/proc_sampler.hpp"

namespace {

using namespace dsekp::bench::e2e;

TEST(Figures, PercentilesAreRType7) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // 1..100, unsorted
  const Percentiles p = percentiles(v);
  EXPECT_EQ(p.n, 100u);
  EXPECT_DOUBLE_EQ(*p.p50, 50.5);
  EXPECT_DOUBLE_EQ(*p.p95, 95.05);
  EXPECT_DOUBLE_EQ(*p.p99, 99.01);
  EXPECT_DOUBLE_EQ(*p.min, 1);
  EXPECT_DOUBLE_EQ(*p.max, 100);
  EXPECT_FALSE(percentiles({}).p50.has_value());
}

TEST(Figures, LatencyParityAllowsTenMicrosecondsOrFivePercentWhicheverIsLarger) {
  // PSK p50 100 us: 5 % is 5 us, so the allowance is 10 us.
  EXPECT_DOUBLE_EQ(latency_parity_target(100.0, 110.0).limit, 10.0);
  EXPECT_TRUE(latency_parity_target(100.0, 110.0).met);
  EXPECT_FALSE(latency_parity_target(100.0, 110.5).met);
  // PSK p50 400 us: 5 % is 20 us.
  EXPECT_DOUBLE_EQ(latency_parity_target(400.0, 420.0).limit, 20.0);
  EXPECT_TRUE(latency_parity_target(400.0, 420.0).met);
  EXPECT_FALSE(latency_parity_target(400.0, 421.0).met);
  EXPECT_DOUBLE_EQ(*latency_parity_target(400.0, 421.0).value, 21.0);
  // An overhead bound: DSEKP faster than PSK meets it.
  EXPECT_TRUE(latency_parity_target(400.0, 300.0).met);
  // Nothing measured: not met, no value.
  EXPECT_FALSE(latency_parity_target(std::nullopt, 300.0).met);
  EXPECT_FALSE(latency_parity_target(std::nullopt, 300.0).value.has_value());
  EXPECT_STREQ(verdict(latency_parity_target(100.0, 200.0)), "NOT met");
}

TEST(Figures, HandshakeAndDeliveryTargets) {
  EXPECT_TRUE(handshake_target(999.9).met);
  EXPECT_FALSE(handshake_target(1000.0).met);
  EXPECT_FALSE(handshake_target(std::nullopt).met);
  EXPECT_TRUE(delivery_target("d", "DSEKP", 10, 10).met);
  EXPECT_DOUBLE_EQ(*delivery_target("d", "DSEKP", 10, 10).value, 100.0);
  EXPECT_FALSE(delivery_target("d", "DSEKP", 10, 9).met);
  EXPECT_FALSE(delivery_target("d", "DSEKP", 0, 0).met);  // nothing sent proves nothing
  const auto j = to_json(delivery_target("d", "DSEKP", 4, 3));
  EXPECT_EQ(j["met"], false);
  EXPECT_DOUBLE_EQ(j["value"].get<double>(), 75.0);
}

TEST(ProcReaders, ParseStatWithAWeirdCommandName) {
  // Field 2 may hold spaces and parentheses; utime and stime are fields 14 and 15.
  const std::string stat =
      "1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0 99 1000 50";
  const auto times = parse_stat_times(stat);
  ASSERT_TRUE(times.has_value());
  EXPECT_EQ(times->first, 250u);
  EXPECT_EQ(times->second, 75u);
  EXPECT_FALSE(parse_stat_times("1234 (cut off) S 1 2").has_value());
  EXPECT_FALSE(parse_stat_times("no parenthesis").has_value());
}

TEST(ProcReaders, ParseStatusMemory) {
  const auto m = parse_status_memory("Name:\tedge\nVmHWM:\t   20480 kB\nVmRSS:\t   16384 kB\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->first, 16384u);
  EXPECT_EQ(m->second, 20480u);
  EXPECT_FALSE(parse_status_memory("Name:\tzombie\nState:\tZ\n").has_value());
}

TEST(ProcReaders, ReadsThisProcessAndNotAMissingOne) {
  const auto self = read_proc(::getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_GT(self->rss_kb, 0u);
  EXPECT_GE(self->hwm_kb, self->rss_kb);
  EXPECT_GE(self->cpu_s(), 0.0);
  EXPECT_FALSE(read_proc(0x7ffffff0).has_value());
}

TEST(ProcReaders, SummaryOfSamples) {
  std::vector<ProcSample> s;
  auto sample = [](double t, double user, double sys, std::uint64_t rss, std::uint64_t hwm) {
    ProcSample p;
    p.t_s = t;
    p.reading.cpu_user_s = user;
    p.reading.cpu_sys_s = sys;
    p.reading.rss_kb = rss;
    p.reading.hwm_kb = hwm;
    return p;
  };
  s.push_back(sample(0, 1.0, 0.5, 1000, 1000));
  s.push_back(sample(1, 1.2, 0.6, 3000, 3000));    // 30 % in this second
  s.push_back(sample(2, 1.3, 0.6, 2000, 3500));    // HWM saw a peak between samples
  s.push_back(sample(2.1, 1.3, 0.6, 2000, 3500));  // the extra sample at stop(): too short
  const ProcSummary p = summarize(s);
  EXPECT_EQ(p.samples, 4u);
  EXPECT_NEAR(p.wall_s, 2.1, 1e-12);
  EXPECT_NEAR(p.cpu_user_s, 0.3, 1e-12);
  EXPECT_NEAR(p.cpu_sys_s, 0.1, 1e-12);
  EXPECT_NEAR(p.cpu_percent, 100.0 * 0.4 / 2.1, 1e-9);
  EXPECT_NEAR(p.cpu_percent_max_1s, 30.0, 1e-9);
  EXPECT_EQ(p.rss_peak_kb, 3500u);
  EXPECT_EQ(p.rss_final_kb, 2000u);
  EXPECT_EQ(summarize({}).samples, 0u);
}

TEST(ProcReaders, SamplerTakesSamplesUntilStopped) {
  ProcSampler sampler({::getpid(), 0x7ffffff0}, std::chrono::milliseconds(20));
  sampler.start();
  // 25 periods: one wake-up of the sampling thread is all the count below needs.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  sampler.stop();
  // A sample at start(), at least one from the thread, one at stop().
  EXPECT_GE(sampler.samples(0).size(), 3u);
  EXPECT_TRUE(sampler.samples(1).empty());  // no such process
  const auto& s = sampler.samples(0);
  for (std::size_t i = 1; i < s.size(); ++i) EXPECT_GE(s[i].t_s, s[i - 1].t_s);
}

}  // namespace
