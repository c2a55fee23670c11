// End to end: `dsekp analyze` on the hand-made fixture (fixtures/small, README there) and on
// generated logs (gen_logs.py, whose ground truth is computed independently), checking the key
// numbers of summary.json, report.md, the rendered figures, and the exit status and message for
// unusable inputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "figures.hpp"
#include "test_support.hpp"
#include "tests/support/build_paths.hpp"

namespace dsekp::analyze {
namespace {

using nlohmann::json;
using testing::read_text;
using testing::TempDir;
using testing::write_file;

const std::filesystem::path kTestDir = DSEKP_ANALYZE_TEST_DIR;

struct CliRun {
  int status = -1;
  std::string out;
  std::string err;
};

CliRun run_analyze(const TempDir& dir, const std::string& args) {
  const std::string command = std::string("'") + ::dsekp::test::cli_path() + "' analyze " + args +
                              " >'" + (dir / "stdout.txt").string() + "' 2>'" +
                              (dir / "stderr.txt").string() + "'";
  CliRun run;
  const int status = std::system(command.c_str());
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_text(dir / "stdout.txt");
  run.err = read_text(dir / "stderr.txt");
  return run;
}

json load_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

TEST(AnalyzeCli, HandMadeFixture) {
  ASSERT_FALSE(find_on_path("gnuplot").empty())
      << "gnuplot is required for this test (Debian gnuplot-nox; `make deps` installs it)";
  TempDir dir;
  const auto out = dir / "results";
  const CliRun run = run_analyze(dir, "--logs '" + (kTestDir / "fixtures/small").string() +
                                          "' --out '" + out.string() + "' --paper");
  ASSERT_EQ(run.status, 0) << run.err;
  // The bad row is reported on stderr with its line number.
  EXPECT_NE(run.err.find("server_logs_psk.csv:8: seq: 'x' is not a sequence number"),
            std::string::npos)
      << run.err;

  const json s = load_json(out / "summary.json");
  const json& psk = s["modes"]["psk"];
  EXPECT_EQ(psk["latency_ms"]["n"], 5);
  EXPECT_EQ(psk["latency_ms"]["outliers_excluded"], 1);
  EXPECT_DOUBLE_EQ(psk["latency_ms"]["mean"].get<double>(), 248.0);
  EXPECT_DOUBLE_EQ(psk["latency_ms"]["median"].get<double>(), 240.0);
  EXPECT_DOUBLE_EQ(psk["latency_ms"]["min"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(psk["latency_ms"]["max"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(psk["payload_bytes"]["mean"].get<double>(), 156.0);
  EXPECT_EQ(psk["reliability"]["sent"], 6);
  EXPECT_EQ(psk["reliability"]["received"], 5);
  EXPECT_EQ(psk["reliability"]["lost"], 1);
  EXPECT_EQ(psk["reliability"]["duplicates"], 1);
  EXPECT_DOUBLE_EQ(psk["reliability"]["delivery_pct"].get<double>(), 500.0 / 6.0);
  EXPECT_EQ(psk["reliability"]["devices"][0]["dev_id"], "dev-a");
  EXPECT_DOUBLE_EQ(psk["reliability"]["devices"][0]["delivery_pct"].get<double>(), 75.0);
  EXPECT_EQ(psk["throughput"]["occupied_bins_1s"], 3);
  EXPECT_EQ(psk["throughput"]["active_seconds"], 19);
  EXPECT_DOUBLE_EQ(psk["throughput"]["pps_nonempty_bins"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(psk["throughput"]["bps_nonempty_bins"].get<double>(), 2496.0);

  const json& dsekp = s["modes"]["dsekp"];
  EXPECT_EQ(dsekp["latency_ms"]["n"], 6);
  EXPECT_DOUBLE_EQ(dsekp["latency_ms"]["mean"].get<double>(), 400.0);
  EXPECT_EQ(dsekp["reliability"]["sent"], 5);
  EXPECT_EQ(dsekp["reliability"]["received"], 5);
  EXPECT_EQ(dsekp["reliability"]["unexpected"], 1);
  EXPECT_EQ(dsekp["reliability"]["sessions"], 3);
  EXPECT_DOUBLE_EQ(dsekp["reliability"]["delivery_pct"].get<double>(), 100.0);

  const json& c = s["comparison"];
  EXPECT_NEAR(c["payload_overhead_pct"].get<double>(), 19.0 / 156.0 * 100.0, 1e-9);
  EXPECT_NEAR(c["cliffs_delta"].get<double>(), -8.0 / 15.0, 1e-12);
  EXPECT_LT(c["cohens_d"].get<double>(), 0);
  EXPECT_GT(c["welch_t_test"]["p"].get<double>(), 0);

  const json& h = s["handshakes"];
  EXPECT_EQ(h["handshakes"], 5);
  EXPECT_EQ(h["ok"], 3);
  EXPECT_EQ(h["timeout"], 1);
  EXPECT_EQ(h["rejected"], 1);
  EXPECT_DOUBLE_EQ(h["success_pct"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(h["latency_ms"]["mean"].get<double>(), 200.0);
  EXPECT_DOUBLE_EQ(h["sessions_per_device_mean"].get<double>(), 1.5);

  EXPECT_EQ(s["bad_rows_total"], 1);
  EXPECT_EQ(s["files"][0]["first_bad_rows"][0]["line"], 8);
  EXPECT_DOUBLE_EQ(s["paper"]["cohens_d"].get<double>(), -0.486);

  const std::string report = read_text(out / "report.md");
  EXPECT_NE(report.find("| Mean latency (ms) | 248.0 ± 111.9 | 400.0 ± 187.1 | 283.0 ± 182.9 | "
                        "360.0 ± 129.8 |"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("| Payload overhead (%) | – | 12.18 | – | 10.34 |"), std::string::npos);
  EXPECT_NE(report.find("- line 8: seq: 'x' is not a sequence number"), std::string::npos);

  for (const char* name :
       {"latency_cdf", "latency_boxplot", "throughput", "payload", "handshake_latency"}) {
    for (const char* ext : {".png", ".svg", ".gp"}) {
      const auto file = out / "figures" / (std::string(name) + ext);
      ASSERT_TRUE(std::filesystem::exists(file)) << file;
      EXPECT_GT(std::filesystem::file_size(file), 1000u) << file;
    }
  }
  EXPECT_EQ(s["figures"]["list"].size(), 5u);
}

TEST(AnalyzeCli, GeneratedLogsMatchTheGeneratorsGroundTruth) {
  TempDir dir;
  const auto logs = dir / "logs";
  const std::string generate =
      std::string("'") + DSEKP_PYTHON3 + "' '" + (kTestDir / "gen_logs.py").string() + "' --out '" +
      logs.string() +
      "' --packets 20000 --devices 7 --sessions 5 --seed 42 --loss 0.01 "
      "--duplicate-rate 0.005 --outlier-rate 0.001 --bad-rows 4 --truth '" +
      (dir / "truth.json").string() + "'";
  ASSERT_EQ(std::system(generate.c_str()), 0);
  const CliRun run = run_analyze(
      dir, "--logs '" + logs.string() + "' --out '" + (dir / "out").string() + "' --no-figures");
  ASSERT_EQ(run.status, 0) << run.err;
  const json truth = load_json(dir / "truth.json");
  const json s = load_json(dir / "out/summary.json");
  for (const char* mode : {"psk", "dsekp"}) {
    SCOPED_TRACE(mode);
    const json& t = truth[mode];
    const json& m = s["modes"][mode];
    EXPECT_EQ(m["reliability"]["sent"], t["sent"]);
    EXPECT_EQ(m["reliability"]["received"], t["received"]);
    EXPECT_EQ(m["reliability"]["lost"], t["lost"]);
    EXPECT_EQ(m["reliability"]["duplicates"], t["duplicates"]);
    EXPECT_EQ(m["reliability"]["unexpected"], 0);
    EXPECT_EQ(m["latency_ms"]["outliers_excluded"], t["outliers"]);
    EXPECT_EQ(m["latency_ms"]["n"], t["latency_n"]);
    EXPECT_NEAR(m["latency_ms"]["mean"].get<double>(), t["latency_mean_ms"].get<double>(), 1e-9);
    EXPECT_NEAR(m["payload_bytes"]["mean"].get<double>(), t["payload_mean_bytes"].get<double>(),
                1e-9);
    for (const auto& device : m["reliability"]["devices"]) {
      const json& expected = t["devices"][device["dev_id"].get<std::string>()];
      EXPECT_EQ(device["sent"], expected["sent"]);
      EXPECT_EQ(device["lost"], expected["lost"]);
      EXPECT_EQ(device["duplicates"], expected["duplicates"]);
    }
  }
  EXPECT_EQ(s["modes"]["dsekp"]["reliability"]["sessions"], truth["dsekp"]["sessions"]);
  // Injected bad rows: all counted, each at the line the generator wrote it.
  const json& psk_server = s["files"][0];
  EXPECT_EQ(psk_server["bad_rows"], truth["psk"]["bad_row_lines"].size());
  for (std::size_t i = 0; i < psk_server["first_bad_rows"].size(); ++i)
    EXPECT_EQ(psk_server["first_bad_rows"][i]["line"], truth["psk"]["bad_row_lines"][i]);
  const json& h = s["handshakes"];
  EXPECT_EQ(h["handshakes"], truth["handshakes"]["handshakes"]);
  EXPECT_EQ(h["ok"], truth["handshakes"]["ok"]);
  EXPECT_NEAR(h["latency_ms"]["mean"].get<double>(),
              truth["handshakes"]["latency_mean_ms"].get<double>(), 1e-9);
  EXPECT_FALSE(std::filesystem::exists(dir / "out/figures"));  // --no-figures
}

TEST(AnalyzeCli, MissingColumnFailsWithAClearMessage) {
  TempDir dir;
  const auto bad =
      write_file(dir / "server.csv", "seq,dev_id,recvts_ms,payload_size\n1,a,1000,150\n");
  const CliRun run = run_analyze(dir, "--psk-server '" + bad.string() + "' --out '" +
                                          (dir / "out").string() + "' --no-figures");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("missing column latency_ms"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out/report.md"));
}

TEST(AnalyzeCli, EmptyFileFailsWithAClearMessage) {
  TempDir dir;
  const auto empty = write_file(dir / "server.csv", "");
  const CliRun run = run_analyze(dir, "--dsekp-server '" + empty.string() + "' --out '" +
                                          (dir / "out").string() + "' --no-figures");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("empty file"), std::string::npos) << run.err;
}

TEST(AnalyzeCli, UnpairedClientLogsFail) {
  TempDir dir;
  const auto s1 = write_file(dir / "s1.csv", "x");
  const auto c1 = write_file(dir / "c1.csv", "x");
  const CliRun run = run_analyze(dir, "--psk-server '" + s1.string() + "' --psk-server '" +
                                          s1.string() + "' --psk-client '" + c1.string() + "'");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("pair with server logs by position"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace dsekp::analyze
