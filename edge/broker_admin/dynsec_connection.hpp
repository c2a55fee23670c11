// A connection to Mosquitto's dynamic-security plugin as its admin: commands go to
// $CONTROL/dynamic-security/v1, answers come back on $CONTROL/dynamic-security/v1/response.
// Synchronous (it drives libmosquitto's loop itself, every wait bounded by the timeout), one
// request in flight, nothing left running when it is destroyed.
//
// The admin's password and the accounts' passwords travel in these messages, so the broker
// must be on this machine: open() refuses any host that is not a loopback address (there is no
// TLS here yet).
//
// Several admins may talk to the plugin at once and every admin receives every answer: an
// answer is taken as ours only when it carries our request's correlation data in each of its
// responses, one per command, in order.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "edge/registry/device_registry.hpp"
#include "edge/registry/registry_status.hpp"

struct mosquitto;

namespace dsekp::edge::broker_admin {

struct PluginEndpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 1883;
  BrokerAccount admin;
  std::chrono::milliseconds timeout{10000};  // per request
};

/// True for "localhost", 127.0.0.0/8 and ::1 (the only hosts open() accepts).
[[nodiscard]] bool is_loopback_host(const std::string& host);

class PluginConnection {
 public:
  static RegistryStatus open(const PluginEndpoint& endpoint,
                             std::unique_ptr<PluginConnection>& out);
  ~PluginConnection();
  PluginConnection(const PluginConnection&) = delete;
  PluginConnection& operator=(const PluginConnection&) = delete;

  /// Runs `commands` in order, as few messages as the broker's packet cap allows, and returns
  /// the plugin's response to each (an object with "command", and "error" or "data").
  RegistryStatus run(const std::vector<nlohmann::json>& commands,
                     std::vector<nlohmann::json>& responses);

 private:
  struct State;
  PluginConnection(const PluginEndpoint& endpoint, std::unique_ptr<State> state);
  RegistryStatus run_one_message(const std::vector<nlohmann::json>& commands,
                                 std::vector<nlohmann::json>& responses);
  template <typename Done>
  RegistryStatus pump(Done done, const char* waiting_for);

  PluginEndpoint endpoint_;
  std::unique_ptr<State> state_;
};

}  // namespace dsekp::edge::broker_admin
