// The microsecond latency table (analyze/latency_us.hpp): reading and checking the optional
// sendts_us / recvts_us columns (bad values are bad for that table only, with the failed check in
// the reason), the join by (run, dev_id, sessctr_id, seq), exact figures on a hand-made fixture
// whose expected latencies are listed beside its rows, outputs unchanged when the columns are
// absent, and end to end through the CLI on gen_logs.py --micros against the generator's truth.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "analysis.hpp"
#include "report_markdown.hpp"
#include "summary_json.hpp"
#include "test_support.hpp"
#include "tests/support/build_paths.hpp"

namespace dsekp::analyze {
namespace {

using nlohmann::json;
using testing::read_text;
using testing::TempDir;
using testing::write_file;

const std::filesystem::path kTestDir = DSEKP_ANALYZE_TEST_DIR;

// ---- expected figures, computed here from the listed latencies (not with analyze's code) ----

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double sd_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double ss = 0;
  for (const double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

// R's quantile type 7 on a sorted sample.
double type7(const std::vector<double>& sorted, double p) {
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

void expect_figures(const MicroLatencyResult& m, std::vector<double> expected) {
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(m.sorted, expected);
  ASSERT_EQ(m.stats.n, expected.size());
  EXPECT_NEAR(*m.stats.mean, mean_of(expected), 1e-9);
  EXPECT_NEAR(*m.stats.sd, sd_of(expected), 1e-9);
  EXPECT_NEAR(*m.stats.median, type7(expected, 0.5), 1e-9);
  EXPECT_NEAR(*m.stats.p95, type7(expected, 0.95), 1e-9);
  EXPECT_NEAR(*m.stats.p99, type7(expected, 0.99), 1e-9);
  EXPECT_EQ(*m.stats.max, expected.back());
}

// ---- the hand-made fixture ----
//
// PSK run 1 (both columns). Latency = recvts_us - sendts_us of the same (dev_id, seq).
const char* kPskClient1 =
    "seq,dev_id,sendts_ms,payload_size,sendts_us\n"
    "0,a,1764460800000,156,1764460800000100\n"   // 2
    "1,a,1764460802000,156,1764460802000200\n"   // 3
    "2,a,1764460804000,156,1764460804000300\n"   // 4
    "3,a,1764460806000,156,1764460806000400\n"   // 5
    "4,a,1764460808000,156,1764460808003500\n"   // 6 bad: 3.5 ms from sendts_ms
    "5,a,1764460810000,156,12x\n"                // 7 bad: not a number (packet lost)
    "0,b,1764460800500,156,1764460800500000\n"   // 8
    "1,b,1764460802500,156,1764460802500000\n"   // 9
    "2,b,1764460804500,156,\n"                   // 10 bad: empty
    "3,b,1764460806500,156,1764460806500000\n"   // 11 b/3 sent twice:
    "3,b,1764460806600,156,1764460806600000\n"   // 12   its arrival is ambiguous
    "4,b,1764460808500,156,1764460808500000\n";  // 13
const char* kPskServer1 =
    "seq,dev_id,recvts_ms,latency_ms,payload_size,recvts_us\n"
    "0,a,1764460800000,0,156,1764460800000220\n"   // 2  120
    "1,a,1764460802000,0,156,1764460802000295\n"   // 3  95
    "2,a,1764460804000,0,156,1764460804000430\n"   // 4  130
    "3,a,1764460806000,0,156,1764460806000550\n"   // 5  150
    "3,a,1764460806040,40,156,1764460806040580\n"  // 6  40180 (a second arrival)
    "4,a,1764460808000,0,156,1764460808000900\n"   // 7  client sendts_us bad
    "0,b,1764460800500,0,156,1764460800500210\n"   // 8  210
    "1,b,1764460802500,0,156,\n"                   // 9  bad: empty
    "2,b,1764460804500,0,156,1764460804500400\n"   // 10 client sendts_us bad
    "3,b,1764460806600,0,156,1764460806600180\n"   // 11 ambiguous
    "4,b,1764460808501,1,156,1764460808501200\n"   // 12 1200
    "5,b,1764460810500,0,156,1764460810500300\n"   // 13 no client row
    "0,c,1764460811000,0,156,1764460811000abc\n"   // 14 bad: not a number
    "1,c,1764460812000,0,156,1764460812005000\n";  // 15 bad: 5 ms from recvts_ms
const std::vector<double> kPskMicros = {120, 95, 130, 150, 40180, 210, 1200};

// PSK run 2: the server log has recvts_us, the client log has no sendts_us: not in the table
// (a join would give 999,999 µs).
const char* kPskClient2 = "seq,dev_id,sendts_ms,payload_size\n0,a,1764470000000,156\n";
const char* kPskServer2 =
    "seq,dev_id,recvts_ms,latency_ms,payload_size,recvts_us\n"
    "0,a,1764470000999,999,156,1764470000999999\n";

// DSEKP: the same seq in two sessions, and the same (dev_id, sessctr_id, seq) in two runs, so a
// join that ignored the session or the run would find every packet twice.
const char* kDsekpClient1 =
    "seq,sessctr_id,dev_id,sendts_ms,payload_size,sendts_us\n"
    "0,10,a,1764464400000,175,1764464400000000\n"
    "1,10,a,1764464402000,175,1764464402000000\n"
    "0,11,a,1764464404000,175,1764464404000000\n"
    "1,11,a,1764464406000,175,1764464406000000\n"
    "0,10,b,1764464400500,175,1764464400500300\n";
const char* kDsekpServer1 =
    "seq,dev_id,sessctr_id,recvts_ms,latency_ms,payload_size,recvts_us\n"
    "0,a,10,1764464400000,0,175,1764464400000101\n"   // 101
    "1,a,10,1764464402000,0,175,1764464402000110\n"   // 110
    "0,a,11,1764464404000,0,175,1764464404000125\n"   // 125
    "1,a,11,1764464406000,0,175,1764464406000088\n"   // 88
    "0,b,10,1764464400500,0,175,1764464400500250\n";  // -50 (clock stepped back: kept, counted)
const char* kDsekpClient2 =
    "seq,sessctr_id,dev_id,sendts_ms,payload_size,sendts_us\n"
    "0,10,a,1764464500000,175,1764464500000000\n"
    "1,10,a,1764464502000,175,1764464502000000\n"
    "0,11,a,1764464504000,175,1764464504000000\n"
    "1,11,a,1764464506000,175,1764464506000000\n";  // lost
const char* kDsekpServer2 =
    "seq,dev_id,sessctr_id,recvts_ms,latency_ms,payload_size,recvts_us\n"
    "0,a,10,1764464500000,0,175,1764464500000140\n"   // 140
    "1,a,10,1764464502000,0,175,1764464502000160\n"   // 160
    "0,a,11,1764464504000,0,175,1764464504000900\n";  // 900
const std::vector<double> kDsekpMicros = {101, 110, 125, 88, -50, 140, 160, 900};

AnalysisInputs write_fixture(const TempDir& dir) {
  AnalysisInputs in;
  in.psk = {{write_file(dir / "ps1.csv", kPskServer1), write_file(dir / "pc1.csv", kPskClient1)},
            {write_file(dir / "ps2.csv", kPskServer2), write_file(dir / "pc2.csv", kPskClient2)}};
  in.dsekp = {
      {write_file(dir / "ds1.csv", kDsekpServer1), write_file(dir / "dc1.csv", kDsekpClient1)},
      {write_file(dir / "ds2.csv", kDsekpServer2), write_file(dir / "dc2.csv", kDsekpClient2)}};
  return in;
}

TEST(LatencyUsRead, ServerValuesAreCheckedAndBadOnlyForTheMicrosTable) {
  TempDir dir;
  const auto log = read_server_log(write_file(dir / "s.csv", kPskServer1), Mode::psk, {});
  EXPECT_TRUE(log.report.has_micros);
  EXPECT_EQ(log.report.good_rows, 14u);  // every row is good for the ms tables
  EXPECT_EQ(log.report.bad_rows, 0u);
  EXPECT_EQ(log.latencies_ms.size(), 14u);
  EXPECT_EQ(log.report.micros_bad_rows, 3u);
  ASSERT_EQ(log.report.first_micros_bad_rows.size(), 3u);
  const auto& bad = log.report.first_micros_bad_rows;
  EXPECT_EQ(bad[0].line, 9u);
  EXPECT_EQ(bad[0].reason, "recvts_us is empty");
  EXPECT_EQ(bad[1].line, 14u);
  EXPECT_EQ(bad[1].reason,
            "recvts_us: '1764460811000abc' is not a Unix time in whole microseconds");
  EXPECT_EQ(bad[2].line, 15u);
  EXPECT_EQ(bad[2].reason,
            "recvts_us / 1000 differs from recvts_ms by 5.000 ms (more than 1 ms): recvts_us "
            "1764460812005000");
  ASSERT_EQ(log.micros.size(), 11u);  // the good stamps only
  EXPECT_EQ(log.micros[0].us, 1764460800000220u);
  EXPECT_EQ(log.micros[0].key, log.keys[0]);
}

TEST(LatencyUsRead, ClientBadValuesAreKeptAsMissingStamps) {
  TempDir dir;
  ReadOptions options;
  options.bad_rows_listed = 2;
  const auto log = read_client_log(write_file(dir / "c.csv", kPskClient1), Mode::psk, options);
  EXPECT_TRUE(log.report.has_micros);
  EXPECT_EQ(log.report.good_rows, 12u);
  EXPECT_EQ(log.report.bad_rows, 0u);
  EXPECT_EQ(log.report.micros_bad_rows, 3u);  // all counted, the first 2 listed
  ASSERT_EQ(log.report.first_micros_bad_rows.size(), 2u);
  EXPECT_EQ(log.report.first_micros_bad_rows[0].line, 6u);
  EXPECT_EQ(log.report.first_micros_bad_rows[0].reason,
            "sendts_us / 1000 differs from sendts_ms by 3.500 ms (more than 1 ms): sendts_us "
            "1764460808003500");
  EXPECT_EQ(log.report.first_micros_bad_rows[1].reason,
            "sendts_us: '12x' is not a Unix time in whole microseconds");
  ASSERT_EQ(log.micros.size(), 12u);
  EXPECT_EQ(log.micros[4].us, kNoMicros);
  EXPECT_EQ(log.micros[5].us, kNoMicros);
  EXPECT_EQ(log.micros[8].us, kNoMicros);
  EXPECT_EQ(log.micros[0].us, 1764460800000100u);
}

TEST(LatencyUsRead, ConsistencyAllowsOneMillisecondAndRejectsNonDigits) {
  TempDir dir;
  const auto log = read_server_log(write_file(dir / "s.csv",
                                              "seq,dev_id,recvts_ms,latency_ms,payload_size,"
                                              "recvts_us\n"
                                              "0,a,1000,0,1,1000999\n"    // floor: 0.999 ms
                                              "1,a,1000,0,1,1001000\n"    // exactly 1 ms
                                              "2,a,1000,0,1,999000\n"     // -1 ms
                                              "3,a,1000,0,1,1001001\n"    // > 1 ms
                                              "4,a,1000,0,1,-1000000\n"   // sign
                                              "5,a,1000,0,1,1000000.5\n"  // fraction
                                              "6,a,1000,0,1,1e6\n"),      // exponent
                                   Mode::psk, {});
  EXPECT_EQ(log.report.good_rows, 7u);
  EXPECT_EQ(log.micros.size(), 3u);
  EXPECT_EQ(log.report.micros_bad_rows, 4u);
  EXPECT_NE(log.report.first_micros_bad_rows[0].reason.find("by 1.001 ms"), std::string::npos);
}

TEST(LatencyUs, ExactFiguresFromTheFixture) {
  TempDir dir;
  const auto result = analyze_logs(write_fixture(dir), {});
  EXPECT_EQ(result.bad_rows, 0u);  // µs problems are not bad rows of the ms tables
  ASSERT_TRUE(result.psk && result.psk->latency_us);
  ASSERT_TRUE(result.dsekp && result.dsekp->latency_us);
  EXPECT_EQ(result.psk->latency.rows, 15u);  // the ms table keeps every server row
  EXPECT_EQ(result.psk->reliability->total.unexpected, 3u);

  const MicroLatencyResult& p = *result.psk->latency_us;
  expect_figures(p, kPskMicros);
  EXPECT_EQ(p.runs, 2u);
  EXPECT_EQ(p.runs_with_columns, 1u);
  EXPECT_EQ(p.server_rows, 14u);
  EXPECT_EQ(p.bad_recvts_us, 3u);
  EXPECT_EQ(p.no_client_row, 1u);
  EXPECT_EQ(p.bad_sendts_us, 2u);
  EXPECT_EQ(p.ambiguous, 1u);
  EXPECT_EQ(p.bad_client_rows, 3u);
  EXPECT_EQ(p.server_rows, p.n_before_outliers + p.bad_recvts_us + p.no_client_row +
                               p.bad_sendts_us + p.ambiguous);
  EXPECT_EQ(p.negative, 0u);
  ASSERT_EQ(p.files.size(), 2u);
  EXPECT_EQ(p.files[0].path, (dir / "ps1.csv").string());
  EXPECT_EQ(p.files[0].bad_rows, 3u);
  EXPECT_EQ(p.files[1].kind, LogKind::client);

  const MicroLatencyResult& d = *result.dsekp->latency_us;
  expect_figures(d, kDsekpMicros);
  EXPECT_EQ(d.runs_with_columns, 2u);
  EXPECT_EQ(d.negative, 1u);
  EXPECT_EQ(d.ambiguous, 0u);
  EXPECT_EQ(d.no_client_row, 0u);

  // DSEKP - PSK; t and W with the ms comparison's sign. Reference values from R 4.2:
  //   a <- c(95,120,130,150,210,1200,40180); b <- c(-50,88,101,110,125,140,160,900)
  //   t.test(a, b); wilcox.test(a, b, exact = FALSE, correct = TRUE)
  ASSERT_TRUE(result.latency_us_comparison);
  const MicroComparison& c = *result.latency_us_comparison;
  EXPECT_NEAR(*c.mean_difference_us, mean_of(kDsekpMicros) - mean_of(kPskMicros), 1e-9);
  EXPECT_NEAR(*c.median_difference_us, 117.5 - 150.0, 1e-12);
  ASSERT_TRUE(c.t_test && c.rank_sum);
  EXPECT_NEAR(c.t_test->t, 1.020684436235339, 1e-9);
  EXPECT_NEAR(c.t_test->df, 6.003920364784350, 1e-9);
  EXPECT_NEAR(c.t_test->p, 0.346757280670013, 1e-9);
  EXPECT_DOUBLE_EQ(c.rank_sum->w, 40.0);
  EXPECT_NEAR(c.rank_sum->p, 0.183232976928822, 1e-9);

  // The outlier rule at the ms tables' threshold, in µs: 1 ms excludes 1200 and 40180.
  AnalysisOptions options;
  options.outlier_ms = 1;
  const auto cut = analyze_logs(write_fixture(dir), options);
  EXPECT_EQ(cut.psk->latency_us->outliers_excluded, 2u);
  EXPECT_EQ(cut.psk->latency_us->n_before_outliers, 7u);
  expect_figures(*cut.psk->latency_us, {95, 120, 130, 150, 210});
}

TEST(LatencyUs, SummaryAndReport) {
  TempDir dir;
  const auto result = analyze_logs(write_fixture(dir), {});
  const json s = summary_json(result, FiguresResult{}, false);
  ASSERT_TRUE(s.contains("latency_us"));
  const json& p = s["latency_us"]["psk"];
  EXPECT_EQ(p["n"], 7);
  EXPECT_NEAR(p["mean"].get<double>(), mean_of(kPskMicros), 1e-9);
  EXPECT_DOUBLE_EQ(p["median"].get<double>(), 150.0);
  EXPECT_DOUBLE_EQ(p["max"].get<double>(), 40180.0);
  EXPECT_EQ(p["runs_with_columns"], 1);
  EXPECT_EQ(p["server_rows_without_latency"]["bad_recvts_us"], 3);
  EXPECT_EQ(p["server_rows_without_latency"]["no_client_row"], 1);
  EXPECT_EQ(p["server_rows_without_latency"]["bad_sendts_us"], 2);
  EXPECT_EQ(p["server_rows_without_latency"]["ambiguous_client_rows"], 1);
  EXPECT_EQ(p["client_rows_bad_sendts_us"], 3);
  EXPECT_EQ(p["files"][0]["first_bad_rows"][0]["line"], 9);
  EXPECT_EQ(p["files"][1]["first_bad_rows"][2]["reason"], "sendts_us is empty");
  EXPECT_EQ(s["latency_us"]["dsekp"]["negative"], 1);
  EXPECT_DOUBLE_EQ(s["latency_us"]["comparison"]["median_difference_us"].get<double>(), -32.5);
  EXPECT_EQ(s["bad_rows_total"], 0);
  // The ms summary does not change: the per-file entries have no µs keys.
  EXPECT_FALSE(s["files"][0].contains("micros_bad_rows"));

  const std::string report = report_markdown(result, FiguresResult{}, {});
  EXPECT_NE(report.find("## Latency at microsecond resolution (ours)"), std::string::npos);
  EXPECT_NE(report.find("| Runs with both µs columns | 1 of 2 | 2 of 2 | – |"), std::string::npos)
      << report;
  EXPECT_NE(report.find("| Packets in the statistics (n) | 7 | 8 | – |"), std::string::npos);
  // Mean 6012.14 / 196.75, R: mean(a), mean(b); p from t.test(a, b) as above.
  EXPECT_NE(report.find("| Mean (µs) | 6,012.1 | 196.8 | −5,815.4 (Welch *t*-test *p* = 0.3468) |"),
            std::string::npos);
  EXPECT_NE(report.find("| p95 (µs) | 28,486.0 | 641.0 | – |"), std::string::npos);
  EXPECT_NE(report.find("| Median, p50 (µs) | 150.0 | 117.5 | −32.5 (rank-sum *p* = 0.1832) |"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("| Min / max (µs) | 95.0 / 40,180.0 | -50.0 / 900.0 | – |"),
            std::string::npos);
  EXPECT_NE(report.find("7 (bad recvts_us 3, no client row 1, bad sendts_us 2, client row twice "
                        "1)"),
            std::string::npos);
  EXPECT_NE(report.find("- line 15: recvts_us / 1000 differs from recvts_ms by 5.000 ms"),
            std::string::npos);
  EXPECT_NE(report.find("- line 7: sendts_us: '12x' is not a Unix time in whole microseconds"),
            std::string::npos);
  // The ms Bad rows section is unchanged: none.
  EXPECT_NE(report.find("None: every data row of every file was valid."), std::string::npos);
}

TEST(LatencyUs, OneModeWithoutColumnsHasNoComparison) {
  TempDir dir;
  AnalysisInputs in = write_fixture(dir);
  in.dsekp = {{write_file(dir / "ds.csv",
                          "seq,dev_id,sessctr_id,recvts_ms,latency_ms,payload_size\n"
                          "0,a,1,1000,0,175\n"),
               write_file(dir / "dc.csv",
                          "seq,sessctr_id,dev_id,sendts_ms,payload_size,sendts_us\n"
                          "0,1,a,1000,175,1000000\n")}};
  const auto result = analyze_logs(in, {});
  EXPECT_TRUE(result.psk->latency_us);
  EXPECT_FALSE(result.dsekp->latency_us);  // the server log has no recvts_us
  EXPECT_FALSE(result.latency_us_comparison);
  const json s = summary_json(result, FiguresResult{}, false);
  EXPECT_TRUE(s["latency_us"].contains("psk"));
  EXPECT_FALSE(s["latency_us"].contains("dsekp"));
  EXPECT_TRUE(s["latency_us"]["comparison"].is_null());
  const std::string report = report_markdown(result, FiguresResult{}, {});
  EXPECT_NE(report.find("| Packets in the statistics (n) | 7 | – (no µs columns) | – |"),
            std::string::npos)
      << report;
}

// Drops the named column from CSV text (test fixtures have no quoted commas).
std::string without_column(const std::string& text, const std::string& column) {
  std::istringstream in(text);
  std::string line;
  std::string out;
  std::size_t drop = std::string::npos;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (std::size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1)
      fields.push_back(line.substr(start, comma - start));
    fields.push_back(line.substr(start));
    if (drop == std::string::npos)
      drop = static_cast<std::size_t>(std::find(fields.begin(), fields.end(), column) -
                                      fields.begin());
    if (drop < fields.size()) fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(drop));
    for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
    out += "\n";
  }
  return out;
}

// Without both columns the outputs are exactly those of logs that never had them.
TEST(LatencyUs, AbsentColumnsLeaveTheOutputsUnchanged) {
  TempDir dir;
  const auto outputs = [&](const std::string& psk_server, const std::string& psk_client,
                           const std::string& dsekp_server, const std::string& dsekp_client) {
    AnalysisInputs in;
    in.psk = {{write_file(dir / "ps.csv", psk_server), write_file(dir / "pc.csv", psk_client)}};
    in.dsekp = {
        {write_file(dir / "ds.csv", dsekp_server), write_file(dir / "dc.csv", dsekp_client)}};
    const auto result = analyze_logs(in, {});
    EXPECT_FALSE(result.psk->latency_us);
    EXPECT_FALSE(result.dsekp->latency_us);
    json s = summary_json(result, FiguresResult{}, true);
    s.erase("timing_s");
    // The input files' sizes differ by the dropped column; everything else must not.
    for (auto& file : s["files"]) file.erase("bytes");
    return s.dump(2) + report_markdown(result, FiguresResult{}, {true, 50});
  };
  const std::string plain = outputs(
      without_column(kPskServer1, "recvts_us"), without_column(kPskClient1, "sendts_us"),
      without_column(kDsekpServer1, "recvts_us"), without_column(kDsekpClient1, "sendts_us"));
  EXPECT_EQ(plain.find("latency_us"), std::string::npos);
  EXPECT_EQ(plain.find("µs"), std::string::npos);
  // Server logs with recvts_us (what `dsekp edge` writes) and client logs without sendts_us.
  EXPECT_EQ(outputs(kPskServer1, without_column(kPskClient1, "sendts_us"), kDsekpServer1,
                    without_column(kDsekpClient1, "sendts_us")),
            plain);
  // And the other way round.
  EXPECT_EQ(outputs(without_column(kPskServer1, "recvts_us"), kPskClient1,
                    without_column(kDsekpServer1, "recvts_us"), kDsekpClient1),
            plain);
}

TEST(LatencyUsCli, GeneratedLogsMatchTheGeneratorsTruth) {
  TempDir dir;
  const auto logs = dir / "logs";
  const std::string generate =
      std::string("'") + DSEKP_PYTHON3 + "' '" + (kTestDir / "gen_logs.py").string() + "' --out '" +
      logs.string() +
      "' --packets 6000 --devices 3 --sessions 4 --seed 11 --loss 0.01 --duplicate-rate 0.01 "
      "--outlier-rate 0.002 --micros --bad-micros 6 --truth '" +
      (dir / "truth.json").string() + "'";
  ASSERT_EQ(std::system(generate.c_str()), 0);
  const std::string command = std::string("'") + ::dsekp::test::cli_path() + "' analyze --logs '" +
                              logs.string() + "' --out '" + (dir / "out").string() +
                              "' --no-figures >'" + (dir / "stdout.txt").string() + "' 2>'" +
                              (dir / "stderr.txt").string() + "'";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_text(dir / "stderr.txt");
  std::ifstream truth_in(dir / "truth.json");
  const json truth = json::parse(truth_in);
  std::ifstream summary_in(dir / "out/summary.json");
  const json s = json::parse(summary_in);
  for (const char* mode : {"psk", "dsekp"}) {
    SCOPED_TRACE(mode);
    const json& t = truth[mode]["micros"];
    const json& m = s["latency_us"][mode];
    EXPECT_EQ(m["n"], t["n"]);
    EXPECT_EQ(m["outliers_excluded"], t["outliers"]);
    for (const char* key : {"mean", "sd", "median", "p95", "p99", "max"})
      EXPECT_NEAR(m[key].get<double>(), t[key].get<double>(),
                  1e-9 * std::max(1.0, std::fabs(t[key].get<double>())))
          << key;
    EXPECT_EQ(m["server_rows_without_latency"]["bad_recvts_us"], t["bad_server_lines"].size());
    EXPECT_EQ(m["server_rows_without_latency"]["bad_sendts_us"], t["bad_sendts_us_rows"]);
    EXPECT_EQ(m["client_rows_bad_sendts_us"], t["bad_client_lines"].size());
    std::vector<std::uint64_t> server_lines;
    std::vector<std::uint64_t> client_lines;
    for (const auto& f : m["files"])
      for (const auto& b : f["first_bad_rows"])
        (f["kind"] == "server log" ? server_lines : client_lines)
            .push_back(b["line"].get<std::uint64_t>());
    EXPECT_EQ(json(server_lines), t["bad_server_lines"]);
    EXPECT_EQ(json(client_lines), t["bad_client_lines"]);
    // The ms tables still have every row, spoiled µs values included.
    EXPECT_EQ(s["modes"][mode]["latency_ms"]["n"], truth[mode]["latency_n"]);
  }
  EXPECT_EQ(truth["psk"]["micros"]["bad_server_lines"].size(), 6u);
  EXPECT_EQ(truth["dsekp"]["micros"]["bad_client_lines"].size(), 6u);
  EXPECT_EQ(s["bad_rows_total"], 0);
  EXPECT_NE(read_text(dir / "stderr.txt").find("left out of the µs latency table only"),
            std::string::npos);
  EXPECT_NE(read_text(dir / "out/report.md").find("## Latency at microsecond resolution (ours)"),
            std::string::npos);
}

}  // namespace
}  // namespace dsekp::analyze
