// Reliability on hand-made cases with exact expected numbers: lost, duplicate and unexpected
// packets, per device, sessions, and the same device in two runs kept apart.
#include "reliability.hpp"

#include <gtest/gtest.h>

#include "analysis.hpp"
#include "log_files.hpp"
#include "test_support.hpp"

namespace dsekp::analyze {
namespace {

using testing::TempDir;
using testing::write_file;

TEST(Reliability, HandMadeKeys) {
  // Stream 0 = "a": sends seq 0..4 in session 7; 2 is lost, 3 arrives three times.
  // Stream 1 = "b": sends seq 0..1 in sessions 1 and 2; everything arrives, plus seq 9 of
  // session 2 that the client never logged, and the client logged seq 0 of session 1 twice.
  std::vector<std::uint64_t> client = {
      packet_key(0, 7, 0), packet_key(0, 7, 1), packet_key(0, 7, 2), packet_key(0, 7, 3),
      packet_key(0, 7, 4), packet_key(1, 1, 0), packet_key(1, 1, 0), packet_key(1, 1, 1),
      packet_key(1, 2, 0), packet_key(1, 2, 1)};
  std::vector<std::uint64_t> server = {
      packet_key(0, 7, 3), packet_key(0, 7, 0), packet_key(0, 7, 1), packet_key(0, 7, 3),
      packet_key(0, 7, 4), packet_key(0, 7, 3), packet_key(1, 2, 1), packet_key(1, 1, 0),
      packet_key(1, 1, 1), packet_key(1, 2, 0), packet_key(1, 2, 9)};
  const std::vector<std::string> streams = {"a", "b"};
  const Reliability r = compute_reliability(client, server, streams);

  EXPECT_EQ(r.total.sent, 9u);
  EXPECT_EQ(r.total.received, 8u);
  EXPECT_EQ(r.total.lost, 1u);
  EXPECT_EQ(r.total.duplicates, 2u);
  EXPECT_EQ(r.total.unexpected, 1u);
  EXPECT_EQ(r.total.client_duplicate_rows, 1u);
  EXPECT_EQ(r.total.server_rows, 11u);
  EXPECT_EQ(r.total.sessions, 3u);
  EXPECT_DOUBLE_EQ(*r.total.delivery_pct(), 800.0 / 9.0);

  ASSERT_EQ(r.devices.size(), 2u);
  const auto& a = r.devices[0];
  EXPECT_EQ(a.dev_id, "a");
  EXPECT_EQ(a.counts.sent, 5u);
  EXPECT_EQ(a.counts.received, 4u);
  EXPECT_EQ(a.counts.lost, 1u);
  EXPECT_EQ(a.counts.duplicates, 2u);
  EXPECT_EQ(a.counts.unexpected, 0u);
  EXPECT_EQ(a.counts.sessions, 1u);
  EXPECT_DOUBLE_EQ(*a.counts.delivery_pct(), 80.0);
  const auto& b = r.devices[1];
  EXPECT_EQ(b.counts.sent, 4u);
  EXPECT_EQ(b.counts.received, 4u);
  EXPECT_EQ(b.counts.lost, 0u);
  EXPECT_EQ(b.counts.unexpected, 1u);
  EXPECT_EQ(b.counts.client_duplicate_rows, 1u);
  EXPECT_EQ(b.counts.sessions, 2u);
  EXPECT_DOUBLE_EQ(*b.counts.delivery_pct(), 100.0);
}

TEST(Reliability, NothingSentHasNoDeliveryPercentage) {
  std::vector<std::uint64_t> client;
  std::vector<std::uint64_t> server = {packet_key(0, 0, 1)};
  const std::vector<std::string> streams = {"a"};
  const Reliability r = compute_reliability(client, server, streams);
  EXPECT_EQ(r.total.unexpected, 1u);
  EXPECT_FALSE(r.total.delivery_pct());
}

// Through the log files: two PSK runs of the same device (seq restarts at 0 in the second run)
// must not be mistaken for duplicates.
TEST(Reliability, TwoRunsOfTheSameDeviceAreKeptApart) {
  TempDir dir;
  const std::string client_header = "seq,timestamp,dev_id,sendts_ms,payload_size\n";
  const std::string server_header = "seq,dev_id,recvts_ms,latency_ms,payload_size\n";
  const auto c1 = write_file(dir / "c1.csv",
                             client_header + "0,t,d,1000,150\n1,t,d,3000,150\n2,t,d,5000,150\n");
  const auto s1 =
      write_file(dir / "s1.csv", server_header + "0,d,1100,100,150\n2,d,5100,100,150\n");
  const auto c2 = write_file(dir / "c2.csv", client_header + "0,t,d,9000,150\n1,t,d,11000,150\n");
  const auto s2 = write_file(
      dir / "s2.csv", server_header + "0,d,9100,100,150\n1,d,11100,100,150\n1,d,11200,200,150\n");
  AnalysisInputs inputs;
  inputs.psk = {{s1, c1}, {s2, c2}};
  const auto result = analyze_logs(inputs, {});
  ASSERT_TRUE(result.psk && result.psk->reliability);
  const auto& t = result.psk->reliability->total;
  EXPECT_EQ(t.sent, 5u);
  EXPECT_EQ(t.received, 4u);
  EXPECT_EQ(t.lost, 1u);
  EXPECT_EQ(t.duplicates, 1u);
  EXPECT_EQ(t.unexpected, 0u);
  ASSERT_EQ(result.psk->reliability->devices.size(), 1u);  // one device, summed over runs
  EXPECT_EQ(result.psk->reliability->devices[0].counts.sent, 5u);
  EXPECT_EQ(result.psk->reliability_runs, 2u);
}

TEST(Reliability, RunsWithoutClientLogAreLeftOut) {
  TempDir dir;
  const auto s1 = write_file(dir / "s1.csv",
                             "seq,dev_id,recvts_ms,latency_ms,payload_size\n0,d,1100,100,150\n");
  AnalysisInputs inputs;
  inputs.psk = {{s1, std::nullopt}};
  const auto result = analyze_logs(inputs, {});
  ASSERT_TRUE(result.psk);
  EXPECT_FALSE(result.psk->reliability);
  EXPECT_EQ(result.psk->reliability_runs, 0u);
  EXPECT_EQ(result.psk->latency.stats.n, 1u);
}

}  // namespace
}  // namespace dsekp::analyze
