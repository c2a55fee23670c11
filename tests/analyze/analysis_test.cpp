// The analysis driver's own rules: the outlier rule (configurable, counted), payload overhead,
// the multi-session (handshake) summary, the PSK vs DSEKP comparison's sign convention, and how
// input files are collected and paired.
#include "analysis.hpp"

#include <gtest/gtest.h>

#include "error.hpp"
#include "handshakes.hpp"
#include "inputs.hpp"
#include "payload.hpp"
#include "test_support.hpp"
#include "text_format.hpp"

namespace dsekp::analyze {
namespace {

using testing::TempDir;
using testing::write_file;

std::filesystem::path server_log(const TempDir& dir, const std::string& name,
                                 const std::vector<double>& latencies, int payload) {
  std::string text = "seq,dev_id,recvts_ms,latency_ms,payload_size\n";
  for (std::size_t i = 0; i < latencies.size(); ++i)
    text += std::to_string(i) + ",d," + std::to_string(1000000 + 2000 * i) + "," +
            std::to_string(latencies[i]) + "," + std::to_string(payload) + "\n";
  return write_file(dir / name, text);
}

TEST(OutlierRule, ExcludesAboveThresholdOnly) {
  std::vector<double> v = {100, 10000, 10000.5, 25000, -5};
  EXPECT_EQ(apply_outlier_rule(v, 10000), 2u);
  EXPECT_EQ(v, (std::vector<double>{100, 10000, -5}));  // exactly 10 s is kept (rule: > 10 s)
  std::vector<double> w = {100, 25000};
  EXPECT_EQ(apply_outlier_rule(w, 0), 0u);  // 0 turns the rule off
  EXPECT_EQ(w.size(), 2u);
}

TEST(OutlierRule, AppliedToLatencyStatisticsButPacketsStillCount) {
  TempDir dir;
  const auto psk = server_log(dir, "s.csv", {100, 200, 300, 15000, 40000}, 150);
  AnalysisInputs inputs;
  inputs.psk = {{psk, std::nullopt}};
  AnalysisOptions options;
  const auto with_rule = analyze_logs(inputs, options);
  ASSERT_TRUE(with_rule.psk);
  EXPECT_EQ(with_rule.psk->latency.outliers_excluded, 2u);
  EXPECT_EQ(with_rule.psk->latency.rows, 5u);
  EXPECT_EQ(with_rule.psk->latency.stats.n, 3u);
  EXPECT_DOUBLE_EQ(*with_rule.psk->latency.stats.mean, 200.0);
  EXPECT_EQ(with_rule.psk->throughput.packets, 5u);  // still delivered
  EXPECT_EQ(with_rule.psk->payload_summary.n, 5u);

  options.outlier_ms = 20000;
  const auto custom = analyze_logs(inputs, options);
  EXPECT_EQ(custom.psk->latency.outliers_excluded, 1u);
  EXPECT_EQ(custom.psk->latency.stats.n, 4u);

  options.outlier_ms = 0;
  const auto off = analyze_logs(inputs, options);
  EXPECT_EQ(off.psk->latency.outliers_excluded, 0u);
  EXPECT_DOUBLE_EQ(*off.psk->latency.stats.max, 40000.0);
}

TEST(Payload, OverheadPercent) {
  PayloadSummary psk;
  psk.mean = 154.8;
  PayloadSummary dsekp;
  dsekp.mean = 170.8;
  EXPECT_EQ(fixed(payload_overhead_pct(psk, dsekp), 2), "10.34");  // the paper's Table 7
  EXPECT_FALSE(payload_overhead_pct(PayloadSummary{}, dsekp));
}

TEST(Payload, HistogramSummary) {
  PayloadHistogram h;
  for (const int size : {156, 156, 157, 160}) h.add(static_cast<std::uint64_t>(size));
  const auto s = h.summary();
  EXPECT_EQ(s.n, 4u);
  EXPECT_EQ(s.total_bytes, 629u);
  EXPECT_DOUBLE_EQ(*s.mean, 157.25);
  EXPECT_NEAR(*s.sd, 1.8929694486, 1e-9);  // sd(c(156,156,157,160)) in R
  EXPECT_EQ(*s.min, 156u);
  EXPECT_EQ(*s.max, 160u);
}

TEST(Comparison, PayloadOverheadAndSignThroughTheLogs) {
  TempDir dir;
  AnalysisInputs inputs;
  inputs.psk = {{server_log(dir, "p.csv", {100, 200, 300, 400}, 156), std::nullopt}};
  const std::string dsekp_text =
      "seq,dev_id,sessctr_id,recvts_ms,latency_ms,payload_size\n"
      "0,d,1,1000,300,175\n1,d,1,3000,400,175\n2,d,1,5000,500,175\n3,d,1,7000,600,175\n";
  inputs.dsekp = {{write_file(dir / "d.csv", dsekp_text), std::nullopt}};
  const auto result = analyze_logs(inputs, {});
  ASSERT_TRUE(result.comparison);
  const auto& c = *result.comparison;
  EXPECT_NEAR(*c.payload_overhead_pct, (175.0 - 156.0) / 156.0 * 100.0, 1e-12);
  EXPECT_LT(*c.cohens_d, 0);  // PSK - DSEKP: PSK lower
  EXPECT_NEAR(*c.cliffs_delta, -12.0 / 16.0, 1e-12);
  EXPECT_LT(c.t_test->t, 0);
  EXPECT_DOUBLE_EQ(*c.median_shift_ms, 200.0);
  EXPECT_DOUBLE_EQ(*c.mean_latency_change_pct, 80.0);
}

TEST(Handshakes, MultiSessionSummary) {
  HandshakeLogData trial1;
  trial1.devices = {"a", "b"};
  trial1.records = {{0, 10, HandshakeOutcome::ok, 1, 180, true},
                    {0, 11, HandshakeOutcome::ok, 2, 1220, true},
                    {0, 12, HandshakeOutcome::timeout, 3, 0, false},
                    {1, 5, HandshakeOutcome::ok, 1, 200, true}};
  HandshakeLogData trial2;
  trial2.devices = {"b", "c"};  // "b" again: matched by name across files
  trial2.records = {{0, 6, HandshakeOutcome::rejected, 1, 90, true},
                    {0, 7, HandshakeOutcome::ok, 1, 160, true},
                    {1, 1, HandshakeOutcome::timeout, 4, 0, false}};
  const std::vector<HandshakeLogData> logs = {trial1, trial2};
  const auto s = summarize_handshakes(logs);
  EXPECT_EQ(s.handshakes, 7u);
  EXPECT_EQ(s.ok, 4u);
  EXPECT_EQ(s.timeout, 2u);
  EXPECT_EQ(s.rejected, 1u);
  EXPECT_DOUBLE_EQ(*s.success_pct, 400.0 / 7.0);
  EXPECT_EQ(s.ok_first_attempt, 3u);
  EXPECT_DOUBLE_EQ(*s.attempts_mean, 13.0 / 7.0);
  EXPECT_EQ(s.attempts_max, 4u);
  EXPECT_EQ(s.latency_ms.n, 4u);
  EXPECT_DOUBLE_EQ(*s.latency_ms.mean, (180.0 + 1220 + 200 + 160) / 4);
  EXPECT_DOUBLE_EQ(*s.latency_ms.median, 190.0);
  EXPECT_EQ(s.latencies_sorted, (std::vector<double>{160, 180, 200, 1220}));
  EXPECT_EQ(s.devices, 3u);
  EXPECT_DOUBLE_EQ(*s.sessions_per_device_mean, 4.0 / 3.0);  // a: 2, b: 2, c: 0
  EXPECT_EQ(*s.sessions_per_device_min, 0u);
  EXPECT_EQ(*s.sessions_per_device_max, 2u);
  ASSERT_EQ(s.per_device.size(), 3u);
  EXPECT_EQ(s.per_device[1].dev_id, "b");
  EXPECT_EQ(s.per_device[1].handshakes, 3u);
  EXPECT_EQ(s.per_device[1].rejected, 1u);
}

TEST(Inputs, DirectoriesAndExplicitFilesArePairedByPosition) {
  TempDir dir;
  std::filesystem::create_directories(dir / "run1");
  write_file(dir / "run1/server_logs_psk.csv", "x");
  write_file(dir / "run1/client_logs_psk.csv", "x");
  write_file(dir / "run1/server_logs_dsekp.csv", "x");
  write_file(dir / "run1/client_handshakes_dsekp.csv", "x");
  ExplicitFiles files;
  files.dsekp_server = {"s1.csv", "s2.csv"};
  files.dsekp_client = {"c1.csv", "c2.csv"};
  const std::vector<std::filesystem::path> dirs = {dir / "run1"};
  const auto inputs = collect_inputs(dirs, files);
  ASSERT_EQ(inputs.psk.size(), 1u);
  EXPECT_EQ(inputs.psk[0].client, dir / "run1/client_logs_psk.csv");
  ASSERT_EQ(inputs.dsekp.size(), 3u);
  EXPECT_FALSE(inputs.dsekp[0].client);  // no client_logs_dsekp.csv in run1
  EXPECT_EQ(inputs.dsekp[2].server, "s2.csv");
  EXPECT_EQ(inputs.dsekp[2].client, std::filesystem::path("c2.csv"));
  EXPECT_EQ(inputs.handshakes.size(), 1u);
}

TEST(Inputs, Errors) {
  TempDir dir;
  ExplicitFiles files;
  EXPECT_THROW(collect_inputs({}, files), AnalyzeError);  // nothing given
  files.psk_server = {"a.csv", "b.csv"};
  files.psk_client = {"c.csv"};
  EXPECT_THROW(collect_inputs({}, files), AnalyzeError);  // cannot pair
  const std::vector<std::filesystem::path> empty_dir = {dir.path()};
  EXPECT_THROW(collect_inputs(empty_dir, ExplicitFiles{}), AnalyzeError);
  write_file(dir / "client_logs_psk.csv", "x");
  EXPECT_THROW(collect_inputs(empty_dir, ExplicitFiles{}), AnalyzeError);  // client without server
}

TEST(TextFormat, Numbers) {
  EXPECT_EQ(fixed(1243.5, 1), "1,243.5");
  EXPECT_EQ(fixed(-0.0001, 2), "0.00");
  EXPECT_EQ(fixed(std::optional<double>{}, 2), "–");
  EXPECT_EQ(count(1000000), "1,000,000");
  EXPECT_EQ(p_value(9.35e-164), "9.35e-164");
  EXPECT_EQ(p_value(0.0), "< 1e-300");
  EXPECT_EQ(p_value(0.04321), "0.0432");
  EXPECT_EQ(signed_fixed(-0.486, 3), "−0.486");
}

}  // namespace
}  // namespace dsekp::analyze
