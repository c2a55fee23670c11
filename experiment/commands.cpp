// Command lines of the experiment's children (see commands.hpp).
#include "commands.hpp"

#include <cstdio>

namespace dsekp::experiment {
namespace {

std::string number(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", value);
  return buf;
}

}  // namespace

std::vector<std::string> edge_argv(const std::string& dsekp, const EdgeCommand& c) {
  std::vector<std::string> a = {dsekp, "edge", "--broker", c.broker, "--db", c.registry_db,
                                "--state-db", c.state_db, "--logs-dir", c.logs_dir, "--metrics",
                                "off", "--ready-file", c.ready_file, "--client-id", c.client_id,
                                // The comparison needs the baseline's topic served.
                                "--psk-baseline"};
  if (c.init_burst > 0) {
    a.insert(a.end(), {"--init-burst", std::to_string(c.init_burst)});
  }
  if (c.init_refill_ms > 0) {
    a.insert(a.end(), {"--init-refill-ms", std::to_string(c.init_refill_ms)});
  }
  return a;
}

std::vector<std::string> link_argv(const std::string& dsekp, const LinkCommand& c) {
  std::vector<std::string> a = {
      dsekp,    "link",   "--listen", "127.0.0.1:0", "--target",
      c.target, "--link", c.spec,     "--seed",      std::to_string(c.seed)};
  if (!c.stats_json.empty()) a.insert(a.end(), {"--stats-json", c.stats_json});
  return a;
}

std::vector<std::string> device_argv(const std::string& dsekp, const DeviceCommand& c) {
  std::vector<std::string> a = {dsekp,
                                "device",
                                "--broker",
                                c.broker,
                                "--mode",
                                c.mode,
                                "--credentials",
                                c.credentials,
                                "--encoding",
                                c.encoding,
                                "--devices",
                                std::to_string(c.devices),
                                "--count",
                                std::to_string(c.count),
                                "--interval-ms",
                                std::to_string(c.interval_ms),
                                "--logs-dir",
                                c.logs_dir,
                                "--summary-json",
                                c.summary_json,
                                "--seed",
                                std::to_string(c.seed),
                                "--qos",
                                std::to_string(c.qos),
                                "--progress",
                                c.progress ? "on" : "off"};
  if (c.reset_every > 0) a.insert(a.end(), {"--reset-every", std::to_string(c.reset_every)});
  if (c.reset_prob > 0) a.insert(a.end(), {"--reset-prob", number(c.reset_prob)});
  if (c.anonymous) a.push_back("--anonymous");
  return a;
}

std::vector<std::string> analyze_argv(const std::string& dsekp, const AnalyzeCommand& c) {
  std::vector<std::string> a = {dsekp, "analyze"};
  if (!c.logs_dir.empty()) a.insert(a.end(), {"--logs", c.logs_dir});
  if (!c.dsekp_server.empty()) a.insert(a.end(), {"--dsekp-server", c.dsekp_server});
  if (!c.dsekp_client.empty()) a.insert(a.end(), {"--dsekp-client", c.dsekp_client});
  if (!c.handshakes.empty()) a.insert(a.end(), {"--handshakes", c.handshakes});
  a.insert(a.end(), {"--out", c.out_dir, "--paper"});
  if (!c.figures) a.push_back("--no-figures");
  return a;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789-_./:=,%+@") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (const char ch : arg) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    out += '\'';
  }
  return out;
}

}  // namespace dsekp::experiment
