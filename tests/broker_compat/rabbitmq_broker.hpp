// A private RabbitMQ node with its MQTT plugin for the broker-compatibility tests: its own epmd
// (a child process on a free loopback port, so no system-wide epmd is started or left behind),
// its own node name, Mnesia and log dirs in the given dir, the MQTT listener on a free loopback
// port and no AMQP listener. Stopped on destruction (SIGTERM, then SIGKILL for what is left).
// RabbitMQ takes seconds to start (about 20 s on this loaded machine), so a suite shares one.
#pragma once

#include <memory>
#include <string>

#include "tests/support/child_process.hpp"

namespace dsekp::test {

class RabbitMqBroker {
 public:
  /// The rabbitmq-server script found at configure time, or "" (the tests then skip).
  static std::string executable();

  /// Starts the node and waits (at most 90 s) until its MQTT listener accepts connections;
  /// throws with its log otherwise.
  explicit RabbitMqBroker(const std::string& dir);
  ~RabbitMqBroker();
  RabbitMqBroker(const RabbitMqBroker&) = delete;
  RabbitMqBroker& operator=(const RabbitMqBroker&) = delete;

  [[nodiscard]] int mqtt_port() const noexcept { return mqtt_port_; }
  [[nodiscard]] std::string log() const;

 private:
  void stop();

  std::string dir_;
  std::string node_;
  int mqtt_port_ = 0;
  std::unique_ptr<ChildProcess> epmd_;
  std::unique_ptr<ChildProcess> server_;
};

}  // namespace dsekp::test
