// The experiment's report (experiment/report.hpp) from fixture summaries: every table and the
// verdict section are there with our numbers beside the paper's, problems are listed, and
// experiment.json carries the same verdicts.
#include "experiment/report.hpp"

#include <gtest/gtest.h>

#include "verdict_fixtures.hpp"

namespace dsekp::experiment {
namespace {

ReportInputs fixture_inputs() {
  ReportInputs in;
  in.setup.started_utc = "2025-11-30T00:00:00Z";
  in.setup.finished_utc = "2025-11-30T00:05:00Z";
  in.setup.duration_s = 300;
  in.setup.command_line = "dsekp experiment --out results/x";
  in.setup.machine.cpu_model = "Test CPU";
  in.setup.machine.mosquitto = "mosquitto version 2.0.11";
  in.setup.broker = "private mosquitto version 2.0.11 on 127.0.0.1:1234";
  in.setup.packets = 6500;
  in.setup.interval_ms = 20;
  in.setup.encoding = "json";
  in.setup.trial_devices = 5;
  in.setup.trial_packets = 200;
  in.setup.reset_prob = 0.025;
  in.setup.expected_resets = 25;
  in.main_summary = fixtures::paper_like_main();
  in.trial_summary = fixtures::good_trial();
  DeviceRunRecord trial;
  trial.name = "trial";
  trial.mode = "dsekp";
  trial.devices = 5;
  trial.frames_per_device = 200;
  trial.command = "dsekp device --mode dsekp ...";
  trial.exit_code = 0;
  trial.exit_text = "exit code 0";
  trial.summary = {{"packets_sent", 1000},
                   {"packets_acked", 1000},
                   {"resets", 25},
                   {"handshakes", {{"started", 30}, {"ok", 30}}}};
  trial.edge_rows = 1000;
  in.runs.push_back(trial);
  VerdictInputs vi;
  vi.main = in.main_summary;
  vi.trial = in.trial_summary;
  vi.trial_resets = 25;
  in.verdicts = compute_verdicts(vi);
  in.commands = {"dsekp edge --broker 127.0.0.1:1234 ..."};
  return in;
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(Report, HasEveryTableAndTheVerdictSection) {
  const ReportInputs in = fixture_inputs();
  const std::string md = report_markdown(in);
  for (const char* heading :
       {"## Verdicts at a glance", "## Setup", "## Table 6: summary statistics",
        "## Table 7: PSK vs DSEKP trade-off", "## Multi-session trial",
        "## What reproduced and what did not", "## Runs", "## Files in this folder"})
    EXPECT_TRUE(contains(md, heading)) << heading;
  for (const auto& v : in.verdicts) {
    EXPECT_TRUE(contains(md, "### " + v.id + ": ")) << v.id;
    EXPECT_TRUE(contains(md, v.rule)) << v.id;
  }
  // Our numbers beside the paper's.
  EXPECT_TRUE(contains(md,
                       "| Mean latency (ms) | 283.0 ± 100.0 | 360.0 ± 100.0 | 283.0 ± 182.9 | "
                       "360.0 ± 129.8 |"))
      << md;
  EXPECT_TRUE(contains(md, "| Mean payload (bytes) | 154.8 | 170.8 | 154.8 | 170.8 |"));
  EXPECT_TRUE(contains(md, "| Resets | 25 | 20-30 |"));
  EXPECT_TRUE(contains(md, "dsekp experiment --out results/x"));
  EXPECT_TRUE(contains(md, "dsekp edge --broker 127.0.0.1:1234"));
  EXPECT_FALSE(contains(md, "## Problems during the run"));
}

TEST(Report, ListsProblemsAndMarksTheStatus) {
  ReportInputs in = fixture_inputs();
  in.problems = {"the psk run's dsekp device ended with exit code 1"};
  const std::string md = report_markdown(in);
  EXPECT_TRUE(contains(md, "## Problems during the run"));
  EXPECT_TRUE(contains(md, "- the psk run's dsekp device ended with exit code 1"));
  const auto j = experiment_json(in);
  EXPECT_EQ(j["status"], "completed_with_problems");
  EXPECT_EQ(j["problems"].size(), 1u);
}

TEST(Report, ExperimentJsonCarriesVerdictsRunsAndSetup) {
  const ReportInputs in = fixture_inputs();
  const auto j = experiment_json(in);
  EXPECT_EQ(j["generator"], "dsekp experiment");
  EXPECT_EQ(j["status"], "complete");
  ASSERT_EQ(j["verdicts"].size(), in.verdicts.size());
  for (std::size_t i = 0; i < in.verdicts.size(); ++i) {
    EXPECT_EQ(j["verdicts"][i]["id"], in.verdicts[i].id);
    EXPECT_EQ(j["verdicts"][i]["verdict"], std::string(outcome_key(in.verdicts[i].outcome)));
  }
  EXPECT_EQ(j["runs"][0]["name"], "trial");
  EXPECT_EQ(j["runs"][0]["summary"]["resets"], 25);
  EXPECT_EQ(j["setup"]["packets_per_device"], 6500);
  EXPECT_EQ(j["setup"]["link"], nullptr);
  EXPECT_EQ(j["analysis"]["main"], "analysis/main/summary.json");
  EXPECT_EQ(j["machine"]["cpu_model"], "Test CPU");
}

TEST(Report, MissingAnalysisStillWritesAReport) {
  ReportInputs in = fixture_inputs();
  in.main_summary = nullptr;
  in.trial_summary = nullptr;
  in.verdicts = compute_verdicts(VerdictInputs{});
  const std::string md = report_markdown(in);
  EXPECT_TRUE(contains(md, "## Table 6"));
  EXPECT_TRUE(contains(md, "not testable here"));
  EXPECT_EQ(experiment_json(in)["analysis"]["main"], nullptr);
}

}  // namespace
}  // namespace dsekp::experiment
