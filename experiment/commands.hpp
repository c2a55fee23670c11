// The command lines of the experiment's children, built from the interfaces fixed in
// contracts-issue4.md (`dsekp device`, `dsekp link`, the `dsekp edge` additions) and
// `dsekp analyze`. Kept apart from the orchestration so that tests can check them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dsekp::experiment {

struct EdgeCommand {
  std::string broker;  // HOST:PORT
  std::string registry_db;
  std::string state_db;
  std::string logs_dir;
  std::string ready_file;
  std::string client_id;
  std::uint32_t init_burst = 0;      // 0: the edge's default
  std::uint32_t init_refill_ms = 0;  // 0: the edge's default
};

struct LinkCommand {
  std::string target;  // the broker, HOST:PORT
  std::string spec;
  std::uint64_t seed = 1;
  std::string stats_json;
};

struct DeviceCommand {
  std::string broker;  // HOST:PORT (the link's port when a link is in the path)
  std::string mode;    // psk | dsekp
  std::string credentials;
  std::string encoding = "json";
  std::size_t devices = 1;
  std::uint64_t count = 0;
  std::uint32_t interval_ms = 2000;
  std::string logs_dir;
  std::string summary_json;
  double reset_prob = 0;
  std::uint64_t reset_every = 0;
  std::uint64_t seed = 1;
  int qos = 1;
  bool progress = false;
  bool anonymous = false;
};

struct AnalyzeCommand {
  std::string logs_dir;  // --logs DIR (every standard file in it) ...
  // ... or explicit files (the trial's folder has a header-only PSK server log, which analyze
  // would refuse, so the trial names its DSEKP files).
  std::string dsekp_server;
  std::string dsekp_client;
  std::string handshakes;
  std::string out_dir;
  bool figures = true;
};

std::vector<std::string> edge_argv(const std::string& dsekp, const EdgeCommand& c);
std::vector<std::string> link_argv(const std::string& dsekp, const LinkCommand& c);
std::vector<std::string> device_argv(const std::string& dsekp, const DeviceCommand& c);
std::vector<std::string> analyze_argv(const std::string& dsekp, const AnalyzeCommand& c);

/// A command line as one string, arguments with shell metacharacters single-quoted.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace dsekp::experiment
