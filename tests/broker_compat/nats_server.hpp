// A real NATS server (nats-server, with its MQTT listener) for one broker-compatibility test:
// JetStream on (NATS keeps MQTT sessions, QoS 1 messages and retained messages in it) with a
// store dir inside the test's temp dir, the MQTT and NATS listeners on loopback ports the server
// picks itself, stopped (and killed if need be) on destruction.
#pragma once

#include <memory>
#include <string>

#include "tests/support/child_process.hpp"

namespace dsekp::test {

class NatsServer {
 public:
  /// The nats-server binary found at configure time, or "" when it is not installed (the tests
  /// then skip).
  static std::string executable();
  /// "nats-server: v2.9.10" (what `nats-server --version` prints), or "" if it cannot be run.
  static std::string version(const std::string& scratch_dir);

  /// Writes `dir`/nats.conf (`extra_lines` go at the top level, e.g. `max_payload: 4096`),
  /// starts the server and waits until its MQTT listener accepts TCP connections. Throws with
  /// the server's log if it does not come up within 10 s.
  explicit NatsServer(const std::string& dir, const std::string& extra_lines = "");
  ~NatsServer();
  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;

  /// SIGTERM (NATS shuts down gracefully), then the same config, store dir and MQTT port again;
  /// waits as the constructor does. Throws if it does not come back.
  void restart();

  /// The MQTT port (loopback).
  [[nodiscard]] int mqtt_port() const noexcept { return mqtt_port_; }
  [[nodiscard]] std::string mqtt_address() const {
    return "127.0.0.1:" + std::to_string(mqtt_port_);
  }
  [[nodiscard]] std::string log() const;

 private:
  /// Starts the server from `dir_`/nats.conf; `port` 0 = the port from the log.
  void start(int port);

  std::string dir_;
  std::string extra_lines_;
  int mqtt_port_ = 0;
  int starts_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace dsekp::test
