// The Redis and metrics readers of `dsekp bench scale --store redis` (bench/e2e/redis_stats.hpp,
// bench/metrics_scrape.hpp): INFO text parsed into the totals and per-command calls, housekeeping
// (PING, INFO) kept out of the work count, before/after differences, and one sample from
// Prometheus text.
// (The readers against a real Redis and real edges run in bench_cli_test.cpp's two-edge case.)
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "bench/e2e/redis_stats.hpp"
#include "bench/metrics_scrape.hpp"

namespace {

using namespace dsekp::bench::e2e;
using dsekp::bench::metric_value;
using dsekp::bench::scrape_metrics;

TEST(RedisStats, ParsesInfoSections) {
  const std::string text =
      "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n\r\n"
      "# Stats\r\ntotal_connections_received:4\r\ntotal_commands_processed:1234\r\n\r\n"
      "# Commandstats\r\n"
      "cmdstat_evalsha:calls=400,usec=9000,usec_per_call=22.50,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_hget:calls=20,usec=40,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_ping:calls=30,usec=10,usec_per_call=0.33,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_info:calls=3,usec=100,usec_per_call=33.33,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_client|setname:calls=2,usec=3,usec_per_call=1.50,rejected_calls=0\r\n"
      "cmdstat_cluster|info:calls=7,usec=70,usec_per_call=10.00,rejected_calls=0\r\n"
      "cmdstat_replconf:calls=50,usec=50,usec_per_call=1.00,rejected_calls=0\r\n"
      "not a line\r\n";
  const RedisStats s = parse_redis_info(text);
  EXPECT_EQ(s.version, "7.0.15");
  EXPECT_EQ(s.total_commands, 1234u);
  ASSERT_EQ(s.calls.size(), 7u);
  EXPECT_EQ(s.calls.at("evalsha"), 400u);
  EXPECT_EQ(s.calls.at("client|setname"), 2u);
  // No PING, INFO, CLUSTER INFO (the probes and our readings) or REPLCONF (replication).
  EXPECT_EQ(s.work_commands(), 400u + 20u + 2u);
}

TEST(RedisStats, DifferenceCountsFromZeroForNewCommands) {
  RedisStats before, after;
  before.total_commands = 100;
  before.calls = {{"evalsha", 10}, {"ping", 5}};
  after.total_commands = 160;
  after.calls = {{"evalsha", 50}, {"ping", 9}, {"hget", 7}};
  const RedisStats d = difference(after, before);
  EXPECT_EQ(d.total_commands, 60u);
  EXPECT_EQ(d.calls.at("evalsha"), 40u);
  EXPECT_EQ(d.calls.at("hget"), 7u);
  EXPECT_EQ(d.work_commands(), 47u);
  // A counter that went backwards (a Redis restart) gives no negative count.
  EXPECT_EQ(difference(before, after).total_commands, 0u);
  EXPECT_EQ(difference(before, after).calls.count("evalsha"), 0u);
}

TEST(RedisStats, UnreachableRedisIsAClearError) {
  // Port 1 on loopback: nothing listens there (connection refused at once).
  try {
    (void)read_redis_stats("127.0.0.1", 1);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("Redis on 127.0.0.1:1"), std::string::npos) << e.what();
  }
}

TEST(MetricsScrape, FindsUnlabelledSamples) {
  const std::string text =
      "HTTP/1.0 200 OK\r\n\r\n# HELP dsekp_store_round_trips_total Network round trips.\n"
      "# TYPE dsekp_store_round_trips_total counter\n"
      "dsekp_store_round_trips_total 829\n"
      "dsekp_store_round_trips_total_extra 5\n"
      "dsekp_frames_total{outcome=\"accepted\"} 12\n";
  EXPECT_EQ(metric_value(text, "dsekp_store_round_trips_total"), 829.0);
  EXPECT_FALSE(metric_value(text, "dsekp_frames_total").has_value());  // labelled only
  EXPECT_FALSE(metric_value(text, "dsekp_absent").has_value());
  EXPECT_FALSE(scrape_metrics(1).has_value());  // nothing listens: nothing, promptly
}

}  // namespace
