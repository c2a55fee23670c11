// The server CSV rows (edge/sinks/server_csv_format.hpp): columns of docs/LOGS.md, RFC 4180
// quoting, the timestamp format.
#include "edge/sinks/server_csv_format.hpp"
#include "logs/log_schema.hpp"

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
  // The seconds are formatted once per second: moving between seconds, and back, changes them.
  EXPECT_EQ(iso8601_utc_ms(1'764'460'861'007), "2025-11-30T00:01:01.007Z");
  EXPECT_EQ(iso8601_utc_ms(1'764'460'800'090), "2025-11-30T00:00:00.090Z");
  EXPECT_EQ(iso8601_utc_ms(1'764'460'800'999), "2025-11-30T00:00:00.999Z");
}

TEST(ServerCsvFormat, DsekpRowHasTheDocumentedColumns) {
  AcceptedFrame f;
  f.mode = Mode::dsekp;
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
  EXPECT_EQ(logs::header_line(logs::LogKind::server, Mode::dsekp),
            "seq,timestamp,dev_id,sessctr_id,ciphertext,iv,tag,plaintext,recvts_ms,latency_ms,"
            "payload_size,bin_1s,throughput,sendts_ms,recvts_us\n");
  EXPECT_EQ(server_csv_row(f, 2),
            "3,2025-11-30T00:00:00.012Z,esp32-01,7,Y2lwaGVy,aXY=,dGFn,"
            "\"{\"\"t\"\":24.0,\"\"h\"\":51.0}\",1764460800012,12,120,1764460800,2,"
            "1764460800000,1764460800012345\n");
}

TEST(ServerCsvFormat, PskRowHasNoSessctrAndPlaintextIsAlwaysQuoted) {
  AcceptedFrame f;
  f.mode = Mode::psk;
  f.dev_id = "d";
  f.plaintext = {'4', '2'};
  const std::string row = server_csv_row(f, 1);
  EXPECT_EQ(row, "0,1970-01-01T00:00:00.000Z,d,,,,\"42\",0,0,0,0,1,0,0\n");
  EXPECT_EQ(logs::header_line(logs::LogKind::server, Mode::psk),
            "seq,timestamp,dev_id,ciphertext,iv,tag,plaintext,recvts_ms,latency_ms,payload_size,"
            "bin_1s,throughput,sendts_ms,recvts_us\n");
}

// An authenticated device may encrypt any bytes; the CSV file must stay UTF-8 text that a CSV
// reader can split (the review's payload `00 ff 22 0a 2c 5c 78` was written raw before).
TEST(ServerCsvFormat, APlaintextThatIsNotTextIsWrittenAsBase64) {
  const auto column = [](std::vector<std::uint8_t> bytes) {
    return plaintext_column_text(ByteView(bytes.data(), bytes.size()));
  };
  EXPECT_EQ(column({0x00, 0xff, 0x22, 0x0a, 0x2c, 0x5c, 0x78}), "base64:AP8iCixceA==");
  EXPECT_EQ(column({0xc3, 0x28}), "base64:wyg=");      // invalid UTF-8
  EXPECT_EQ(column({'a', '\t', 'b'}), "base64:YQli");  // a control character
  EXPECT_EQ(column({'a', 0x7f}), "base64:YX8=");
  // Text that starts with the prefix is encoded too, so the prefix is never ambiguous.
  const std::string tricky = "base64:AAAA";
  EXPECT_EQ(column({tricky.begin(), tricky.end()}), "base64:YmFzZTY0OkFBQUE=");
  // Readings (UTF-8 JSON, also non-ASCII) and the empty confirming frame stay as they are.
  const std::string reading =
      "{\"t\":24.0,\"unit\":\"\xc2\xb0"
      "C\"}";
  EXPECT_EQ(column({reading.begin(), reading.end()}), reading);
  EXPECT_EQ(column({}), "");

  AcceptedFrame f;
  f.mode = Mode::psk;
  f.dev_id = "d";
  f.plaintext = {0x00, 0xff, 0x22, 0x0a, 0x2c, 0x5c, 0x78};
  EXPECT_EQ(server_csv_row(f, 1),
            "0,1970-01-01T00:00:00.000Z,d,,,,\"base64:AP8iCixceA==\",0,0,0,0,1,0,0\n");
}

}  // namespace
}  // namespace dsekp::edge::sinks
