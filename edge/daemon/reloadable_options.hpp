// What SIGHUP may change in a running edge: the options re-read from the config file that go
// into the service's configuration, and a warning for each other option that changed, which
// takes effect only after a restart (instead of silently running with the old value).
#pragma once

#include "edge/daemon/edge_daemon.hpp"
#include "edge/service/edge_service.hpp"

namespace dsekp::edge::daemon {

/// Throws std::runtime_error if a reloadable option is out of range.
void check_reloadable(const EdgeDaemonOptions& o);

/// The reloadable options of `o` into `config` (checked first).
void apply_reloadable(const EdgeDaemonOptions& o, EdgeServiceConfig& config);

/// Logs a warning per restart-only option that differs between `running` and `reloaded`.
void report_restart_only_changes(const EdgeDaemonOptions& running,
                                 const EdgeDaemonOptions& reloaded);

}  // namespace dsekp::edge::daemon
