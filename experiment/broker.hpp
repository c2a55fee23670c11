// The experiment's private Mosquitto: its configuration file (a loopback listener on a free port,
// the registry's password file and ACL, anonymous logins refused, no persistence, a deep queue
// for the edge's persistent session, a log file in the results folder) and starting it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "net.hpp"
#include "process.hpp"

namespace dsekp::experiment {

struct MosquittoSettings {
  std::uint16_t port = 0;
  std::string password_file;  // absolute paths (from dsekp keys broker-config)
  std::string acl_file;
  std::string log_file;
  std::string user;  // the account Mosquitto keeps when started as root (it can read 0600 files)
  /// Messages queued per client beyond the in-flight window. Mosquitto's default (1000) would
  /// drop frames for the edge if it fell behind a burst; the experiment must not lose frames in
  /// the broker, so the queue is effectively unbounded (memory is the limit).
  std::uint64_t max_queued_messages = 10'000'000;
};

/// The mosquitto.conf text for `settings`.
[[nodiscard]] std::string mosquitto_conf(const MosquittoSettings& settings);

/// The mosquitto executable: /usr/sbin/mosquitto, /usr/local/sbin/mosquitto, or one on PATH.
/// Throws with a hint (make deps) when there is none.
std::string find_mosquitto();

/// The current user's name (Mosquitto's `user` option).
std::string current_user_name();

/// "mosquitto version 2.0.11" (the first line of `mosquitto -h`), or "unknown".
std::string mosquitto_version(const std::string& mosquitto, const std::string& scratch_file);

struct StartedBroker {
  Child* child = nullptr;
  HostPort address;
  std::string conf_file;
};

/// Writes `conf_file` (settings.port is chosen here) and starts Mosquitto, retrying on another
/// port if the first was taken meanwhile; returns once it accepts TCP connections. Throws with the
/// tail of its log if it does not come up within `timeout`; throws Interrupted on a signal.
StartedBroker start_mosquitto(ChildSet& children, const std::string& mosquitto,
                              MosquittoSettings settings, const std::string& conf_file,
                              const std::string& output_file,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace dsekp::experiment
