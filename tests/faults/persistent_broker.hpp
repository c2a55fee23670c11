// A Mosquitto broker that a fault test can kill and restart on the same loopback port, with
// persistence on (its own persistence folder), so that what the broker promises across a restart
// can be tested: the edge's persistent session and the messages queued for it survive a clean
// shutdown (SIGTERM saves the database) and whatever the last autosave held survives a SIGKILL.
// Each start logs to its own file (mosquitto-N.log) in the broker's folder.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "tests/support/child_process.hpp"

namespace dsekp::test {

struct PersistentBrokerOptions {
  /// Mosquitto's autosave_interval: seconds between saves, or (with autosave_on_changes) the
  /// number of changes to the in-memory database that triggers a save. 0: save only on shutdown.
  int autosave_interval = 1800;
  bool autosave_on_changes = false;
  std::string extra_lines;  // e.g. logins and ACLs
};

class PersistentBroker {
 public:
  /// Writes `dir`/mosquitto.conf (a free loopback port, chosen once and kept for every restart)
  /// and starts the broker. Throws with its log if it does not accept connections within 10 s.
  PersistentBroker(const std::string& dir, PersistentBrokerOptions options);
  ~PersistentBroker();
  PersistentBroker(const PersistentBroker&) = delete;
  PersistentBroker& operator=(const PersistentBroker&) = delete;

  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  /// Sends `sig` (SIGTERM: Mosquitto saves its database and exits; SIGKILL: it dies at once)
  /// and waits at most 10 s for the process to end. Returns its exit status (128 + signal).
  std::optional<int> kill(int sig);
  /// Starts the broker again on the same port and folder; returns once it accepts TCP
  /// connections (the listener may need a moment while the old socket's port is released).
  /// False, with the log kept, if it does not within `timeout`.
  bool restart(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  [[nodiscard]] bool running();
  /// Every start's log, in order.
  [[nodiscard]] std::string log() const;
  [[nodiscard]] std::string persistence_file() const { return dir_ + "/persist/mosquitto.db"; }

 private:
  bool start(std::chrono::milliseconds timeout);

  std::string dir_;
  int port_ = 0;
  int starts_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace dsekp::test
