// The server CSV rows (edge/sinks/server_csv_format.hpp): columns of docs/LOGS.md, RFC 4180
// quoting, the timestamp format.
#include "edge/sinks/server_csv_format.hpp"

#include <gtest/gtest.h>

namespace dsekp::edge::sinks {
namespace {

TEST(ServerCsvFormat, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(csv_field("abc"), "abc");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
}

TEST(ServerCsvFormat, TimestampIsIsoUtcWithMilliseconds) {
  EXPECT_EQ(iso8601_utc_ms(1'764'460'800'123), "2025-11-30T00:00:00.123Z");
}

TEST(ServerCsvFormat, DsekpRowHasTheDocumentedColumns) {
  AcceptedFrame f;
  f.mode = FrameMode::dsekp;
  f.dev_id = "esp32-01";
  f.sessctr = 7;
  f.seq = 3;
  f.sendts_ms = 1'764'460'800'000;
  f.recvts_ms = 1'764'460'800'012;
  f.recvts_us = 1'764'460'800'012'345;
  f.latency_ms = 12;
  f.ciphertext_b64 = "Y2lwaGVy";
  f.iv_b64 = "aXY=";
  f.tag_b64 = "dGFn";
  const std::string reading = R"({"t":24.0,"h":51.0})";
  f.plaintext.assign(reading.begin(), reading.end());
  f.payload_size = 120;
  EXPECT_EQ(server_csv_header(FrameMode::dsekp),
            "seq,timestamp,dev_id,sessctr_id,ciphertext,iv,tag,plaintext,recvts_ms,latency_ms,"
            "payload_size,bin_1s,throughput,sendts_ms,recvts_us\n");
  EXPECT_EQ(server_csv_row(f, 2),
            "3,2025-11-30T00:00:00.012Z,esp32-01,7,Y2lwaGVy,aXY=,dGFn,"
            "\"{\"\"t\"\":24.0,\"\"h\"\":51.0}\",1764460800012,12,120,1764460800,2,"
            "1764460800000,1764460800012345\n");
}

TEST(ServerCsvFormat, PskRowHasNoSessctrAndPlaintextIsAlwaysQuoted) {
  AcceptedFrame f;
  f.mode = FrameMode::psk;
  f.dev_id = "d";
  f.plaintext = {'4', '2'};
  const std::string row = server_csv_row(f, 1);
  EXPECT_EQ(row, "0,1970-01-01T00:00:00.000Z,d,,,,\"42\",0,0,0,0,1,0,0\n");
  EXPECT_EQ(server_csv_header(FrameMode::psk),
            "seq,timestamp,dev_id,ciphertext,iv,tag,plaintext,recvts_ms,latency_ms,payload_size,"
            "bin_1s,throughput,sendts_ms,recvts_us\n");
}

}  // namespace
}  // namespace dsekp::edge::sinks
