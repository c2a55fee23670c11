// `dsekp edge --config FILE`: the daemon's options from a TOML file (toml++). Every key is one
// of the flags, spelled with underscores; command-line flags override the file. An unknown key,
// a value of the wrong type or out of range is an error that names the file and the key.
//
//   broker = "127.0.0.1:1883"        db = "/var/lib/dsekp/edge.db"    state_db = "..."
//   logs_dir = "/var/log/dsekp"      username = "edge"                password = "..."
//   client_id = "dsekp-edge"         metrics = "127.0.0.1:9464"       prefix = "site1/"
//   max_skew = 300                   ready_file = "/run/dsekp/ready"  init_burst = 8
//   init_refill_ms = 30000           replay_window = 64               csv = true
//   republish = true                 republish_topic = "home/dsekp"   republish_retain = true
//   device_offline_after = 300       home_assistant = true            downlink_queue_ttl = 3600
//   rejection_lines_per_second = 5   batch_max = 256
//   batch_time_ms = 10               store = "redis://10.0.0.5:6379/fleet1:"
//   shared_group = "edges"           session_cache_devices = 65536
//   log_format = "text"              log_level = "info"   (edge/logging/log_options.hpp)
//
// Reloaded on SIGHUP (edge_daemon.hpp): max_skew, init_burst, init_refill_ms, replay_window (for
// sessions established from then on), rejection_lines_per_second and log_level. The rest needs a
// restart; a changed value is reported and ignored.
#pragma once

#include <string>

#include "edge/daemon/edge_daemon.hpp"

namespace dsekp::edge::daemon {

/// Reads `path` into `options` (only the keys it has) and `broker` (HOST:PORT, if it has one).
/// Throws std::runtime_error("PATH: ...") on a syntax error, an unknown key or a bad value.
void read_config_file(const std::string& path, EdgeDaemonOptions& options, std::string& broker);

}  // namespace dsekp::edge::daemon
