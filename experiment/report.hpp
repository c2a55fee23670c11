// The experiment's own report: DIR/report.md (setup, our numbers beside the paper's Tables 6-7,
// the multi-session trial, "What reproduced and what did not" claim by claim, the runs and the
// files) and DIR/experiment.json (the same facts and verdicts, machine-readable). The detailed
// analysis stays in dsekp analyze's report under DIR/analysis/, which this one links.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "machine_info.hpp"
#include "verdicts.hpp"

namespace dsekp::experiment {

/// One `dsekp device` run as the experiment saw it.
struct DeviceRunRecord {
  std::string name;  // "psk", "dsekp", "trial"
  std::string mode;  // psk | dsekp
  std::size_t devices = 0;
  std::uint64_t frames_per_device = 0;
  std::string command;           // shell-quoted command line
  std::optional<int> exit_code;  // shell convention (128 + signal); unset if it never ended
  std::string exit_text;         // "exit code 0"
  nlohmann::json summary;        // the device's --summary-json (null if it wrote none)
  std::uint64_t edge_rows = 0;   // rows the edge logged for this run's mode
  double wall_s = 0;
};

/// Everything the report says about how the experiment was set up.
struct ReportSetup {
  std::string started_utc;
  std::string finished_utc;
  double duration_s = 0;
  std::string command_line;
  MachineInfo machine;
  std::string broker;     // "private Mosquitto ... on 127.0.0.1:PORT" or "existing broker ..."
  std::string link_name;  // empty: no link
  std::string link_spec;
  std::string link_description;
  nlohmann::json link_stats;  // dsekp link --stats-json, null if none
  std::size_t devices = 1;
  std::uint64_t packets = 0;
  std::uint32_t interval_ms = 0;
  bool paper_timing = false;
  std::string encoding;
  int qos = 1;
  std::uint64_t seed = 1;
  bool trial = true;
  std::size_t trial_devices = 0;
  std::uint64_t trial_packets = 0;
  double reset_prob = 0;
  std::uint64_t reset_every = 0;
  double expected_resets = 0;
  std::string trial_edge_limits;  // e.g. "--init-burst 1000 --init-refill-ms 10"
};

struct ReportInputs {
  ReportSetup setup;
  std::vector<DeviceRunRecord> runs;
  nlohmann::json main_summary;   // analyze summary.json (null if the analysis did not run)
  nlohmann::json trial_summary;  // null without a trial
  std::vector<Verdict> verdicts;
  std::vector<std::string> problems;  // what went wrong (empty on a clean run)
  std::vector<std::string> commands;  // edge, link and analyze command lines, in order
};

std::string report_markdown(const ReportInputs& inputs);
nlohmann::ordered_json experiment_json(const ReportInputs& inputs);

}  // namespace dsekp::experiment
