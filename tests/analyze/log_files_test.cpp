// Log reading: columns found by header name in any order with extra columns, clear errors for a
// missing or duplicated column, empty and header-only files, and bad rows that are counted and
// listed by line number instead of being dropped silently.
#include "log_files.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "error.hpp"
#include "log_schema.hpp"
#include "number_parse.hpp"
#include "test_support.hpp"

namespace dsekp::analyze {
namespace {

using testing::TempDir;
using testing::write_file;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const AnalyzeError& e) {
    return e.what();
  }
  return "";
}

TEST(NumberParse, StrictForms) {
  EXPECT_EQ(parse_unsigned("0"), 0u);
  EXPECT_EQ(parse_unsigned("4294967295", UINT32_MAX), 4294967295u);
  EXPECT_FALSE(parse_unsigned("4294967296", UINT32_MAX));
  EXPECT_FALSE(parse_unsigned("-1"));
  EXPECT_FALSE(parse_unsigned("+1"));
  EXPECT_FALSE(parse_unsigned("1.0"));
  EXPECT_FALSE(parse_unsigned(""));
  EXPECT_FALSE(parse_unsigned("12a"));
  EXPECT_EQ(parse_real("1764460800123"), 1764460800123.0);
  EXPECT_EQ(parse_real("-3.5"), -3.5);
  EXPECT_EQ(parse_real("1.5e3"), 1500.0);
  EXPECT_FALSE(parse_real("inf"));
  EXPECT_FALSE(parse_real("nan"));
  EXPECT_FALSE(parse_real("-"));
  EXPECT_FALSE(parse_real("12 ms"));
}

TEST(LogSchema, LooksColumnsUpByNameInAnyOrderIgnoringExtras) {
  const std::vector<std::string_view> header = {"rssi",       "payload_size", " dev_id ", "seq",
                                                "latency_ms", "recvts_ms",    "extra"};
  const auto lookup = lookup_columns(header, required_columns(LogKind::server, Mode::psk),
                                     optional_columns(LogKind::server), "f");
  // Required order: seq, dev_id, recvts_ms, latency_ms, payload_size.
  EXPECT_EQ(lookup.required, (std::vector<std::size_t>{3, 2, 5, 4, 1}));
  EXPECT_EQ(lookup.optional, (std::vector<std::size_t>{kNoColumn}));
  EXPECT_EQ(lookup.wanted, (std::vector<bool>{false, true, true, true, true, true, false}));
}

TEST(LogSchema, MissingColumnsAreNamed) {
  const std::vector<std::string_view> header = {"seq", "dev_id", "payload_size"};
  const std::string message = error_of([&] {
    lookup_columns(header, required_columns(LogKind::server, Mode::dsekp), {},
                   "DSEKP server log x.csv");
  });
  EXPECT_NE(
      message.find("DSEKP server log x.csv: missing columns sessctr_id, recvts_ms, latency_ms"),
      std::string::npos)
      << message;
  EXPECT_NE(message.find("the header has: seq, dev_id, payload_size"), std::string::npos)
      << message;
}

TEST(LogSchema, DuplicateColumnIsAnError) {
  const std::vector<std::string_view> header = {"seq", "dev_id", "seq"};
  const std::string message = error_of(
      [&] { lookup_columns(header, required_columns(LogKind::client, Mode::psk), {}, "f"); });
  EXPECT_NE(message.find("'seq' appears twice"), std::string::npos) << message;
}

TEST(LogSchema, StandardFileNames) {
  EXPECT_EQ(standard_file_name(LogKind::client, Mode::psk), "client_logs_psk.csv");
  EXPECT_EQ(standard_file_name(LogKind::server, Mode::dsekp), "server_logs_dsekp.csv");
  EXPECT_EQ(standard_file_name(LogKind::handshakes, Mode::dsekp), "client_handshakes_dsekp.csv");
}

// What analyze reads is what the writers write: every required and optional column, and the
// microsecond stamp, is a column of the one schema (logs/log_schema.hpp) in every mode.
TEST(LogSchema, EveryColumnReadIsAColumnWritten) {
  for (const LogKind kind : {LogKind::server, LogKind::client, LogKind::handshakes}) {
    for (const Mode mode : kModes) {
      const auto written = logs::columns(kind, mode);
      const auto is_written = [&](std::string_view column) {
        return std::find(written.begin(), written.end(), column) != written.end();
      };
      for (const std::string_view column : required_columns(kind, mode))
        EXPECT_TRUE(is_written(column))
            << kind_name(kind) << " " << mode_name(mode) << ": " << column;
      for (const std::string_view column : optional_columns(kind))
        EXPECT_TRUE(is_written(column)) << kind_name(kind) << ": " << column;
      if (!micros_column(kind).empty()) {
        EXPECT_TRUE(is_written(micros_column(kind))) << kind_name(kind);
      }
    }
  }
}

TEST(ServerLog, ReadsShuffledColumnsWithExtras) {
  TempDir dir;
  const auto path = write_file(dir / "s.csv",
                               "note,payload_size,latency_ms,dev_id,recvts_ms,seq,sessctr_id\n"
                               "\"a, b\",175,250,esp32-01,1764460800250,7,4660\n"
                               "x,176,-3.5,esp32-02,1764460801999,8,1\n");
  const auto log = read_server_log(path, Mode::dsekp, {});
  EXPECT_EQ(log.report.rows, 2u);
  EXPECT_EQ(log.report.good_rows, 2u);
  EXPECT_EQ(log.devices, (std::vector<std::string>{"esp32-01", "esp32-02"}));
  EXPECT_EQ(log.keys, (std::vector<std::uint64_t>{packet_key(0, 4660, 7), packet_key(1, 1, 8)}));
  EXPECT_EQ(log.latencies_ms, (std::vector<double>{250, -3.5}));
  EXPECT_EQ(log.negative_latencies, 1u);
  EXPECT_EQ(log.payload.summary().total_bytes, 351u);
  EXPECT_EQ(log.bins, (std::vector<SecondCount>{{1764460800, 1}, {1764460801, 1}}));
}

TEST(ServerLog, BadRowsAreCountedAndListedWithLineNumbers) {
  TempDir dir;
  const auto path = write_file(dir / "s.csv",
                               "seq,dev_id,recvts_ms,latency_ms,payload_size\n"  // line 1
                               "1,a,1000,10,150\n"                               // 2 good
                               "x,a,1000,10,150\n"                               // 3 seq
                               "2,,1000,10,150\n"                                // 4 dev_id
                               "3,a,1000,ten,150\n"                              // 5 latency
                               "4,a,1000,10\n"                                   // 6 short
                               "\n"                                              // 7 blank
                               "5,a,-1,10,150\n"                                 // 8 recvts
                               "6,a,1000,10,150,extra\n"                         // 9 long
                               "4294967296,a,1000,10,150\n"                      // 10 seq range
                               "7,a,1000,10,150\n"                               // 11 good
                               "8,a\"b,1000,10,150\n");                          // 12 quoting
  ReadOptions options;
  options.bad_rows_listed = 5;
  const auto log = read_server_log(path, Mode::psk, options);
  EXPECT_EQ(log.report.rows, 10u);
  EXPECT_EQ(log.report.good_rows, 2u);
  EXPECT_EQ(log.report.bad_rows, 8u);
  EXPECT_EQ(log.report.blank_lines, 1u);
  ASSERT_EQ(log.report.first_bad_rows.size(), 5u);  // all counted, the first 5 listed
  EXPECT_EQ(log.report.first_bad_rows[0].line, 3u);
  EXPECT_EQ(log.report.first_bad_rows[0].reason,
            "seq: 'x' is not a sequence number (0..4294967295)");
  EXPECT_EQ(log.report.first_bad_rows[1].line, 4u);
  EXPECT_EQ(log.report.first_bad_rows[1].reason, "dev_id is empty");
  EXPECT_EQ(log.report.first_bad_rows[2].line, 5u);
  EXPECT_EQ(log.report.first_bad_rows[3].line, 6u);
  EXPECT_EQ(log.report.first_bad_rows[3].reason, "has 4 fields, the header has 5");
  EXPECT_EQ(log.report.first_bad_rows[4].line, 8u);
  // Bad rows contribute nothing.
  EXPECT_EQ(log.latencies_ms.size(), 2u);
  EXPECT_EQ(log.keys.size(), 2u);
}

TEST(ServerLog, LatencyIsCheckedAgainstSendtsWhenPresent) {
  TempDir dir;
  const auto path = write_file(dir / "s.csv",
                               "seq,dev_id,sendts_ms,recvts_ms,latency_ms,payload_size\n"
                               "1,a,1000,1250,250,150\n"
                               "2,a,1000,1250,251,150\n"
                               "3,a,1000,1250,300,150\n");
  const auto log = read_server_log(path, Mode::psk, {});
  EXPECT_TRUE(log.report.has_sendts);
  EXPECT_EQ(log.report.good_rows, 2u);  // a 1 ms rounding difference is accepted
  ASSERT_EQ(log.report.bad_rows, 1u);
  EXPECT_EQ(log.report.first_bad_rows[0].line, 4u);
  EXPECT_NE(log.report.first_bad_rows[0].reason.find("differs from recvts_ms - sendts_ms"),
            std::string::npos);
}

TEST(ServerLog, FileErrors) {
  TempDir dir;
  const auto empty = write_file(dir / "empty.csv", "");
  EXPECT_NE(error_of([&] { read_server_log(empty, Mode::psk, {}); }).find("empty file"),
            std::string::npos);
  const auto header_only =
      write_file(dir / "h.csv", "seq,dev_id,recvts_ms,latency_ms,payload_size\n");
  EXPECT_NE(error_of([&] { read_server_log(header_only, Mode::psk, {}); }).find("no data rows"),
            std::string::npos);
  const auto all_bad =
      write_file(dir / "b.csv", "seq,dev_id,recvts_ms,latency_ms,payload_size\nx,a,1,1,1\n");
  const std::string message = error_of([&] { read_server_log(all_bad, Mode::psk, {}); });
  EXPECT_NE(message.find("all 1 data rows are bad (first: line 2: seq"), std::string::npos)
      << message;
  const auto missing = write_file(dir / "m.csv", "seq,dev_id,recvts_ms,payload_size\n1,a,1,1\n");
  EXPECT_NE(error_of([&] {
              read_server_log(missing, Mode::psk, {});
            }).find("PSK server log " + missing.string() + ": missing column latency_ms"),
            std::string::npos);
}

TEST(ClientLog, ReadsKeysPayloadAndSendWindow) {
  TempDir dir;
  const auto path = write_file(dir / "c.csv",
                               "seq,sessctr_id,timestamp,dev_id,plaintext,sendts_ms,payload_size\n"
                               "0,65535,2025-11-30T00:00:00Z,d1,\"{\"\"t\"\":1}\",2000,170\n"
                               "1,65535,2025-11-30T00:00:00Z,d1,\"{\"\"t\"\":1}\",1000,172\n"
                               "2,65536,2025-11-30T00:00:00Z,d1,\"{\"\"t\"\":1}\",3000,172\n");
  const auto log = read_client_log(path, Mode::dsekp, {});
  EXPECT_EQ(log.report.good_rows, 2u);
  EXPECT_EQ(log.report.bad_rows, 1u);  // sessctr_id 65536 is out of range
  EXPECT_EQ(log.report.first_bad_rows[0].line, 4u);
  EXPECT_EQ(log.keys,
            (std::vector<std::uint64_t>{packet_key(0, 65535, 0), packet_key(0, 65535, 1)}));
  EXPECT_EQ(log.first_sendts_ms, 1000);
  EXPECT_EQ(log.last_sendts_ms, 2000);
  EXPECT_DOUBLE_EQ(*log.payload.summary().mean, 171.0);
}

TEST(HandshakeLog, OutcomesAndConsistencyChecks) {
  TempDir dir;
  const auto path = write_file(dir / "h.csv",
                               "dev_id,sessctr_id,init_sent_ms,ack_recv_ms,attempts,outcome\n"
                               "d1,1,1000,1185,1,ok\n"        // 2 good
                               "d1,2,1000,,3,timeout\n"       // 3 good
                               "d1,3,1000,1100,1,rejected\n"  // 4 good (an ACK that failed)
                               "d1,4,1000,,1,ok\n"            // 5 ok without ACK
                               "d1,5,1000,1200,2,timeout\n"   // 6 timeout with ACK
                               "d1,6,1000,900,1,ok\n"         // 7 ACK before INIT
                               "d1,7,1000,1200,0,ok\n"        // 8 zero attempts
                               "d1,8,1000,1200,1,maybe\n");   // 9 unknown outcome
  const auto log = read_handshake_log(path, {});
  EXPECT_EQ(log.report.good_rows, 3u);
  EXPECT_EQ(log.report.bad_rows, 5u);
  std::vector<std::uint64_t> lines;
  for (const auto& b : log.report.first_bad_rows) lines.push_back(b.line);
  EXPECT_EQ(lines, (std::vector<std::uint64_t>{5, 6, 7, 8, 9}));
  EXPECT_EQ(log.report.first_bad_rows[4].reason,
            "outcome: 'maybe' is not one of ok, timeout, rejected");
  ASSERT_EQ(log.records.size(), 3u);
  EXPECT_EQ(log.records[0].latency_ms, 185);
  EXPECT_TRUE(log.records[0].has_ack);
  EXPECT_EQ(log.records[1].outcome, HandshakeOutcome::timeout);
  EXPECT_FALSE(log.records[1].has_ack);
}

}  // namespace
}  // namespace dsekp::analyze
