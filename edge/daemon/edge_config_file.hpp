// `dsekp edge --config FILE`: the daemon's options from a TOML file (toml++). Every key is one
// of the flags, spelled with underscores (the plain ones are edge_options.hpp's table, with
// their ranges and whether SIGHUP reloads them; besides them broker, username, log_format and
// log_level); command-line flags override the file. An unknown key, a value of the wrong type,
// out of range or not among a key's choices is an error that names the file and the key.
//
//   broker = "127.0.0.1:1883"        db = "/var/lib/dsekp/edge.db"    state_db = "..."
//   logs_dir = "/var/log/dsekp"      username = "edge"                max_skew = 300
//   store = "redis://10.0.0.5:6379/fleet1:"                           csv = true
//   log_format = "text"              log_level = "info"   (edge/logging/log_options.hpp)
//
// Reloaded on SIGHUP (reloadable_options.hpp): the table's `sighup` options and log_level. The
// rest needs a restart; a changed value is reported and ignored.
#pragma once

#include <string>

#include "edge/daemon/edge_daemon.hpp"

namespace dsekp::edge::daemon {

/// Reads `path` into `options` (only the keys it has) and `broker` (HOST:PORT, if it has one).
/// Throws std::runtime_error("PATH: ...") on a syntax error, an unknown key or a bad value.
void read_config_file(const std::string& path, EdgeDaemonOptions& options, std::string& broker);

}  // namespace dsekp::edge::daemon
