// The options SIGHUP may change (see reloadable_options.hpp).
#include "edge/daemon/reloadable_options.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

#include "edge/daemon/edge_options.hpp"
#include "edge/logging/edge_logger.hpp"

namespace dsekp::edge::daemon {

void check_reloadable(const EdgeDaemonOptions& o) {
  if (o.replay_window < 1 || o.replay_window > ReplayWindow::kMaxSize)
    throw std::runtime_error("--replay-window: must be 1.." +
                             std::to_string(ReplayWindow::kMaxSize));
}

void apply_reloadable(const EdgeDaemonOptions& o, EdgeServiceConfig& config) {
  check_reloadable(o);
  config.max_skew_s = o.max_skew_s;
  config.init_rate.capacity = o.init_burst;
  config.init_rate.refill_interval_ms = o.init_refill_ms;
  config.replay_window = o.replay_window;
  config.ratchet_lookahead = o.ratchet_lookahead;
}

void report_restart_only_changes(const EdgeDaemonOptions& a, const EdgeDaemonOptions& b) {
  const auto check = [](bool changed, std::string_view name) {
    if (changed)
      logging::logger().warn("SIGHUP: {} changed; it takes effect after a restart", name);
  };
  check(a.broker_host != b.broker_host || a.broker_port != b.broker_port, "broker");
  check(a.username != b.username, "username");
  check(a.store_password != b.store_password, "store password");
  check(a.log_format != b.log_format, "log_format");
  for (const OptionSpec& spec : edge_option_specs())
    if (spec.reload == OptionReload::restart) check(option_differs(spec, a, b), spec.key);
}

}  // namespace dsekp::edge::daemon
