// `dsekp bench scale`: many simulated devices connected at once to one broker and one edge
// (default 10,000 DSEKP devices, each sending every 10 s, for 5 minutes), and what that costs the
// edge (docs/PERFORMANCE.md, "Scale: 10,000 devices").
//
// Steps: provision the devices; start a private Mosquitto and `dsekp edge` (default settings);
// sample the edge's and the broker's CPU time and memory from /proc every second
// (proc_sampler.hpp); run `dsekp device` for the connection ramp (devices / connect rate) plus
// the duration, so that every device sends for about the whole duration; wait until the edge has
// logged what the broker acknowledged; take the edge's final memory; stop everything; join the
// logs for the delivery ratio (latency_join.hpp, the same join as `dsekp bench e2e`).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench_rig.hpp"
#include "figures.hpp"
#include "latency_join.hpp"
#include "proc_sampler.hpp"

namespace dsekp::bench::e2e {

struct ScaleOptions {
  std::size_t devices = 10'000;
  std::uint32_t interval_ms = 10'000;
  double duration_s = 300;     // of sending, after the connection ramp
  double connect_rate = 500;   // new connections per second (the device's default)
  std::string mode = "dsekp";  // or psk
  std::string encoding = "json";
  int qos = 1;
  std::uint64_t seed = 1;
  std::string dir;
  bool keep = false;
  std::string dsekp_exe;
  std::string mosquitto;
};

struct ScaleResult {
  ScaleOptions options;
  std::string dir;
  bool dir_removed = false;
  std::string mosquitto_version;
  std::uint64_t nofile_limit = 0;
  MachineLoad load_before, load_after;
  double ramp_s = 0;             // devices / connect rate
  double device_duration_s = 0;  // what `dsekp device --duration-s` got
  FleetRun fleet;
  JoinResult join;  // latency_us emptied after the percentiles are taken
  Percentiles latency_us;
  ProcSummary edge, broker;  // from the fleet's start until the edge had logged everything
  std::uint64_t edge_rss_before_kb = 0;  // the edge's RSS when ready, before any device
  double wall_s = 0;
  std::vector<Target> targets;
  std::vector<std::string> commands;
  std::vector<std::string> problems;
};

ScaleResult run_scale(const ScaleOptions& options,
                      const std::function<void(const std::string&)>& say);

std::string validate(const ScaleOptions& options);

}  // namespace dsekp::bench::e2e
