// The client/server log join behind `dsekp bench e2e` and `dsekp bench scale`: latencies in
// microseconds per frame, frames identified by (dev_id, sessctr_id, seq) in DSEKP mode and
// (dev_id, seq) in PSK mode, duplicates, unexpected and missing frames, bad rows, and clear errors
// for unusable files. The logs are written here with the real column layouts (docs/LOGS.md plus
// the sendts_us / recvts_us columns).
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "bench/e2e/latency_join.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

using dsekp::Mode;
using dsekp::bench::e2e::join_logs;
using dsekp::test::TempDir;

constexpr const char* kDsekpClientHeader =
    "seq,sessctr_id,timestamp,dev_id,plaintext,iv,tag,ciphertext,sendts_ms,payload_size,"
    "sendts_us\n";
constexpr const char* kDsekpServerHeader =
    "seq,timestamp,dev_id,sessctr_id,ciphertext,iv,tag,plaintext,recvts_ms,latency_ms,"
    "payload_size,bin_1s,throughput,recvts_us\n";
constexpr const char* kPskClientHeader =
    "seq,timestamp,dev_id,plaintext,iv,tag,ciphertext,sendts_ms,payload_size,sendts_us\n";
constexpr const char* kPskServerHeader =
    "seq,timestamp,dev_id,ciphertext,iv,tag,plaintext,recvts_ms,latency_ms,payload_size,bin_1s,"
    "throughput,recvts_us\n";

std::string dsekp_client_row(int seq, int sessctr, const std::string& dev, long long us) {
  return std::to_string(seq) + "," + std::to_string(sessctr) + ",2025-01-01T00:00:00.000Z," + dev +
         ",\"{\"\"t\"\":24.0,\"\"h\"\":51.0}\",aXY=,dGFn,Y3Q=," + std::to_string(us / 1000) +
         ",170," + std::to_string(us) + "\n";
}

std::string dsekp_server_row(int seq, int sessctr, const std::string& dev, long long us) {
  return std::to_string(seq) + ",2025-01-01T00:00:00.000Z," + dev + "," + std::to_string(sessctr) +
         ",Y3Q=,aXY=,dGFn,\"{\"\"t\"\":24.0,\"\"h\"\":51.0}\"," + std::to_string(us / 1000) +
         ",0,170,1,1," + std::to_string(us) + "\n";
}

std::string psk_client_row(int seq, const std::string& dev, long long us) {
  return std::to_string(seq) + ",2025-01-01T00:00:00.000Z," + dev +
         ",\"{\"\"t\"\":24.0,\"\"h\"\":51.0}\",aXY=,dGFn,Y3Q=," + std::to_string(us / 1000) +
         ",150," + std::to_string(us) + "\n";
}

std::string psk_server_row(int seq, const std::string& dev, long long us) {
  return std::to_string(seq) + ",2025-01-01T00:00:00.000Z," + dev +
         ",Y3Q=,aXY=,dGFn,\"{\"\"t\"\":24.0,\"\"h\"\":51.0}\"," + std::to_string(us / 1000) +
         ",0,150,1,1," + std::to_string(us) + "\n";
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

TEST(LatencyJoin, DsekpFramesJoinByDeviceSessionAndSeqInMicroseconds) {
  TempDir dir;
  const long long t = 1'700'000'000'000'000LL;
  // Two devices; dev-a has two sessions that both use seq 0 (must not be confused).
  write(dir.file("c.csv"), std::string(kDsekpClientHeader) + dsekp_client_row(0, 7, "dev-a", t) +
                               dsekp_client_row(1, 7, "dev-a", t + 1000) +
                               dsekp_client_row(0, 9, "dev-a", t + 2000) +
                               dsekp_client_row(0, 7, "dev-b", t + 3000));
  write(dir.file("s.csv"), std::string(kDsekpServerHeader) +
                               dsekp_server_row(0, 7, "dev-a", t + 85) +
                               dsekp_server_row(0, 9, "dev-a", t + 2000 + 123) +
                               dsekp_server_row(1, 7, "dev-a", t + 1000 + 97) +
                               dsekp_server_row(0, 7, "dev-b", t + 3000 + 250));
  const auto r = join_logs(dir.file("c.csv"), dir.file("s.csv"), Mode::dsekp);
  EXPECT_EQ(r.client_rows, 4u);
  EXPECT_EQ(r.server_rows, 4u);
  EXPECT_EQ(r.sent, 4u);
  EXPECT_EQ(r.received, 4u);
  EXPECT_EQ(r.duplicates, 0u);
  EXPECT_EQ(r.unexpected, 0u);
  EXPECT_EQ(r.bad_rows, 0u);
  EXPECT_DOUBLE_EQ(r.delivery_ratio(), 1.0);
  // In server-log order, each matched to its own session's send time.
  ASSERT_EQ(r.latency_us.size(), 4u);
  EXPECT_DOUBLE_EQ(r.latency_us[0], 85);
  EXPECT_DOUBLE_EQ(r.latency_us[1], 123);
  EXPECT_DOUBLE_EQ(r.latency_us[2], 97);
  EXPECT_DOUBLE_EQ(r.latency_us[3], 250);
  // The edge was idle for the first row (nothing before it), the second (2,038 us after the
  // first) and the fourth; the third arrived before the second's stamp + 1 ms.
  EXPECT_EQ(r.idle_latency_us, (std::vector<double>{85, 123, 250}));
}

TEST(LatencyJoin, CountsMissingDuplicateUnexpectedAndNegative) {
  TempDir dir;
  const long long t = 1'700'000'000'000'000LL;
  write(dir.file("c.csv"), std::string(kDsekpClientHeader) + dsekp_client_row(0, 1, "d", t) +
                               dsekp_client_row(1, 1, "d", t + 10) +
                               dsekp_client_row(2, 1, "d", t + 20));
  write(dir.file("s.csv"), std::string(kDsekpServerHeader) + dsekp_server_row(0, 1, "d", t + 50) +
                               dsekp_server_row(0, 1, "d", t + 900) +  // redelivered
                               dsekp_server_row(5, 1, "d", t + 60) +   // never sent
                               dsekp_server_row(2, 1, "d", t + 15));   // before its send time
  const auto r = join_logs(dir.file("c.csv"), dir.file("s.csv"), Mode::dsekp);
  EXPECT_EQ(r.sent, 3u);
  EXPECT_EQ(r.received, 2u);  // seq 1 is missing
  EXPECT_EQ(r.duplicates, 1u);
  EXPECT_EQ(r.unexpected, 1u);
  EXPECT_EQ(r.negative, 1u);
  EXPECT_NEAR(r.delivery_ratio(), 2.0 / 3.0, 1e-12);
  ASSERT_EQ(r.latency_us.size(), 2u);
  EXPECT_DOUBLE_EQ(r.latency_us[0], 50);  // the first arrival counts, not the redelivery
  EXPECT_DOUBLE_EQ(r.latency_us[1], -5);
}

TEST(LatencyJoin, PskFramesJoinByDeviceAndSeq) {
  TempDir dir;
  const long long t = 1'700'000'000'123'456LL;
  write(dir.file("c.csv"), std::string(kPskClientHeader) + psk_client_row(0, "a", t) +
                               psk_client_row(0, "b", t + 5) + psk_client_row(1, "a", t + 50));
  write(dir.file("s.csv"), std::string(kPskServerHeader) + psk_server_row(0, "b", t + 5 + 40) +
                               psk_server_row(0, "a", t + 70) +
                               psk_server_row(1, "a", t + 50 + 33));
  const auto r = join_logs(dir.file("c.csv"), dir.file("s.csv"), Mode::psk);
  EXPECT_EQ(r.sent, 3u);
  EXPECT_EQ(r.received, 3u);
  ASSERT_EQ(r.latency_us.size(), 3u);
  EXPECT_DOUBLE_EQ(r.latency_us[0], 40);
  EXPECT_DOUBLE_EQ(r.latency_us[1], 70);
  EXPECT_DOUBLE_EQ(r.latency_us[2], 33);
}

TEST(LatencyJoin, BadRowsAreCountedAndNamedNotJoined) {
  TempDir dir;
  const long long t = 1'700'000'000'000'000LL;
  write(dir.file("c.csv"), std::string(kPskClientHeader) + psk_client_row(0, "a", t) +
                               "1,2025-01-01T00:00:00.000Z,a,x,y,z,w,1,2\n" +  // short
                               psk_client_row(2, "a", t + 20));
  std::string bad_stamp = psk_server_row(2, "a", t + 30);
  bad_stamp.replace(bad_stamp.rfind(',') + 1, std::string::npos, "soon\n");
  write(dir.file("s.csv"),
        std::string(kPskServerHeader) + psk_server_row(0, "a", t + 9) + bad_stamp);
  const auto r = join_logs(dir.file("c.csv"), dir.file("s.csv"), Mode::psk);
  EXPECT_EQ(r.sent, 2u);
  EXPECT_EQ(r.received, 1u);
  EXPECT_EQ(r.bad_rows, 2u);
  ASSERT_EQ(r.first_bad.size(), 2u);
  EXPECT_NE(r.first_bad[0].find("c.csv line 3"), std::string::npos) << r.first_bad[0];
  EXPECT_NE(r.first_bad[1].find("recvts_us"), std::string::npos) << r.first_bad[1];
}

TEST(LatencyJoin, EarlierRunsRowsAreSkippedAndRunsAccumulate) {
  TempDir dir;
  const long long t = 1'700'000'000'000'000LL;
  // The edge's file holds run 1 (PSK seq restarts at 0 in run 2, same device) and then run 2;
  // the device's client log holds only run 2.
  write(dir.file("c.csv"), std::string(kPskClientHeader) + psk_client_row(0, "a", t + 1'000'000) +
                               psk_client_row(1, "a", t + 1'000'050));
  write(dir.file("s.csv"), std::string(kPskServerHeader) + psk_server_row(0, "a", t + 30) +
                               "garbage,row\n" + psk_server_row(1, "a", t + 80) +
                               psk_server_row(0, "a", t + 1'000'020) +
                               psk_server_row(1, "a", t + 1'000'050 + 44));
  const auto all = join_logs(dir.file("c.csv"), dir.file("s.csv"), Mode::psk);
  // Without skipping, run 1's rows take run 2's keys (with negative latencies) and run 2's own
  // rows look like duplicates.
  EXPECT_EQ(all.bad_rows, 1u);
  EXPECT_EQ(all.negative, 2u);
  EXPECT_EQ(all.duplicates, 2u);
  auto run2 = join_logs(dir.file("c.csv"), dir.file("s.csv"), Mode::psk, 3);
  EXPECT_EQ(run2.server_rows, 2u);
  EXPECT_EQ(run2.bad_rows, 0u);  // the bad row was in the skipped part
  EXPECT_EQ(run2.received, 2u);
  EXPECT_EQ(run2.negative, 0u);
  ASSERT_EQ(run2.latency_us.size(), 2u);
  EXPECT_DOUBLE_EQ(run2.latency_us[0], 20);
  EXPECT_DOUBLE_EQ(run2.latency_us[1], 44);

  dsekp::bench::e2e::JoinResult total;
  auto copy = run2;
  dsekp::bench::e2e::accumulate(total, std::move(run2));
  dsekp::bench::e2e::accumulate(total, std::move(copy));
  EXPECT_EQ(total.sent, 4u);
  EXPECT_EQ(total.received, 4u);
  EXPECT_EQ(total.latency_us.size(), 4u);
}

TEST(LatencyJoin, UnusableFilesAreClearErrors) {
  TempDir dir;
  write(dir.file("c.csv"), kDsekpClientHeader);
  // The server log of an edge without the recvts_us column.
  write(dir.file("old.csv"),
        "seq,timestamp,dev_id,sessctr_id,ciphertext,iv,tag,plaintext,recvts_ms,latency_ms\n");
  try {
    (void)join_logs(dir.file("c.csv"), dir.file("old.csv"), Mode::dsekp);
    FAIL() << "a log without recvts_us was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("recvts_us"), std::string::npos) << e.what();
  }
  try {
    (void)join_logs(dir.file("missing.csv"), dir.file("old.csv"), Mode::dsekp);
    FAIL() << "a missing file was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.csv"), std::string::npos) << e.what();
  }
  // A PSK log read as DSEKP lacks sessctr_id.
  write(dir.file("psk.csv"), kPskClientHeader);
  EXPECT_THROW((void)join_logs(dir.file("psk.csv"), dir.file("old.csv"), Mode::dsekp),
               std::runtime_error);
  // Header-only logs: nothing sent, nothing received.
  write(dir.file("s.csv"), kDsekpServerHeader);
  const auto r = join_logs(dir.file("c.csv"), dir.file("s.csv"), Mode::dsekp);
  EXPECT_EQ(r.sent, 0u);
  EXPECT_EQ(r.received, 0u);
}

}  // namespace
