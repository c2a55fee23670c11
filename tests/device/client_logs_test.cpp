// The client CSV logs: exact header and rows (RFC 4180 quoting of the reading), and the files
// read back by the analysis' own reader with no bad row.
#include "device/client_logs.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "analyze/log_files.hpp"
#include "logs/log_schema.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::device {
namespace {

constexpr std::uint64_t kSendUs = 1'764'460'800'123'456;  // 2025-11-30T00:00:00.123456Z

std::string reading = R"({"t":24.0,"h":51.0})";
const std::array<std::uint8_t, 12> kIv = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
const std::array<std::uint8_t, 16> kTag = {0xFF, 0xEE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
const std::array<std::uint8_t, 4> kCiphertext = {0xDE, 0xAD, 0xBE, 0xEF};

ClientLogRow row(std::uint32_t seq, std::uint16_t sessctr = 4660) {
  ClientLogRow r;
  r.seq = seq;
  r.sessctr = sessctr;
  r.dev_id = "esp32-01";
  r.plaintext = reading;
  r.iv = kIv;
  r.tag = kTag;
  r.ciphertext = kCiphertext;
  r.sendts_us = kSendUs + seq * 1000;
  r.payload_size = 173;
  return r;
}

TEST(ClientLogs, Iso8601) {
  EXPECT_EQ(iso8601_utc_ms(1'764'460'800'123), "2025-11-30T00:00:00.123Z");
  EXPECT_EQ(iso8601_utc_ms(0), "1970-01-01T00:00:00.000Z");
}

TEST(ClientLogs, DsekpHeaderAndRowsAreExact) {
  dsekp::test::TempDir dir;
  const std::string path = dir.file(logs::standard_file_name(logs::LogKind::client, Mode::dsekp));
  {
    ClientLogWriter log(path, Mode::dsekp);
    log.write(row(0));
    log.write(row(1));
    EXPECT_TRUE(log.close());
    EXPECT_EQ(log.rows(), 2u);
  }
  EXPECT_EQ(dsekp::test::read_file(path),
            "seq,sessctr_id,timestamp,dev_id,plaintext,iv,tag,ciphertext,sendts_ms,payload_size,"
            "sendts_us\n"
            "0,4660,2025-11-30T00:00:00.123Z,esp32-01,\"{\"\"t\"\":24.0,\"\"h\"\":51.0}\","
            "AQIDBAUGBwgJCgsM,/+4AAAAAAAAAAAAAAAAAAQ==,3q2+7w==,1764460800123,173,"
            "1764460800123456\n"
            "1,4660,2025-11-30T00:00:00.124Z,esp32-01,\"{\"\"t\"\":24.0,\"\"h\"\":51.0}\","
            "AQIDBAUGBwgJCgsM,/+4AAAAAAAAAAAAAAAAAAQ==,3q2+7w==,1764460800124,173,"
            "1764460800124456\n");
}

TEST(ClientLogs, PskHasNoSessctrColumn) {
  dsekp::test::TempDir dir;
  const std::string path = dir.file(logs::standard_file_name(logs::LogKind::client, Mode::psk));
  {
    ClientLogWriter log(path, Mode::psk);
    log.write(row(7));
  }
  EXPECT_EQ(dsekp::test::read_file(path),
            "seq,timestamp,dev_id,plaintext,iv,tag,ciphertext,sendts_ms,payload_size,sendts_us\n"
            "7,2025-11-30T00:00:00.130Z,esp32-01,\"{\"\"t\"\":24.0,\"\"h\"\":51.0}\","
            "AQIDBAUGBwgJCgsM,/+4AAAAAAAAAAAAAAAAAAQ==,3q2+7w==,1764460800130,173,"
            "1764460800130456\n");
}

TEST(ClientLogs, HandshakeLogHeaderAndOutcomes) {
  dsekp::test::TempDir dir;
  const std::string path = dir.file(std::string(logs::kHandshakeLogFileName));
  {
    HandshakeLogWriter log(path);
    log.write({"esp32-01", 4660, 1764460799800, 1764460799985, 1, HandshakeOutcome::ok});
    log.write({"esp32-01", 901, 1764464400000, std::nullopt, 3, HandshakeOutcome::timeout});
    log.write({"esp32-01", 902, 1764464500000, std::nullopt, 2, HandshakeOutcome::rejected});
  }
  EXPECT_EQ(dsekp::test::read_file(path),
            "dev_id,sessctr_id,init_sent_ms,ack_recv_ms,attempts,outcome\n"
            "esp32-01,4660,1764460799800,1764460799985,1,ok\n"
            "esp32-01,901,1764464400000,,3,timeout\n"
            "esp32-01,902,1764464500000,,2,rejected\n");
}

TEST(ClientLogs, TheAnalysisReadsThemWithoutBadRows) {
  dsekp::test::TempDir dir;
  {
    ClientLogWriter dsekp_log(dir.file("client_logs_dsekp.csv"), Mode::dsekp);
    ClientLogWriter psk_log(dir.file("client_logs_psk.csv"), Mode::psk);
    HandshakeLogWriter handshakes(dir.file(std::string(logs::kHandshakeLogFileName)));
    for (std::uint32_t i = 0; i < 50; ++i) {
      dsekp_log.write(row(i, i < 25 ? 1 : 2));
      psk_log.write(row(i));
    }
    handshakes.write({"esp32-01", 1, 1764460799800, 1764460799805, 1, HandshakeOutcome::ok});
    handshakes.write({"esp32-01", 2, 1764460799900, 1764460799999, 2, HandshakeOutcome::ok});
    handshakes.write({"esp32-01", 3, 1764460800000, std::nullopt, 5, HandshakeOutcome::timeout});
  }
  const analyze::ReadOptions options;
  const auto dsekp_data =
      analyze::read_client_log(dir.file("client_logs_dsekp.csv"), Mode::dsekp, options);
  EXPECT_EQ(dsekp_data.report.rows, 50u);
  EXPECT_EQ(dsekp_data.report.bad_rows, 0u);
  EXPECT_EQ(dsekp_data.keys.size(), 50u);
  ASSERT_EQ(dsekp_data.devices.size(), 1u);
  EXPECT_EQ(dsekp_data.devices[0], "esp32-01");
  EXPECT_EQ(analyze::key_sessctr(dsekp_data.keys[30]), 2);

  const auto psk_data =
      analyze::read_client_log(dir.file("client_logs_psk.csv"), Mode::psk, options);
  EXPECT_EQ(psk_data.report.good_rows, 50u);
  EXPECT_EQ(psk_data.report.bad_rows, 0u);

  const auto hs =
      analyze::read_handshake_log(dir.file(std::string(logs::kHandshakeLogFileName)), options);
  EXPECT_EQ(hs.report.bad_rows, 0u);
  ASSERT_EQ(hs.records.size(), 3u);
  EXPECT_EQ(hs.records[0].outcome, analyze::HandshakeOutcome::ok);
  EXPECT_DOUBLE_EQ(hs.records[1].latency_ms, 99);
  EXPECT_EQ(hs.records[1].attempts, 2u);
  EXPECT_EQ(hs.records[2].outcome, analyze::HandshakeOutcome::timeout);
  EXPECT_FALSE(hs.records[2].has_ack);
}

TEST(ClientLogs, CannotCreateNamesTheFile) {
  try {
    ClientLogWriter log("/nonexistent-dir/x.csv", Mode::psk);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.csv: cannot create"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace dsekp::device
