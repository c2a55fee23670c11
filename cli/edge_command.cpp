// `dsekp edge --broker HOST:PORT --db PATH --logs-dir DIR ...` (see edge_command.hpp).
#include "edge_command.hpp"

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "edge/daemon/edge_daemon.hpp"

namespace dsekp::cli {
namespace {

struct EdgeArgs {
  edge::daemon::EdgeDaemonOptions options;
  std::string broker;
  std::string username;
  bool no_csv = false;
  bool no_republish = false;
};

void parse_broker(const std::string& text, edge::daemon::EdgeDaemonOptions& o) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::runtime_error("--broker: expected HOST:PORT, got \"" + text + "\"");
  const unsigned long port = std::stoul(text.substr(colon + 1));
  if (port == 0 || port > 65535) throw std::runtime_error("--broker: port out of range");
  o.broker_host = text.substr(0, colon);
  o.broker_port = static_cast<std::uint16_t>(port);
}

}  // namespace

void add_edge_command(CLI::App& app) {
  auto args = std::make_shared<EdgeArgs>();
  CLI::App* cmd = app.add_subcommand("edge", "Run the edge gateway daemon until SIGTERM/SIGINT");
  cmd->add_option("--broker", args->broker, "MQTT broker HOST:PORT")->required();
  cmd->add_option("--db", args->options.registry_db, "Device registry (from `dsekp keys`)")
      ->required();
  cmd->add_option("--state-db", args->options.state_db,
                  "Session state + telemetry database (default: <db>.state)");
  cmd->add_option("--logs-dir", args->options.logs_dir,
                  "Directory of server_logs_psk.csv / server_logs_dsekp.csv");
  cmd->add_option("--username", args->username,
                  "Broker user (default: the registry's edge account, else anonymous)");
  cmd->add_option("--password", args->options.password, "Broker password (see --username)");
  cmd->add_option("--client-id", args->options.client_id, "MQTT client id (persistent session)")
      ->capture_default_str();
  cmd->add_option("--metrics", args->options.metrics, "Metrics endpoint HOST:PORT, or off")
      ->capture_default_str();
  cmd->add_option("--prefix", args->options.topic_prefix, "Topic prefix, e.g. site1/");
  cmd->add_option("--max-skew", args->options.max_skew_s,
                  "INIT freshness window in seconds (0: clockless devices)")
      ->capture_default_str();
  cmd->add_flag("--no-csv", args->no_csv, "Do not write the server CSV logs");
  cmd->add_flag("--no-republish", args->no_republish,
                "Do not republish readings on {prefix}plain/{dev_id}");
  cmd->callback([args, cmd] {
    edge::daemon::EdgeDaemonOptions o = args->options;
    parse_broker(args->broker, o);
    if (cmd->count("--username") > 0) o.username = args->username;
    o.csv = !args->no_csv;
    o.republish = !args->no_republish;
    if (o.csv && o.logs_dir.empty())
      throw std::runtime_error("--logs-dir is required (or --no-csv)");
    const int code = edge::daemon::run_edge_daemon(o);
    if (code != 0) std::exit(code);
  });
}

}  // namespace dsekp::cli
